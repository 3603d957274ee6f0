import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateBars, writeBacktestReport } from '@minara/agent/backtest';
import { createScriptedModel } from '@minara/agent/testing';
import { agentBars, agentScript } from './run-fixture';
import { createCassetteModel, runAgentBacktest, anonymiseBarSet, metricSpread, welchInterval } from '@minara/agent/backtest';

const FIXTURE = path.join(import.meta.dirname, '..', '..', 'fixtures', 'backtest', 'agent-sma.cassette.json');
const tmp = () => mkdtempSync(path.join(tmpdir(), 'agent-bt-'));

const agentOptions = { prompt: 'Review BTC and decide.', schedule: { kind: 'every-n-bars' as const, n: 10 }, limits: { maxTradeUsd: 5000 } };

// Re-record the committed cassette after a change to the system prompt or the tools (a replay then fails with
// CASSETTE_MISS and a diff): RECORD_AGENT_CASSETTE=1 npx vitest run test/backtest/agent/run.test.ts
if (process.env.RECORD_AGENT_CASSETTE === '1') {
  const recorder = createCassetteModel({ model: createScriptedModel(agentScript(), { modelId: 'claude-sonnet-4-5' }), mode: 'record', cassette: FIXTURE });
  await runAgentBacktest({ bars: agentBars(), agent: { ...agentOptions, model: recorder }, temperature: 0 });
  recorder.save();
}

