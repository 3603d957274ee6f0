import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeBacktestReport } from '@minara/agent/backtest';
import { createScriptedModel, type ScriptedStep } from '@minara/agent/testing';
import { compareRuns, formatComparison, runAgentBacktest, runLearningComparison } from '@minara/agent/backtest';
import { agentBars, agentScript } from './run-fixture';

const opts = { prompt: 'Review BTC and decide.', schedule: { kind: 'every-n-bars' as const, n: 10 }, limits: { maxTradeUsd: 5000 } };
const holdScript = (): ScriptedStep[] => Array.from({ length: 4 }, () => ({ text: 'Holding.' }));

describe('minara backtest compare', () => {
  it('metric deltas with intervals and a per-decision diff of where the runs decided differently', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cmp-'));
    const a = await runAgentBacktest({ bars: agentBars(), agent: { ...opts, model: createScriptedModel(agentScript()) }, temperature: 0 });
    const b = await runAgentBacktest({ bars: agentBars(), agent: { ...opts, model: createScriptedModel(holdScript()) }, temperature: 0 });
    await writeBacktestReport(a.result, path.join(dir, 'a'), { png: false });
    await writeBacktestReport(b.result, path.join(dir, 'b'), { png: false });
    const c = compareRuns(path.join(dir, 'a'), path.join(dir, 'b'));
    const ret = c.metrics.find((m) => m.metric === 'totalReturn')!;
    expect(ret.delta).toBeCloseTo(a.result.strategy.metrics.totalReturn - b.result.strategy.metrics.totalReturn, 12);
    expect(ret.ci95).toBeNull();
    // B never trades: its Sharpe is undefined (null in metrics.json), so no Sharpe delta is claimed.
    expect(c.metrics.find((m) => m.metric === 'sharpe')).toBeUndefined();
    // Decisions 1 and 3 differ (buy, sell vs hold); 2 and 4 are the same (no orders).
    expect(c.sameDecisions).toBe(2);
    expect(c.decisions.map((d) => [d.a?.said, d.b?.said])).toEqual([['Bought BTC.', 'Holding.'], ['Sold.', 'Holding.']]);
    const text = formatComparison(c);
    expect(text).toContain('decisions: 2 the same, 2 different');
    expect(text).toContain('totalReturn');
  });

  it('epochs on both sides give Welch intervals', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cmp-'));
    const run = (script: () => ScriptedStep[], sub: string) =>
      runAgentBacktest({ bars: agentBars(), agent: { ...opts, model: createScriptedModel([...script(), ...script()]) }, epochs: 2, temperature: 0.5 }).then((r) => writeBacktestReport(r.result, path.join(dir, sub), { png: false }));
    await run(agentScript, 'a');
    await run(holdScript, 'b');
    const c = compareRuns(path.join(dir, 'a'), path.join(dir, 'b'));
    expect(c.metrics.find((m) => m.metric === 'totalReturn')!.method).toBe('welch-epochs');
  });

  it('a folder that is not a run is named', () => {
    expect(() => compareRuns(tmpdir(), tmpdir())).toThrow(/not a backtest run folder/);
  });
});

describe('learning on vs off', () => {
  it('runs the same window both ways and says what it found, whatever the answer', async () => {
    const model = createScriptedModel([...agentScript(), ...agentScript()]);
    const cmp = await runLearningComparison({ bars: agentBars(), agent: { ...opts, model }, temperature: 0 });
    expect(cmp.on.result.config.strategyReport).toMatchObject({ agent: { learning: true } });
    expect(cmp.off.result.config.strategyReport).toMatchObject({ agent: { learning: false } });
    expect(cmp.deltas.totalReturn!.delta).toBeCloseTo(cmp.on.result.strategy.metrics.totalReturn - cmp.off.result.strategy.metrics.totalReturn, 12);
    expect(cmp.summary).toMatch(/^total return with learning on − off: /);
  });
});
