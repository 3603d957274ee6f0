/**
 * Artifact benchmarks (issue 16): materializing a 1,000-point chart without PNG (target p50 ≤ 50 ms: viewer
 * HTML with Vega inlined, raw JSON, written atomically), against a baseline in the same process (a 1-point
 * chart), plus creating the chart (Vega-Lite compile + storage row) and parsing a 1M-row CSV upload to text.
 *
 * Run: npm run bench -- artifacts
 */
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createArtifactMaterializer, createArtifactStore, parseSpreadsheet, silentLogger } from '../../src/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { fmt, machine, summarize, table, timeEach } from '../lib/stats';

const N = Number(process.env.BENCH_ITERATIONS ?? 200);
const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-artifacts-'));
const spec = (n: number) => ({
  data: { values: Array.from({ length: n }, (_, i) => ({ day: i, equity: 10_000 + Math.round(1000 * Math.sin(i / 25)) })) },
  mark: 'line',
  encoding: { x: { field: 'day', type: 'quantitative' }, y: { field: 'equity', type: 'quantitative' } },
});

try {
  const storage = createSqliteStorage({ path: path.join(dir, 'bench.db'), logger: silentLogger });
  const store = createArtifactStore({ storage, logger: silentLogger });
  const m = createArtifactMaterializer({ store, dir: path.join(dir, 'artifacts'), png: false, logger: silentLogger });
  const scope = { userId: 'bench' };
  const small = await store.createChart(scope, { title: 'one point', spec: spec(1) });
  const big = await store.createChart(scope, { title: 'equity', spec: spec(1000) });
  for (let i = 0; i < 20; i++) await m.materialize(scope, `${small.uri} ${big.uri}`); // warm-up (Vega's source read once)
  const base = summarize(await timeEach(N, () => m.materialize(scope, small.uri)));
  const thousand = summarize(await timeEach(N, () => m.materialize(scope, `Here it is: ${big.uri}`)));
  const create = summarize(await timeEach(N, () => store.createChart(scope, { title: 'equity', spec: spec(1000) })));

  const csv = path.join(dir, 'big.csv');
  const out = createWriteStream(csv);
  out.write('id,symbol,price\n');
  for (let i = 1; i <= 1_000_000; i += 10_000) {
    let chunk = '';
    for (let j = i; j < i + 10_000; j++) chunk += `${j},BTC,${97000 + (j % 100)}\n`;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const heap0 = process.memoryUsage().heapUsed;
  const parse = summarize(await timeEach(5, () => parseSpreadsheet({ path: csv, mediaType: 'text/csv', maxRows: 200 })));
  const heapGrowthMb = (process.memoryUsage().heapUsed - heap0) / 1024 / 1024;

  console.log(`\nArtifacts (${N} iterations; ${machine()})`);
  console.log(table(['work', 'p50 ms', 'p95 ms', 'ratio to baseline p50'], [
    ['materialize 1-point chart, no PNG (baseline)', fmt(base.p50), fmt(base.p95), '1.00'],
    ['materialize 1,000-point chart, no PNG (target p50 ≤ 50 ms)', fmt(thousand.p50), fmt(thousand.p95), (thousand.p50 / base.p50).toFixed(2)],
    ['create_chart 1,000 points (compile + row)', fmt(create.p50), fmt(create.p95), (create.p50 / base.p50).toFixed(2)],
    ['parse 1M-row CSV to text, 200-row cap (5 runs)', fmt(parse.p50), fmt(parse.p95), (parse.p50 / base.p50).toFixed(2)],
  ]));
  console.log(`heap growth after parsing the 1M-row CSV 5 times: ${heapGrowthMb.toFixed(1)} MB`);
  if (thousand.p50 > 50) {
    console.error(`FAIL: materializing a 1,000-point chart took p50 ${fmt(thousand.p50)} ms (> 50 ms)`);
    process.exitCode = 1;
  }
  await m.close();
  await storage.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
