/**
 * Agent backtest speed (issue 40), with the scripted model (no network):
 *   - decisions/s through the full runtime: every decision is one turn of the real app (skills, the tool gate,
 *     the finance pack's hooks, memory, the audit log) calling get_price, then answering (goal ≥ 500/s);
 *   - a 2,500-bar daily agent run, a decision on every bar, end to end through runAgentBacktest (goal < 10 s);
 *   - replay from a cassette of that run vs the scripted model (goal: within 2×).
 * Run: `npm run bench -- agent-backtest`. `BENCH_AGENT_BARS` sets the bars (default 2500); `BENCH_AGENT_WORKSPACE=0` runs
 * without the markdown workspace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createCassetteModel, generateBars, runAgentBacktest } from '../../src/backtest/index';
import { createScriptedModel, type ScriptedStep } from '../../src/testing/index';

const BARS = Number(process.env['BENCH_AGENT_BARS'] ?? 2500);
const steps = (n: number): ScriptedStep[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] } : { text: 'Holding.' }));
const bars = generateBars({ seed: 1, symbols: ['BTC'], bars: BARS });
const agent = { prompt: 'Review BTC and decide.', schedule: { kind: 'every-bar' as const }, ...(process.env['BENCH_AGENT_WORKSPACE'] === '0' ? { workspace: false } : {}) };

const dir = mkdtempSync(path.join(tmpdir(), 'agent-bench-'));
const cassette = path.join(dir, 'bench.cassette.json');
const t0 = performance.now();
const recorder = createCassetteModel({ model: createScriptedModel(steps(BARS * 2)), mode: 'record', cassette });
const scripted = await runAgentBacktest({ bars, agent: { ...agent, model: recorder }, temperature: 0, baselines: false });
const scriptedMs = performance.now() - t0;
recorder.save();
const t1 = performance.now();
await runAgentBacktest({ bars, agent: { ...agent, model: createCassetteModel({ cassette }) }, temperature: 0, baselines: false });
const replayMs = performance.now() - t1;
rmSync(dir, { recursive: true, force: true });

const decisions = scripted.strategies[0]!.decisions.length;
const load = loadavg().map((l) => l.toFixed(2)).join(' ');
console.log(`agent-backtest (scripted model, ${decisions} decisions, one get_price call + answer each; load ${load})`);
console.log(`  decisions/s through the full runtime: ${(decisions / (scriptedMs / 1000)).toFixed(1)} (goal ≥ 500)`);
console.log(`  ${BARS}-bar daily run, a decision every bar: ${(scriptedMs / 1000).toFixed(2)} s (goal < 10 s)`);
console.log(`  replay from the cassette: ${(replayMs / 1000).toFixed(2)} s = ${(replayMs / scriptedMs).toFixed(2)}× the scripted run (goal ≤ 2×)`);
