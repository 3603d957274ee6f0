/**
 * run_code benchmarks (issue 30): the QuickJS WebAssembly sandbox's start-up (cold: a new worker thread that
 * loads and compiles the engine; warm: a fresh QuickJS runtime and context in the running worker, i.e. a trivial
 * run) and a 10,000-point indicator computation (EMA(20) and RSI(14) over 10k closes passed as JSON), against the
 * same computation in plain Node in this process.
 *
 * Run: npm run bench -- run-code   (BENCH_ITERATIONS, default 50; cold start-up uses a fifth of them)
 */
import { createQuickJsSandbox } from '../../src/index';
import { fmt, machine, summarize, table, timeEach } from '../lib/stats';

const N = Number(process.env.BENCH_ITERATIONS ?? 50);
const COLD = Math.max(3, Math.round(N / 5));

const closes = Array.from({ length: 10_000 }, (_, i) => 100 + 10 * Math.sin(i / 50) + ((i * 7919) % 13) / 13);

/** The indicator code, as the model would send it: a function body over `data`. */
const body = `
const closes = data.closes;
const k = 2 / (data.period + 1);
let ema = closes[0];
const emaSeries = new Array(closes.length);
for (let i = 0; i < closes.length; i++) { ema = closes[i] * k + ema * (1 - k); emaSeries[i] = ema; }
let gain = 0, loss = 0;
const n = data.rsiPeriod;
for (let i = 1; i <= n; i++) { const d = closes[i] - closes[i - 1]; if (d > 0) gain += d; else loss -= d; }
gain /= n; loss /= n;
const rsi = new Array(closes.length).fill(null);
rsi[n] = 100 - 100 / (1 + gain / loss);
for (let i = n + 1; i < closes.length; i++) {
  const d = closes[i] - closes[i - 1];
  gain = (gain * (n - 1) + Math.max(d, 0)) / n;
  loss = (loss * (n - 1) + Math.max(-d, 0)) / n;
  rsi[i] = 100 - 100 / (1 + gain / loss);
}
return { ema: emaSeries.at(-1), rsi: rsi.at(-1), points: closes.length };
`;
// eslint-disable-next-line @typescript-eslint/no-implied-eval -- the same body, compiled by V8 in this process
const nodeFn = new Function('data', body) as (data: unknown) => { ema: number; rsi: number; points: number };
const data = { closes, period: 20, rsiPeriod: 14 };

const cold = summarize(
  await timeEach(COLD, async () => {
    const s = createQuickJsSandbox();
    await s.warm();
    await s.close();
  }),
);
const sandbox = createQuickJsSandbox();
await sandbox.warm();
for (let i = 0; i < 5; i++) await sandbox.run('return 1', null); // warm-up
const warm = summarize(await timeEach(N, () => sandbox.run('return 1', null)));
const inSandbox = summarize(
  await timeEach(N, async () => {
    const r = await sandbox.run(body, data);
    if (!r.ok) throw new Error(r.message);
  }),
);
// Node gets the same JSON round trip the sandbox pays (the input parsed, the result stringified).
const json = JSON.stringify(data);
for (let i = 0; i < 20; i++) nodeFn(JSON.parse(json));
const inNode = summarize(await timeEach(N, () => JSON.stringify(nodeFn(JSON.parse(json)))));
const check = await sandbox.run(body, data);
const expected = nodeFn(data);
if (!check.ok || Math.abs((check.value as { rsi: number }).rsi - expected.rsi) > 1e-9) {
  console.error('FAIL: the sandbox and Node disagree', check, expected);
  process.exitCode = 1;
}
await sandbox.close();

console.log(`\nrun_code, QuickJS WebAssembly sandbox (${N} iterations, cold start-up ${COLD}; ${machine()})`);
console.log(table(['work', 'p50 ms', 'p95 ms', 'ratio to Node p50'], [
  ['cold start-up: worker + engine load', fmt(cold.p50), fmt(cold.p95), (cold.p50 / inNode.p50).toFixed(1)],
  ['warm start-up: fresh runtime, `return 1`', fmt(warm.p50), fmt(warm.p95), (warm.p50 / inNode.p50).toFixed(1)],
  ['EMA(20) + RSI(14) over 10k points, sandbox', fmt(inSandbox.p50), fmt(inSandbox.p95), (inSandbox.p50 / inNode.p50).toFixed(1)],
  ['same in plain Node (JSON in and out), baseline', fmt(inNode.p50), fmt(inNode.p95), '1.0'],
]));
