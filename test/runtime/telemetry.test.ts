/**
 * OpenTelemetry: with a tracer provider registered (the SDK's in-memory exporter here), a turn, its tool
 * dispatches and background job runs are spans, nested, with ids, tiers and decisions but never inputs.
 */
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { createAgentRuntime, createBackgroundRunner, createToolRegistry, defineTool, PermissionTier, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exporter = new InMemorySpanExporter();
const manager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(manager.enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
});
afterAll(() => {
  trace.disable();
  context.disable();
});

describe('OpenTelemetry spans', () => {
  it('a turn is a minara.turn span with its tool dispatches nested as minara.tool spans; no input is recorded', async () => {
    exporter.reset();
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({
      storage,
      tools: [defineTool({ name: 'get_price', toolSet: 'read', description: 'Price', permissionTier: PermissionTier.READ_ONLY, inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: 1 }) })],
    });
    const runtime = createAgentRuntime({ model: createScriptedModel([{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'SECRET-SYMBOL' } }] }, { text: 'ok' }], { modelId: 'm-1' }), tools, storage, logger: silentLogger });
    await recordEvents(runtime.run({ sessionId: 'otel-1', message: 'my key is sk-not-for-traces' }));
    const spans = exporter.getFinishedSpans();
    const turn = spans.find((s) => s.name === 'minara.turn')!;
    const tool = spans.find((s) => s.name === 'minara.tool')!;
    expect(turn.attributes).toMatchObject({ 'minara.session.id': 'otel-1', 'minara.turn.source': 'user', 'minara.turn.stop_reason': 'finished', 'minara.turn.steps': 2, 'gen_ai.response.model': 'm-1' });
    expect(tool.attributes).toMatchObject({ 'minara.tool.name': 'get_price', 'minara.tool.tier': 1, 'minara.tool.decision': 'allowed', 'minara.tool.mode': 'execute' });
    expect(tool.spanContext().traceId).toBe(turn.spanContext().traceId);
    const everything = JSON.stringify(spans.map((s) => s.attributes));
    expect(everything).not.toContain('SECRET-SYMBOL');
    expect(everything).not.toContain('sk-not-for-traces');
  });

  it('a background job run is a minara.job span', async () => {
    exporter.reset();
    let t = Date.parse('2026-03-02T00:00:00.000Z');
    const runner = createBackgroundRunner({ storage: createInMemoryStorage(), now: () => new Date(t), jobs: [{ id: 'purge', description: 'p', every: 60_000, run: () => 'purged 1' }] });
    t += 60_000;
    await runner.tick();
    await runner.idle();
    expect(exporter.getFinishedSpans().find((s) => s.name === 'minara.job')?.attributes).toMatchObject({ 'minara.job.id': 'purge', 'minara.job.slot': '2026-03-02T00:01:00.000Z', 'minara.job.attempt': 1, 'minara.job.outcome': 'ok' });
  });
});
