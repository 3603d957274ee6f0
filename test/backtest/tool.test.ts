import { describe, expect, it } from 'vitest';
import { createArtifactStore, createToolCallContext, createToolRegistry, PermissionTier } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { BACKTEST_REPORT_TITLE_PREFIX, createBacktestTools } from '@minara/agent/backtest';

describe('run_backtest (agent tool)', () => {
  it('is READ_ONLY, runs on synthetic bars and saves a report and an equity chart for the caller', async () => {
    const storage = createInMemoryStorage();
    const artifacts = createArtifactStore({ storage });
    const tools = createBacktestTools({ artifacts });
    expect(tools.map((t) => [t.name, t.permissionTier])).toEqual([['run_backtest', PermissionTier.READ_ONLY]]);
    // No path, file or data field: the tool cannot be pointed at the filesystem or an account.
    expect(Object.keys((tools[0]!.inputSchema as unknown as { shape: Record<string, unknown> }).shape).sort()).toEqual(['bars', 'fast', 'feeBps', 'lookback', 'regime', 'seed', 'slippageBps', 'slow', 'strategy', 'symbols']);
    const registry = createToolRegistry({ storage, tools });
    const context = createToolCallContext({ sessionId: 's1', userId: 'u1' });
    const P = (r: unknown) => (typeof r === 'string' ? JSON.parse(r) : r) as { ok: boolean; data?: unknown };
    const out = P(await registry.dispatch('run_backtest', { strategy: 'sma-cross', regime: 'crash', bars: 400, fast: 5, slow: 20 }, { context }));
    expect(out.ok).toBe(true);
    const data = (out as { data: { report: string; chart: string; simulated: boolean; baselines: Record<string, unknown> } }).data;
    expect(data.simulated).toBe(true);
    expect(Object.keys(data.baselines)).toEqual(['buy-and-hold', 'random']);
    const report = await artifacts.get({ userId: 'u1' }, data.report);
    expect(report.title?.startsWith(BACKTEST_REPORT_TITLE_PREFIX)).toBe(true);
    expect(report.kind === 'report' && report.data?.markdown).toMatch(/\| Sharpe \|/);
    expect((await artifacts.get({ userId: 'u1' }, data.chart)).kind).toBe('chart');
    await expect(artifacts.get({ userId: 'u2' }, data.report)).rejects.toThrow(); // another user's
    const bad = P(await registry.dispatch('run_backtest', { strategy: 'agent', bars: 10 }, { context }));
    expect(bad.ok).toBe(false);
  });
});
