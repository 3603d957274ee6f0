import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createScriptedModel, type ScriptedCall } from '@minara/agent/testing';
import { createAgentStrategy } from '@minara/agent/backtest';
import { dailyBars, driveStrategy } from './mini-driver';

const promptText = (call: ScriptedCall) => JSON.stringify(call.prompt);

describe('createAgentStrategy', () => {
  it('drives the real runtime at each scheduled bar with the simulated date; a buy becomes an intent filled at the next open', async () => {
    const bars = dailyBars(['BTC'], 6);
    const model = createScriptedModel([
      // decision 1 (bar 0): look at the price, buy $1,000 (approval asked, the simulated person approves)
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 1000, confirm: true, intent: 'buy BTC 1000 USD' } }] },
      { text: 'Bought.' },
      // decision 2 (bar 3): hold
      { text: 'Holding.' },
    ], { modelId: 'claude-sonnet-4-5' });
    const strategy = createAgentStrategy({ model, prompt: 'Decide whether to buy or sell BTC.', schedule: { kind: 'every-n-bars', n: 3 }, limits: { maxTradeUsd: 2000 } });
    const result = await driveStrategy(strategy, bars);
    model.assertConsumed();
    expect(strategy.decisions.map((d) => d.time.slice(0, 10))).toEqual(['2021-01-05', '2021-01-08']);
    expect(promptText(model.calls[0]!)).toContain('Today is 2021-01-05 00:00 UTC');
    expect(promptText(model.calls[3]!)).toContain('Today is 2021-01-08 00:00 UTC');
    // The price the agent saw is the close of the decision bar, never a later one.
    expect(strategy.decisions[0]!.saw[0]).toMatchObject({ tool: 'get_price', ok: true, output: { priceUsd: bars[0]!.close } });
    expect(strategy.decisions[0]!.gate).toEqual([expect.objectContaining({ tool: 'buy_token', decision: 'approved' })]);
    expect(strategy.decisions[0]!.intents).toEqual([expect.objectContaining({ symbol: 'BTC', side: 'buy', notionalUsd: 1000 })]);
    expect(result.fills).toEqual([expect.objectContaining({ symbol: 'BTC', side: 'buy', price: bars[1]!.open, time: bars[1]!.time })]);
    // The second decision sees the position the engine filled.
    const report = await strategy.report!();
    expect(report.extraFiles!['llm_costs.csv']!.split('\n')[0]).toBe('decision,time,model,input_tokens,output_tokens,cached_read_tokens,cache_write_tokens,cost_usd');
    expect(report.extraFiles!['llm_costs.csv']!.trim().split('\n')).toHaveLength(3);
    expect(report.metrics!.decisions).toBe(2);
    expect(typeof report.metrics!.llmCostUsd).toBe('number');
    expect(report.metrics!.llmCostUsd).toBeGreaterThan(0);
  });

  it('a deny policy denies every order, never silently: counted by rule with the P&L it would have made', async () => {
    const bars = dailyBars(['BTC'], 5);
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 500, confirm: true, intent: 'buy BTC 500 USD' } }] },
      { text: 'Asked.' },
      { text: 'Understood, denied.' },
    ]);
    const strategy = createAgentStrategy({ model, prompt: 'Buy BTC.', schedule: { kind: 'every-n-bars', n: 10 }, approvals: { mode: 'deny' } });
    const result = await driveStrategy(strategy, bars);
    expect(result.fills).toEqual([]);
    const report = await strategy.report!();
    expect(report.metrics!['agentBlocked.approval-denied']).toBe(1);
    const expected = (500 / bars[1]!.open) * (bars[0]!.close - bars[1]!.open);
    expect(strategy.blocked[0]!.wouldHavePnlUsd).toBeNull(); // the last view is the decision bar: no later bar was seen
    expect(Number.isFinite(expected)).toBe(true);
    expect(report.config!.agent).toMatchObject({ approvals: { mode: 'deny' } });
  });

  it('the gate blocks an order over the limits; the block is counted under the limit it broke', async () => {
    const bars = dailyBars(['BTC'], 4);
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 5000, confirm: true, intent: 'buy BTC 5000 USD' } }] },
      { text: 'Blocked, fine.' },
      { text: 'Nothing to do.' },
    ]);
    const strategy = createAgentStrategy({ model, prompt: 'Buy BTC.', schedule: { kind: 'every-n-bars', n: 2 }, limits: { maxTradeUsd: 1000 } });
    await driveStrategy(strategy, bars);
    expect(strategy.decisions[0]!.gate).toEqual([expect.objectContaining({ decision: 'blocked', rule: 'maxTradeUsd' })]);
    const report = await strategy.report!();
    expect(report.metrics!['agentBlocked.maxTradeUsd']).toBe(1);
    // Filled at the open after the decision (bar 1), marked at the last close the run saw (bar 2).
    expect(strategy.blocked[0]!.wouldHavePnlUsd).toBeCloseTo((5000 / bars[1]!.open) * (bars[2]!.close - bars[1]!.open), 6);
  });

  it('tools that cannot answer from the simulated clock are off, each with its reason; a host tool must be declared point in time', async () => {
    const model = createScriptedModel([{ text: 'ok' }]);
    const strategy = createAgentStrategy({ model, prompt: 'Look.', schedule: { kind: 'every-n-bars', n: 100 } });
    await driveStrategy(strategy, dailyBars(['BTC'], 2));
    const names = strategy.disabled.map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(['web_search', 'web_fetch', 'run_code', 'mcp', 'get_trending', 'transfer_token', 'open_perps_position', 'delegate']));
    expect(strategy.disabled.find((d) => d.name === 'web_search')!.reason).toMatch(/simulated date/);
    const tools = (model.calls[0]!.tools ?? []).map((t) => t.name);
    expect(tools).not.toContain('transfer_token');
    expect(tools).not.toContain('web_search');
    expect(tools).toContain('get_price');
  });

  it('a budget cap ends the decisions cleanly with partial results, saying when', async () => {
    const model = createScriptedModel([{ text: 'one', usage: { inputTokens: 400_000, outputTokens: 1000 } }], { modelId: 'claude-sonnet-4-5' });
    const strategy = createAgentStrategy({ model, prompt: 'Decide.', budgetUsd: 1 });
    await driveStrategy(strategy, dailyBars(['BTC'], 4));
    expect(strategy.decisions).toHaveLength(1);
    expect(strategy.stopped).toEqual({ reason: 'budget', at: strategy.decisions[0]!.time });
    expect((await strategy.report!()).metrics!.stoppedEarly).toContain('budget');
  });

  it('an unknown model is "unpriced", never $0', async () => {
    const model = createScriptedModel([{ text: 'x' }], { modelId: 'my-local-model' });
    const strategy = createAgentStrategy({ model, prompt: 'Decide.', schedule: { kind: 'every-n-bars', n: 9 } });
    await driveStrategy(strategy, dailyBars(['BTC'], 2));
    const report = await strategy.report!();
    expect(report.metrics!.llmCostUsd).toBe('unpriced');
    expect(report.extraFiles!['llm_costs.csv']).toMatch(/,unpriced\n$/);
  });

  it('the user\'s ## Schedule decides on the simulated clock, its instruction in the prompt', async () => {
    const model = createScriptedModel([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]);
    const strategy = createAgentStrategy({ model, prompt: 'Act.', schedule: { kind: 'heartbeat', section: '- every 3d: rebalance BTC' } });
    await driveStrategy(strategy, dailyBars(['BTC'], 8));
    const times = strategy.decisions.map((d) => Date.parse(d.time));
    // The first bar decides; then once per 3-day period of the simulated clock.
    expect(times.length).toBe(1 + new Set(times.slice(1).map((t) => Math.floor(t / (3 * 86_400_000)))).size);
    for (let i = 2; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(3 * 86_400_000);
    expect(promptText(model.calls[0]!)).toContain('Scheduled: rebalance BTC');
  });

  it('bad options name the field', () => {
    const model = createScriptedModel([]);
    expect(() => createAgentStrategy({ model, prompt: '' })).toThrow(/prompt/);
    expect(() => createAgentStrategy({ model: 'anthropic:x' as never, prompt: 'x' })).toThrow(/model/);
    expect(() => createAgentStrategy({ model, prompt: 'x', schedule: { kind: 'every-n-bars', n: 0 } })).toThrow(/schedule.n/);
    expect(() => createAgentStrategy({ model, prompt: 'x', approvals: { mode: 'yes' } as never })).toThrow(/approvals.mode/);
    expect(() => createAgentStrategy({ model, prompt: 'x', budgetUsd: -1 })).toThrow(/budgetUsd/);
    expect(() => createAgentStrategy({ model, prompt: 'x', workspace: false, history: [{ kind: 'daily-log', at: 0, summary: 's' }] })).toThrow(/history\[0\] is a daily-log/);
  });
});