describe('runAgentBacktest', () => {
  it('runs the agent through the engine; the report folder carries the agent files; replays from a cassette are byte-identical', async () => {
    const dir = tmp();
    const cassette = path.join(dir, 'agent.cassette.json');
    const recorder = createCassetteModel({ model: createScriptedModel(agentScript(), { modelId: 'claude-sonnet-4-5' }), mode: 'record', cassette });
    const recorded = await runAgentBacktest({ bars: agentBars(), agent: { ...agentOptions, model: recorder }, temperature: 0 });
    recorder.save();
    expect(recorded.strategies[0]!.decisions).toHaveLength(4);
    expect(recorded.result.strategy.fills.map((f) => f.side)).toEqual(['buy', 'sell']);
    const a = await writeBacktestReport(recorded.result, path.join(dir, 'a'), { png: false });
    const html = readFileSync(path.join(dir, 'a', 'agent_decisions.html'), 'utf8');
    expect(html).toContain('training cutoff <b>2025-07-01</b>');
    expect(html).toContain('Bought BTC.');
    expect(html).toContain('buy_token: approved');
    expect(html).not.toMatch(/<script|https?:\/\//);
    for (const f of ['llm_costs.csv', 'decisions.jsonl', 'agent_blocked_orders.csv', 'epochs.json', 'metrics.json', 'run_config.json']) expect(existsSync(path.join(a.dir ?? path.join(dir, 'a'), f)), f).toBe(true);

    const replay = async (sub: string) => {
      const model = createCassetteModel({ cassette });
      const run = await runAgentBacktest({ bars: agentBars(), agent: { ...agentOptions, model }, temperature: 0 });
      expect(model.stats.recorded).toBe(0);
      await writeBacktestReport(run.result, path.join(dir, sub), { png: false });
      return readFileSync(path.join(dir, sub, 'metrics.json'), 'utf8');
    };
    const m1 = await replay('r1');
    const m2 = await replay('r2');
    expect(m1).toBe(m2);
    expect(m1).toBe(readFileSync(path.join(dir, 'a', 'metrics.json'), 'utf8'));
    expect(readFileSync(path.join(dir, 'r1', 'decisions.jsonl'), 'utf8')).toBe(readFileSync(path.join(dir, 'r2', 'decisions.jsonl'), 'utf8'));
    const metrics = JSON.parse(m1) as { strategyMetrics: Record<string, unknown> };
    expect(metrics.strategyMetrics).toMatchObject({ decisions: 4, epochs: 1, trainingCutoff: '2025-07-01', contaminationOverlap: 'yes' });
  });

  it("the agent is not told to onboard anyone: the scratch workspace's first-run BOOTSTRAP.md never reaches a decision's prompt", async () => {
    const model = createScriptedModel(agentScript(), { modelId: 'claude-sonnet-4-5' });
    await runAgentBacktest({ bars: agentBars(), agent: { ...agentOptions, model }, temperature: 0 });
    const systems = model.calls.map((c) => c.prompt.filter((m) => m.role === 'system').map((m) => String(m.content)).join('\n'));
    expect(systems.length).toBeGreaterThan(0);
    for (const text of systems) {
      expect(text).not.toContain('BOOTSTRAP.md - Hello, Operator');
      expect(text).not.toMatch(/Onboarding takes two turns/);
    }
  });

  it('CI runs the agent backtest from the committed cassette only (no model, no network)', async () => {
    expect(existsSync(FIXTURE), 'test/fixtures/backtest/agent-sma.cassette.json is committed').toBe(true);
    const model = createCassetteModel({ cassette: FIXTURE, mode: 'replay' });
    const run = await runAgentBacktest({ bars: agentBars(), agent: { ...agentOptions, model }, temperature: 0 });
    expect(model.stats).toEqual({ replayed: 10, recorded: 0 });
    expect(run.strategies[0]!.decisions.map((d) => d.said)).toEqual(['Bought BTC.', 'Holding.', 'Sold.', 'Flat.']);
  });

  it('a replay whose requests differ from the recording fails the run with CASSETTE_MISS (never a silent empty decision)', async () => {
    const model = createCassetteModel({ cassette: FIXTURE, mode: 'replay' });
    await expect(runAgentBacktest({ bars: agentBars(), agent: { ...agentOptions, prompt: 'A different question.', model }, temperature: 0 })).rejects.toMatchObject({ code: 'CASSETTE_MISS' });
  });

  it('a denied order is counted with the P&L it would have made (next open to the run\'s last close)', async () => {
    const bars = agentBars();
    const model = createScriptedModel(agentScript());
    const run = await runAgentBacktest({ bars, agent: { ...agentOptions, model, approvals: { mode: 'deny' } }, temperature: 0 });
    const [first] = run.strategies[0]!.blocked;
    expect(first).toMatchObject({ rule: 'approval-denied', symbol: 'BTC', side: 'buy', notionalUsd: 2000 });
    const open1 = bars.open[0]![1]!;
    const lastClose = bars.close[0]![bars.times.length - 1]!;
    expect(first!.wouldHavePnlUsd).toBeCloseTo((2000 / open1) * (lastClose - open1), 5);
    expect(run.result.strategy.fills).toEqual([]);
    expect(run.result.strategyReport!.metrics!['agentBlocked.approval-denied']).toBe(1);
  });

  it('epochs: each its own sampling seed; the spread of every metric is reported', async () => {
    const script = [...agentScript(), ...agentScript(), ...agentScript()];
    const model = createScriptedModel(script);
    const run = await runAgentBacktest({ bars: agentBars(), agent: { ...agentOptions, model }, epochs: 3, temperature: 0.7 });
    expect(run.epochs).toHaveLength(3);
    expect(new Set(model.calls.map((c) => c.options.seed))).toEqual(new Set([1, 2, 3]));
    expect(model.calls.every((c) => c.options.temperature === 0.7)).toBe(true);
    expect(run.spread.sharpe!.n).toBe(3);
    expect(run.result.strategyReport!.extraFiles!['decisions.epoch2.jsonl']).toBeDefined();
    expect(JSON.parse(run.result.strategyReport!.extraFiles!['epochs.json']!).seeds).toEqual([1, 2, 3]);
  });

  it('defaults to 5 epochs when the temperature is not 0', async () => {
    const model = createScriptedModel(Array.from({ length: 5 }, () => ({ text: 'hold' })));
    const run = await runAgentBacktest({ bars: agentBars(), agent: { model, prompt: 'x', schedule: { kind: 'every-n-bars', n: 100 } } });
    expect(run.epochs).toHaveLength(5);
  });

  it('anonymised mode: the agent sees renamed tickers, shifted dates and rescaled prices; returns are unchanged', async () => {
    const bars = agentBars();
    const { bars: anon, mapping } = anonymiseBarSet(bars);
    expect(anon.symbols).toEqual(['ASSET1']);
    expect(anon.times[0]).toBe(bars.times[0]! + mapping.shiftMs);
    expect(anon.close[0]![5]! / anon.close[0]![4]!).toBeCloseTo(bars.close[0]![5]! / bars.close[0]![4]!, 12);
    const model = createScriptedModel([{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'ASSET1' } }] }, { text: 'ok' }]);
    const run = await runAgentBacktest({ bars, agent: { model, prompt: 'Decide.', schedule: { kind: 'every-n-bars', n: 100 } }, anonymise: true, temperature: 0 });
    // What the agent was told and what its tools answered name only the anonymised asset and dates.
    const seen = JSON.stringify(run.strategies[0]!.decisions.map((d) => [d.message, d.saw]));
    expect(seen).not.toContain('BTC');
    expect(seen).toContain('ASSET1');
    expect(seen).toContain('Today is 2011-');
    expect(seen).not.toContain('2021-');
    expect(run.contamination.anonymised).toBe(true);
    expect(run.contamination.note).toContain('anonymised');
  });

  it('metric spread and Welch intervals', () => {
    const a = metricSpread([1, 2, 3, 4, 5]);
    expect(a).toMatchObject({ n: 5, mean: 3, min: 1, max: 5 });
    expect(a.std).toBeCloseTo(Math.sqrt(2.5), 12);
    expect(a.ci95[0]).toBeCloseTo(3 - (2.776 * Math.sqrt(2.5)) / Math.sqrt(5), 9);
    const d = welchInterval(a, metricSpread([0, 1, 2, 3, 4]))!;
    expect((d[0] + d[1]) / 2).toBeCloseTo(1, 12);
    expect(welchInterval(metricSpread([1]), a)).toBeUndefined();
  });
});
