/**
 * Agent backtest speed (issue 40), with the scripted model (no network):
 *   - decisions/s through the full runtime: every decision is one turn of the real app (skills, the tool gate,
 *     the finance pack's hooks, memory, the workspace, the audit log) calling get_price, then answering (goal ≥ 500/s);
 *   - a 2,500-bar daily agent run, a decision on every bar, end to end through runAgentBacktest (goal < 10 s);
 *   - replay from a cassette of that run vs the scripted model (goal: within 2×). The cassette is recorded by a
 *     third, untimed run (the recorder wraps the scripted model), so neither timed run pays for recording.
 * Each line gives the wall time and the process CPU time (user + system) of its run, with the load average.
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
const load = () => loadavg()[0]!.toFixed(2);

/** Wall and CPU milliseconds of one run (the model is built inside the timing: a cassette's load counts). */
async function timed(model: () => Parameters<typeof runAgentBacktest>[0]['agent']['model']) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const run = await runAgentBacktest({ bars, agent: { ...agent, model: model() }, temperature: 0, baselines: false });
  const cpu = process.cpuUsage(c0);
  return { run, ms: performance.now() - t0, cpuMs: (cpu.user + cpu.system) / 1000, load: load() };
}

const dir = mkdtempSync(path.join(tmpdir(), 'agent-bench-'));
const cassette = path.join(dir, 'bench.cassette.json');
const scripted = await timed(() => createScriptedModel(steps(BARS * 2)));
const recorder = createCassetteModel({ model: createScriptedModel(steps(BARS * 2)), mode: 'record', cassette });
await runAgentBacktest({ bars, agent: { ...agent, model: recorder }, temperature: 0, baselines: false });
recorder.save();
const replay = await timed(() => createCassetteModel({ cassette }));
rmSync(dir, { recursive: true, force: true });

const decisions = scripted.run.strategies[0]!.decisions.length;
const s = (ms: number) => (ms / 1000).toFixed(2);
console.log(`agent-backtest (scripted model, ${decisions} decisions, one get_price call + answer each; load ${loadavg().map((l) => l.toFixed(2)).join(' ')})`);
console.log(`  decisions/s through the full runtime: ${(decisions / (scripted.ms / 1000)).toFixed(1)} wall, ${(decisions / (scripted.cpuMs / 1000)).toFixed(1)} per CPU-second (goal ≥ 500; load ${scripted.load})`);
console.log(`  ${BARS}-bar daily run, a decision every bar: ${s(scripted.ms)} s wall, ${s(scripted.cpuMs)} s CPU (goal < 10 s)`);
console.log(`  replay from the cassette: ${s(replay.ms)} s wall = ${(replay.ms / scripted.ms).toFixed(2)}× the scripted run; CPU ${s(replay.cpuMs)} s = ${(replay.cpuMs / scripted.cpuMs).toFixed(2)}× (goal ≤ 2×; load ${replay.load})`);
// One line for CI logs (.ci/run greps it).
const perSec = decisions / (scripted.ms / 1000);
const ratio = replay.ms / scripted.ms;
console.log(
  `target: agent backtest ≥ 500 decisions/s (${perSec.toFixed(0)} ${perSec >= 500 ? 'met' : 'NOT met'}; ${(decisions / (scripted.cpuMs / 1000)).toFixed(0)} per CPU-second), ` +
    `${BARS}-bar run < 10 s (${s(scripted.ms)} s ${scripted.ms < 10_000 ? 'met' : 'NOT met'}; CPU ${s(scripted.cpuMs)} s), ` +
    `replay ≤ 2× (${ratio.toFixed(2)}× ${ratio <= 2 ? 'met' : 'NOT met'}) — scripted model, load average ${loadavg()[0]!.toFixed(2)}`,
);