describe('without the workspace', () => {
  it('runs the decision with workspace: false', async () => {
    const model = createScriptedModel([{ text: 'ok' }]);
    const strategy = createAgentStrategy({ model, prompt: 'Decide.', workspace: false, schedule: { kind: 'every-n-bars', n: 9 } });
    await driveStrategy(strategy, dailyBars(['BTC'], 2));
    expect(strategy.decisions[0]!.said).toBe('ok');
  });
});

describe('budget on an unpriced model', () => {
  it('stops after the first decision rather than spend blind', async () => {
    const model = createScriptedModel([{ text: 'x' }], { modelId: 'my-local-model' });
    const strategy = createAgentStrategy({ model, prompt: 'Decide.', budgetUsd: 5 });
    await driveStrategy(strategy, dailyBars(['BTC'], 3));
    expect(strategy.decisions).toHaveLength(1);
    expect(strategy.stopped?.reason).toBe('budget-unpriced');
  });
});

describe('the run scratch directory', () => {
  it('is a fresh directory (in memory when /dev/shm is there) holding the seeded workspace, removed with everything it created when the run ends', async () => {
    const token = `scratch-probe-${Math.random().toString(36).slice(2)}`;
    const roots = [tmpdir(), '/dev/shm'].filter((r) => existsSync(r));
    let ours: string | undefined;
    const heartbeats: boolean[] = [];
    const find = () => {
      for (const root of roots) {
        for (const name of readdirSync(root).filter((n) => n.startsWith('minara-agent-bt-') && !n.endsWith('.approval-key'))) {
          const user = path.join(root, name, 'workspace', 'USER.md');
          if (existsSync(user) && readFileSync(user, 'utf8').includes(token)) return path.join(root, name);
        }
      }
      return undefined;
    };
    const strategy = createAgentStrategy({
      model: createScriptedModel([{ text: 'One.' }, { text: 'Two.' }]),
      prompt: 'Decide.',
      history: [{ kind: 'workspace-file', at: Date.UTC(2021, 0, 1), name: 'USER.md', content: `# User\n${token}\n` }],
      onDecision: (d) => {
        ours ??= find();
        if (ours) heartbeats.push(readFileSync(path.join(ours, 'workspace', 'HEARTBEAT.md'), 'utf8').includes(`backtest-${d.decision}`));
      },
    });
    await driveStrategy(strategy, dailyBars(['BTC'], 2));
    expect(ours).toBeDefined();
    if (existsSync('/dev/shm')) expect(path.dirname(ours!)).toBe('/dev/shm');
    // The exclusive workspace still writes the heartbeat (naming the decision's session) to disk at every decision.
    expect(heartbeats).toEqual([true, true]);
    expect(existsSync(ours!)).toBe(false);
    // No approval key was written beside it (the run's key stays in memory).
    expect(existsSync(`${ours!}.approval-key`)).toBe(false);
  });
});
