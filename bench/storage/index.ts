/**
 * Storage benchmark: the Postgres engine side by side with SQLite in one run, on the memory bench's workloads.
 *
 *   npx tsx bench/storage/index.ts [--sizes=1000,10000,100000] [--queries=200] [--writes=2000] [--tenants=10] [--url=postgres://…] [--engines=sqlite,postgres]
 *   npm run bench -- storage
 *
 * Ends with a `target:` line per engine for the largest size (issue 41: FTS p95 ≤ 20 ms at 100k rows per tenant,
 * whatever ran before). CI runs one tenant of 100k rows, searched right after its bulk load, before autoanalyze has
 * run: the moment the planner has no statistics, where two of the tails found so far lived.
 *
 * - writes/s: `memoryStore.write` with 1 writer (sequential) and with 16 concurrent writers spread over 10 tenants,
 *   on a fresh database each;
 * - FTS search p50/p95: 10 tenants of N rows each (loaded with `writeMany`), `search(q, { mode: 'bm25', limit: 10 })`
 *   on one tenant, the memory bench's seeded queries; beside the wall time, the CPU time this process spent per
 *   query (`process.cpuUsage`: the in-process ranking and the driver, not the server) and the load average when
 *   the queries began, so a figure taken on a loaded, shared host can be read;
 * - approvals: request → approve → consume round trip (`create`, `transition` pending→approved, approved→executed).
 *
 * Postgres: `--url` (or `MINARA_BENCH_POSTGRES_URL`), else a throwaway local server started from the PostgreSQL
 * binaries on PATH with its durable defaults (fsync and synchronous commit on). SQLite: a file with the engine's
 * defaults (WAL, synchronous = NORMAL). The ratio column is Postgres ÷ SQLite measured in this process.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, silentLogger, type Storage } from '../../src/index';
import { createPostgresStorage } from '../../src/storage/postgres/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { startRealPostgres, type RealPostgres } from '../../test/postgres/support';
import { summarize, table } from '../lib/stats';
import { generateMemories, generateQueries } from '../memory/corpus';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const sizes = (args.get('sizes') ?? '1000,10000').split(',').map(Number);
const nQueries = Number(args.get('queries') ?? 200);
const nWrites = Number(args.get('writes') ?? 2000);
const TENANTS = Number(args.get('tenants') ?? 10);
if (!Number.isInteger(TENANTS) || TENANTS < 1) throw new Error(`--tenants: expected a whole number ≥ 1, got ${args.get('tenants')}`);
const WRITERS = 16;
const dir = join(process.cwd(), '.tmp', 'bench-storage');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

let server: RealPostgres | undefined;
const url = args.get('url') ?? process.env.MINARA_BENCH_POSTGRES_URL ?? (server = await startRealPostgres({ durable: true })).url;
let schemaSeq = 0;

type Engine = { name: 'sqlite' | 'postgres'; open: () => Promise<Storage> };
const allEngines: Engine[] = [
  { name: 'sqlite', open: async () => createSqliteStorage({ path: join(dir, `s${++schemaSeq}.db`), logger: silentLogger }) },
  { name: 'postgres', open: () => createPostgresStorage({ connectionString: url, schema: `bench_${process.pid}_${++schemaSeq}`, logger: silentLogger, poolSize: WRITERS + 4 }) },
];
const wanted = (args.get('engines') ?? 'sqlite,postgres').split(',');
const engines = allEngines.filter((e) => wanted.includes(e.name));

const rows: Array<Array<string | number>> = [];
const measured = new Map<string, number>();
const cpuFigures = new Map<string, string>();
const record = (metric: string, engine: string, value: number) => measured.set(`${metric}|${engine}`, value);

async function writes(engine: Engine): Promise<void> {
  const corpus = generateMemories(nWrites, 11);
  {
    const storage = await engine.open();
    const store = createMemoryStore({ storage, scope: { userId: 'tenant-0' }, logger: silentLogger });
    const t0 = performance.now();
    for (const r of corpus.slice(0, Math.min(nWrites, 1000))) await store.write(r);
    record('writes/s, 1 writer', engine.name, Math.min(nWrites, 1000) / ((performance.now() - t0) / 1000));
    await store.close();
    await storage.close();
  }
  {
    const storage = await engine.open();
    const stores = Array.from({ length: TENANTS }, (_, t) => createMemoryStore({ storage, scope: { userId: `tenant-${t}` }, logger: silentLogger }));
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        for (let i = next++; i < corpus.length; i = next++) await stores[i % TENANTS]!.write(corpus[i]!);
      }),
    );
    record(`writes/s, ${WRITERS} writers`, engine.name, corpus.length / ((performance.now() - t0) / 1000));
    for (const s of stores) await s.close();
    await storage.close();
  }
}

async function search(engine: Engine, size: number): Promise<void> {
  const storage = await engine.open();
  const stores = Array.from({ length: TENANTS }, (_, t) => createMemoryStore({ storage, scope: { userId: `tenant-${t}` }, logger: silentLogger }));
  const t0 = performance.now();
  for (let t = 0; t < TENANTS; t++) {
    const corpus = generateMemories(size, 42 + t);
    for (let i = 0; i < corpus.length; i += 500) await stores[t]!.writeMany(corpus.slice(i, i + 500));
  }
  const loadSecs = (performance.now() - t0) / 1000;
  const target = stores[0]!;
  const queries = generateQueries(nQueries, 99);
  for (const q of queries.slice(0, 20)) await target.search(q, { mode: 'bm25', limit: 10 });
  const times: number[] = [];
  const cpu: number[] = [];
  const load = loadavg()[0] ?? Number.NaN;
  for (const q of queries) {
    const t = performance.now();
    const c = process.cpuUsage();
    await target.search(q, { mode: 'bm25', limit: 10 });
    const used = process.cpuUsage(c);
    times.push(performance.now() - t);
    cpu.push((used.user + used.system) / 1000);
  }
  const s = summarize(times);
  const sc = summarize(cpu);
  record(`FTS p50 ms, ${size}/tenant`, engine.name, s.p50);
  record(`FTS p95 ms, ${size}/tenant`, engine.name, s.p95);
  record(`FTS max ms, ${size}/tenant`, engine.name, Math.max(...times));
  record(`FTS p50 / p95 CPU ms of this process, ${size}/tenant`, engine.name, Number.NaN);
  cpuFigures.set(`${size}|${engine.name}`, `${sc.p50.toFixed(2)} / ${sc.p95.toFixed(2)}`);
  record(`load average when the ${size}/tenant queries began`, engine.name, load);
  record(`bulk load rows/s (writeMany), ${size}/tenant`, engine.name, (size * TENANTS) / loadSecs);
  for (const st of stores) await st.close();
  await storage.close();
}

async function approvals(engine: Engine): Promise<void> {
  const storage = await engine.open();
  const times: number[] = [];
  for (let i = 0; i < 300; i++) {
    const now = new Date().toISOString();
    const t = performance.now();
    await storage.approvals.create({
      id: `apr_${i}`, toolName: 'swap_tokens', toolCallId: `call_${i}`, inputHash: 'a'.repeat(64), inputJson: '{}', tier: 3, source: 'chat', reason: 'bench',
      status: 'pending', createdAt: now, expiresAt: now, signature: 'sig',
    });
    await storage.approvals.transition(`apr_${i}`, ['pending'], 'approved', { decidedAt: now, decisionSignature: 'd' });
    if (!(await storage.approvals.transition(`apr_${i}`, ['approved'], 'executed', { executedAt: now, executionSignature: 'e' }))) throw new Error('consume lost');
    times.push(performance.now() - t);
  }
  const s = summarize(times.slice(20));
  record('approval round trip p50 ms', engine.name, s.p50);
  record('approval round trip p95 ms', engine.name, s.p95);
  await storage.close();
}

try {
  for (const engine of engines) {
    await writes(engine);
    await approvals(engine);
    for (const size of sizes) await search(engine, size);
  }
} finally {
  server?.stop();
}

const metrics = [...new Set([...measured.keys()].map((k) => k.split('|')[0]!))];
for (const m of metrics) {
  const sq = measured.get(`${m}|sqlite`) ?? Number.NaN;
  const pg = measured.get(`${m}|postgres`) ?? Number.NaN;
  const f = (v: number) => (v >= 100 ? v.toFixed(0) : v.toFixed(2));
  const size = /CPU ms of this process, (\d+)\//.exec(m)?.[1];
  if (size !== undefined) rows.push([m, cpuFigures.get(`${size}|sqlite`) ?? '—', cpuFigures.get(`${size}|postgres`) ?? '—', '']);
  else rows.push([m, f(sq), f(pg), (pg / sq).toFixed(2)]);
}
console.log(`\nStorage bench — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load ${loadavg()[0]?.toFixed(2)}`);
console.log(`Postgres: ${server ? 'throwaway local server (durable defaults)' : 'given URL'}; SQLite: file, WAL, synchronous=NORMAL; ${TENANTS} tenants; ${nQueries} queries\n`);
console.log(table(['metric', 'sqlite', 'postgres', 'postgres ÷ sqlite'], rows));

// One line per engine a CI log keeps: the largest size's search latency against issue 41's goal.
const largest = Math.max(...sizes);
for (const engine of engines) {
  const p95 = measured.get(`FTS p95 ms, ${largest}/tenant|${engine.name}`) ?? Number.NaN;
  const p50 = measured.get(`FTS p50 ms, ${largest}/tenant|${engine.name}`) ?? Number.NaN;
  const load = measured.get(`load average when the ${largest}/tenant queries began|${engine.name}`) ?? Number.NaN;
  console.log(
    `target: ${engine.name} memory search p95 ≤ 20 ms at ${largest.toLocaleString('en-US')} rows per tenant (p95 ${p95.toFixed(2)} ms ${p95 <= 20 ? 'met' : 'NOT met'}; ` +
      `p50 ${p50.toFixed(2)} ms; CPU of this process p50 / p95 ${cpuFigures.get(`${largest}|${engine.name}`) ?? '—'} ms; max ${(measured.get(`FTS max ms, ${largest}/tenant|${engine.name}`) ?? Number.NaN).toFixed(1)} ms) — ` +
      `${TENANTS} tenant${TENANTS === 1 ? '' : 's'} loaded, searched at once after the load, ${nQueries} queries, load average ${load.toFixed(2)}`,
  );
}
