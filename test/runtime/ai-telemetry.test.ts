/**
 * The AI SDK's telemetry in a turn: the runtime turns it off for a model call only when nothing can receive its
 * events (no integration registered with `registerTelemetry`, no subscriber on its tracing channel, no `telemetry`
 * option), and checks at every call, so whoever listens, from whenever they start, gets the SDK's events as a plain
 * `streamText` would give them.
 */
import { tracingChannel } from 'node:diagnostics_channel';
import { AI_SDK_TELEMETRY_TRACING_CHANNEL, registerTelemetry, type TelemetryOptions } from 'ai';
import { z } from 'zod';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { turnTelemetry } from '../../src/runtime/ai-telemetry';

/** The AI SDK's global list `registerTelemetry` appends to; the SDK has no way to unregister, so tests empty it. */
const globals = globalThis as { AI_SDK_TELEMETRY_INTEGRATIONS?: unknown[] };
afterEach(() => {
  delete globals.AI_SDK_TELEMETRY_INTEGRATIONS;
});

function runtimeWith(telemetry?: TelemetryOptions) {
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({
    storage,
    tools: [defineTool({ name: 'get_price', toolSet: 'read', description: 'Price', permissionTier: PermissionTier.READ_ONLY, inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: 1 }) })],
  });
  const model = createScriptedModel([]);
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger, ...(telemetry ? { telemetry } : {}) });
  const turn = async (sessionId: string) => {
    model.push({ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { text: 'BTC is 1.' });
    const { types } = await recordEvents(runtime.run({ sessionId, message: 'price of BTC?' }));
    expect(types.filter((t) => t === 'tool-result')).toHaveLength(1);
    expect(types.at(-1)).toBe('turn-end');
  };
  return { turn };
}

/** Tracing-channel subscribers: `start` as given, the other four doing nothing. */
function subscribers(start: (message: unknown) => void) {
  const none = () => {};
  return { start, end: none, asyncStart: none, asyncEnd: none, error: none };
}

/** What an integration saw: the name of each callback, in order. */
function recordingIntegration() {
  const seen: string[] = [];
  const on = (name: string) => () => {
    seen.push(name);
  };
  return { seen, integration: { onStart: on('start'), onStepStart: on('step-start'), onToolExecutionEnd: on('tool-end'), onStepEnd: on('step-end'), onEnd: on('end') } };
}

describe("a turn's model calls and the AI SDK's telemetry", () => {
  it('an integration registered with registerTelemetry gets every step and tool call of a turn', async () => {
    const { seen, integration } = recordingIntegration();
    registerTelemetry(integration);
    await runtimeWith().turn('tel-registered');
    expect(seen.filter((s) => s === 'start')).toHaveLength(1);
    expect(seen.filter((s) => s === 'step-start')).toHaveLength(2);
    expect(seen.filter((s) => s === 'step-end')).toHaveLength(2);
    expect(seen).toContain('tool-end');
    expect(seen.at(-1)).toBe('end');
  });

  it('a subscriber on the tracing channel gets the turn, its steps and its tool call; one that starts between turns gets the next turn', async () => {
    const { turn } = runtimeWith();
    const types: string[] = [];
    const subscriber = subscribers((message) => void types.push((message as { type: string }).type));
    await turn('tel-before');
    expect(types).toEqual([]);
    const channel = tracingChannel(AI_SDK_TELEMETRY_TRACING_CHANNEL);
    channel.subscribe(subscriber);
    try {
      await turn('tel-after');
    } finally {
      channel.unsubscribe(subscriber);
    }
    expect(types).toContain('streamText');
    expect(types.filter((t) => t === 'step')).toHaveLength(2);
    expect(types).toContain('executeTool');
  });

  it("the host's own telemetry option is passed as given: its per-call integration gets the turn, and isEnabled: false is kept", async () => {
    const { seen, integration } = recordingIntegration();
    await runtimeWith({ integrations: [integration], functionId: 'host-fn' }).turn('tel-host');
    expect(seen.filter((s) => s === 'step-end')).toHaveLength(2);
    const off = recordingIntegration();
    registerTelemetry(off.integration);
    await runtimeWith({ isEnabled: false }).turn('tel-host-off');
    expect(off.seen).toEqual([]);
  });
});

describe('turnTelemetry (the per-call decision)', () => {
  it('off only when nothing can listen; the SDK default when an integration or a subscriber can; the host settings untouched', () => {
    const name = AI_SDK_TELEMETRY_TRACING_CHANNEL;
    expect(turnTelemetry(undefined, name)).toEqual({ isEnabled: false });
    const host: TelemetryOptions = { functionId: 'mine' };
    expect(turnTelemetry(host, name)).toBe(host);
    registerTelemetry({ onStart: () => {} });
    expect(turnTelemetry(undefined, name)).toBeUndefined();
    delete globals.AI_SDK_TELEMETRY_INTEGRATIONS;
    const channel = tracingChannel(name);
    const subscriber = subscribers(() => {});
    channel.subscribe(subscriber);
    try {
      expect(turnTelemetry(undefined, name)).toBeUndefined();
    } finally {
      channel.unsubscribe(subscriber);
    }
    expect(turnTelemetry(undefined, name)).toEqual({ isEnabled: false });
  });

  it('keeps the SDK default when the SDK release names no tracing channel (nothing tells whether one listens)', () => {
    expect(turnTelemetry(undefined, undefined)).toBeUndefined();
    const host: TelemetryOptions = { isEnabled: true };
    expect(turnTelemetry(host, undefined)).toBe(host);
  });
});
