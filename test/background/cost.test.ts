/**
 * Cost accounting: every turn's tokens and USD in the usage ledger, /cost and GET /v1/usage, and a daily budget
 * that stops autonomous turns (never user turns) and says why.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgentRuntime, createApp, createToolRegistry, priceFor, silentLogger, usageCostUsd } from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';
import { afterAll, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('cost', () => {
  it('prices usage by the table (cache reads at their rate) and matches model ids by prefix', () => {
    const price = priceFor('anthropic:claude-sonnet-4-5-20250929')!;
    expect(price).toMatchObject({ inputPerMTok: 3, outputPerMTok: 15 });
    // 1,000 input of which 800 cached: 200 × $3 + 800 × $0.30 + 200 output × $15, per million.
    expect(usageCostUsd({ inputTokens: 1000, outputTokens: 200, cacheReadTokens: 800, cacheWriteTokens: 0 }, price)).toBeCloseTo(0.00384, 8);
    expect(priceFor('gpt-4.1-mini-2025')).toMatchObject({ inputPerMTok: 0.4 });
    expect(priceFor('some-local-model')).toBeUndefined();
    expect(() => usageCostUsd({ inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, { inputPerMTok: -1, outputPerMTok: 1 })).toThrow(/price.inputPerMTok/);
  });

  it('a delegated sub-agent turn is costed once, in its parent turn\'s ledger entry', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-cost-sub-'));
    dirs.push(dir);
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'delegate', input: { task: 'Say hi', toolSets: ['memory'] } }] },
      { text: 'hi' },
      { text: 'The helper said hi.' },
    ], { modelId: 'priced-model' });
    const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, model, finance: false, mcp: false, web: false, config: { dataDir: dir }, prices: { 'priced-model': { inputPerMTok: 1, outputPerMTok: 1 } } });
    try {
      const r = await recordEvents(app.runtime.run({ sessionId: 'p1', message: 'ask a helper' }));
      const end = r.ofType('turn-end')[0]!;
      expect(end.delegatedUsage?.inputTokens).toBeGreaterThan(0);
      const totals = await app.storage.usage.totals({ day: new Date().toISOString().slice(0, 10) });
      expect(totals.turns).toBe(1);
      expect(totals.inputTokens).toBe(end.usage.inputTokens);
      expect((await app.storage.usage.totals({ day: new Date().toISOString().slice(0, 10), sources: ['subagent'] })).turns).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('records every turn; a spent daily budget skips the next heartbeat with the reason, while user turns go on', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-cost-'));
    dirs.push(dir);
    let t = Date.parse('2026-03-02T00:00:00.000Z');
    const model = createScriptedModel([{ text: 'Checked: all fine but noteworthy.' }, { text: 'User answer.' }, { text: 'never' }], { modelId: 'priced-model' });
    const app = await createApp({
      envFileDir: false, env: {}, logger: silentLogger, model, finance: false, config: { dataDir: dir }, now: () => new Date(t),
      prices: { 'priced-model': { inputPerMTok: 1_000, outputPerMTok: 1_000 } },
      dailyBudgetUsd: 0.01,
    });
    try {
      writeFileSync(path.join(app.workspace!.dir, 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- watch BTC\n');
      const step = async () => {
        t += 30 * 60_000;
        await app.background.tick();
        await app.background.idle();
      };
      await step();
      const spent = await app.storage.usage.totals({ day: '2026-03-02', sources: ['heartbeat'] });
      expect(spent.turns).toBe(1);
      expect(spent.costUsd).toBeGreaterThan(0.01);
      await step();
      const [latest] = await app.background.runs({ jobId: 'heartbeat', limit: 1 });
      expect(latest).toMatchObject({ outcome: 'skipped', detail: expect.stringMatching(/^daily budget spent: \$[\d.]+ of \$0\.01 on autonomous turns today/) });
      expect(model.calls).toHaveLength(1);
      // A user turn is not stopped by the budget.
      const user = await recordEvents(app.runtime.run({ sessionId: 'u1', message: 'hi' }));
      expect(user.ofType('turn-end')[0]).toMatchObject({ stopReason: 'finished', modelId: 'priced-model' });
      const { formatCost } = await import('../../cli/slash-commands');
      expect(await formatCost(app, 'u1')).toMatch(/this session\s+1 turns/);
      const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, logger: silentLogger });
      const usage = (await (await gateway.fetch(new Request('http://127.0.0.1/v1/usage?day=2026-03-02&session=u1'))).json()) as { today: { turns: number }; autonomous: { turns: number }; session: { turns: number } };
      expect(usage).toMatchObject({ today: { turns: 2 }, autonomous: { turns: 1 }, session: { turns: 1 } });
      expect((await gateway.fetch(new Request('http://127.0.0.1/v1/usage?day=soon'))).status).toBe(400);
    } finally {
      await app.close();
    }
  });

  it('a runtime wired by hand records usage too: GET /v1/usage counts its turns (recordUsage: false opts out)', async () => {
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ storage });
    const model = createScriptedModel([{ text: 'one', usage: { inputTokens: 1_000, outputTokens: 100 } }, { text: 'two', usage: { inputTokens: 500, outputTokens: 50 } }], { modelId: 'gpt-4.1-mini' });
    const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger, prices: { 'gpt-4.1-mini': { inputPerMTok: 1_000, outputPerMTok: 1_000 } } });
    await runtime.generate({ sessionId: 's1', message: 'hi' });
    const gateway = createGateway({ runtime, storage, tools, logger: silentLogger });
    const usage = (await (await gateway.fetch(new Request('http://127.0.0.1/v1/usage?session=s1'))).json()) as { today: { turns: number; inputTokens: number; costUsd: number }; session: { turns: number } };
    expect(usage.today).toMatchObject({ turns: 1, inputTokens: 1_000 });
    expect(usage.today.costUsd).toBeCloseTo(1.1, 6); // the host's price table, over the defaults
    expect(usage.session.turns).toBe(1);

    const quiet = createAgentRuntime({ model, tools, storage, logger: silentLogger, recordUsage: false });
    await quiet.generate({ sessionId: 's2', message: 'hi' });
    expect((await storage.usage.totals({})).turns).toBe(1);
    model.assertConsumed();
  });
});
