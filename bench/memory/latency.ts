/**
 * Memory latency benchmark: write throughput, FTS and hybrid search percentiles, snapshot load, side by side
 * with the mem0ai OSS TypeScript memory (installed in bench/peers) fed the identical vectors and filters.
 *
 *   npx tsx bench/memory/latency.ts [--sizes=1000,10000,100000] [--queries=200] [--mem0-queries=30] [--no-mem0] [--no-hybrid] [--full-tenants]
 *
 * `first search (build)` is the first lookup of the tenant in the process that wrote it: no snapshot exists yet,
 * so it builds the tenant's in-process lexical index (src/memory/lexical-index.ts) from its rows (and queues a
 * snapshot save); every later lookup only catches up. `first search, fresh process` is the first lookup in a new
 * process (`first-search.ts`, run as a child once the snapshot is saved): it loads the saved snapshot and
 * catches it up; the figure is the median of three children.
 *
 * Data: one measured tenant with N memories in a SQLite file shared by 10 tenants (the other nine hold N more
 * memories between them, near-duplicates of the same generator; with `--full-tenants` each of them holds N, so
 * the file holds 10 × N). Embeddings for hybrid: 384-dim vectors from
 * the fake embedder. `writeMany` throughput is measured on a separate fresh file with the single writer's rows.
 * Each run first times two fixed workloads (`calibrate.ts`) and prints them with the load average, so runs on
 * hosts of different speed can be compared.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { createMemoryStore, silentLogger } from '../../src/index';
import { lexicalCacheFor } from '../../src/memory/lexical-cache';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createFakeEmbedder, fakeEmbedding } from '../../src/testing/fake-embedder';
import { calibrateHost } from './calibrate';
import { generateMemories, generateQueries } from './corpus';
import { createMem0Baseline, type Mem0Baseline } from './mem0-baseline';
import { fmt, percentile, printTable, timed } from './stats';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const sizes = (args.get('sizes') ?? '1000,10000,100000').split(',').map(Number);
const nQueries = Number(args.get('queries') ?? 200);
const nMem0Queries = Number(args.get('mem0-queries') ?? 30);
const withMem0 = !args.has('no-mem0');
const withHybrid = !args.has('no-hybrid');
const fullTenants = args.has('full-tenants');
const DIM = 384;
const TENANTS = 10;
const CONCURRENT_WRITERS = 16;
const BATCH = 100;
const dir = join(process.cwd(), '.tmp', 'bench-memory');
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });

interface Row {
  size: number;
  writesPerSec: number;
  concurrentWritesPerSec: number;
  batchWritesPerSec: number;
  writeP50: number;
  writeP95: number;
  ftsP50: number;
  ftsP95: number;
  firstSearch: number;
  freshFirstSearch: number;
  freshFirstSearchCpu: number;
  hybridP50: number;
  hybridP95: number;
  snapP50: number;
  snapP95: number;
  mem0?: { searchP50: number; searchP95: number; note?: string } | undefined;
}

const loadAtStart = loadavg()[0] ?? 0;
const calibration = calibrateHost();
const results: Row[] = [];
let mem0Error: string | undefined;

for (const size of sizes) {
  const path = join(dir, `memory-${size}.db`);
  const storage = createSqliteStorage({ path, logger: silentLogger });
  const target = createMemoryStore({ storage, scope: { userId: 'tenant-0' }, logger: silentLogger });
  const rows = generateMemories(size, 42);
  const writeTimes: number[] = [];
  const t0 = performance.now();
  for (const r of rows) writeTimes.push(await timed(() => target.write(r)));
  const writeSecs = (performance.now() - t0) / 1000;
  const others = generateMemories(fullTenants ? size * (TENANTS - 1) : size, 7);
  const otherStores = Array.from({ length: TENANTS - 1 }, (_, t) => createMemoryStore({ storage, scope: { userId: `tenant-${t + 1}` }, logger: silentLogger }));
  let next = 0;
  const t1 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENT_WRITERS }, async () => {
      for (let i = next++; i < others.length; i = next++) await (otherStores[i % (TENANTS - 1)] as (typeof otherStores)[number]).write(others[i] as (typeof others)[number]);
    }),
  );
  const concurrentWritesPerSec = others.length / ((performance.now() - t1) / 1000);

  const queries = generateQueries(nQueries, 99);
  const firstSearch = await timed(() => target.search('funding', { mode: 'bm25' }));
  await lexicalCacheFor(storage.memory).settled();
  const fresh: number[] = [];
  const freshCpu: number[] = [];
  for (let i = 0; i < 3; i++) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'first-search.ts'), path, 'tenant-0'], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(`first-search.ts failed: ${child.stderr}`);
    const figures = JSON.parse(child.stdout.trim().split('\n').pop() as string) as { first: number; firstCpu: number };
    fresh.push(figures.first);
    freshCpu.push(figures.firstCpu);
  }
  const freshFirstSearch = percentile(fresh, 0.5);
  const freshFirstSearchCpu = percentile(freshCpu, 0.5);
  for (const q of queries.slice(0, 20)) await target.search(q, { mode: 'bm25' });
  const fts: number[] = [];
  for (const q of queries) fts.push(await timed(() => target.search(q, { mode: 'bm25', limit: 10 })));

  const embedder = createFakeEmbedder(DIM);
  const hybridStore = createMemoryStore({ storage, scope: { userId: 'tenant-0' }, logger: silentLogger, embedder, embeddingBatchSize: 256 });
  const hybrid: number[] = [];
  if (withHybrid) {
    for (;;) {
      const queued = await hybridStore.backfillEmbeddings({ limit: 1000 });
      await hybridStore.flushEmbeddings();
      if (queued === 0) break;
    }
    for (const q of queries.slice(0, 20)) await hybridStore.search(q);
    for (const q of queries) hybrid.push(await timed(() => hybridStore.search(`${q} `, { limit: 10 })));
  }

  const snaps: number[] = [];
  for (let i = 0; i < 200; i++) snaps.push(await timed(() => target.loadSnapshot()));

  let mem0: Row['mem0'];
  if (withMem0 && mem0Error === undefined) {
    let baseline: Mem0Baseline | undefined;
    try {
      baseline = await createMem0Baseline({ dir: join(dir, `mem0-${size}`), dimensions: DIM, embed: (t) => fakeEmbedding(t, DIM) });
      await baseline.load([
        ...rows.map((r) => ({ userId: 'tenant-0', content: r.content })),
        ...others.map((r, i) => ({ userId: `tenant-${1 + (i % (TENANTS - 1))}`, content: r.content })),
      ]);
      const mq = queries.slice(0, nMem0Queries);
      for (const q of mq.slice(0, 3)) await baseline.search(q, 'tenant-0', 10);
      const ms: number[] = [];
      for (const q of mq) ms.push(await timed(() => baseline!.search(q, 'tenant-0', 10)));
      mem0 = { searchP50: percentile(ms, 0.5), searchP95: percentile(ms, 0.95) };
    } catch (error) {
      mem0Error = error instanceof Error ? `${error.message}` : String(error);
    } finally {
      await baseline?.close();
    }
  }

  results.push({
    size,
    writesPerSec: size / writeSecs,
    concurrentWritesPerSec,
    batchWritesPerSec: Number.NaN,
    writeP50: percentile(writeTimes, 0.5),
    writeP95: percentile(writeTimes, 0.95),
    ftsP50: percentile(fts, 0.5),
    ftsP95: percentile(fts, 0.95),
    firstSearch,
    freshFirstSearch,
    freshFirstSearchCpu,
    hybridP50: percentile(hybrid, 0.5),
    hybridP95: percentile(hybrid, 0.95),
    snapP50: percentile(snaps, 0.5),
    snapP95: percentile(snaps, 0.95),
    mem0,
  });
  await hybridStore.close();
  await target.close();
  await storage.close();

  // writeMany (one transaction per call of BATCH rows) into a fresh file, same rows as the single writer.
  const batchPath = join(dir, `memory-${size}-batch.db`);
  const batchStorage = createSqliteStorage({ path: batchPath, logger: silentLogger });
  const batchStore = createMemoryStore({ storage: batchStorage, scope: { userId: 'tenant-0' }, logger: silentLogger });
  const t2 = performance.now();
  for (let i = 0; i < rows.length; i += BATCH) await batchStore.writeMany(rows.slice(i, i + BATCH));
  const batchWritesPerSec = rows.length / ((performance.now() - t2) / 1000);
  await batchStore.close();
  await batchStorage.close();
  rmSync(batchPath, { force: true });
  results[results.length - 1] = { ...(results[results.length - 1] as Row), batchWritesPerSec };
  console.error(`done ${size}`);
}

console.log(
  `\nNode ${process.version}, ${cpus().length} CPUs, ${nQueries} queries per size (mem0: ${nMem0Queries}), ${TENANTS} tenants per file (${fullTenants ? 'each holding N' : 'the other nine holding N between them'}), ${DIM}-dim fake vectors`,
);
console.log(`Host calibration (bench/memory/calibrate.ts, lower is faster): fts5 ${fmt(calibration.fts5Ms)} ms, js ${fmt(calibration.jsMs)} ms; load average (1 min) ${loadAtStart.toFixed(2)} at the start, ${(loadavg()[0] ?? 0).toFixed(2)} at the end`);
printTable(
  'Writes (FTS + edges, embeddings off; write(): one transaction each)',
  ['memories', 'writes/s (1 writer)', `writes/s (${CONCURRENT_WRITERS} writers, group commit)`, `writes/s (writeMany × ${BATCH})`, 'single write p50 ms', 'single write p95 ms'],
  results.map((r) => [r.size, r.writesPerSec, r.concurrentWritesPerSec, r.batchWritesPerSec, r.writeP50, r.writeP95]),
);
printTable(
  'Search latency, ms (tenant of N in a file of 10 tenants)',
  ['memories', 'FTS p50', 'FTS p95', 'first search (build)', 'first search, fresh process (snapshot)', '… its CPU ms', 'hybrid p50', 'hybrid p95', 'mem0 p50', 'mem0 p95', 'mem0/ours p95 (hybrid)'],
  results.map((r) => [
    r.size,
    r.ftsP50,
    r.ftsP95,
    r.firstSearch,
    r.freshFirstSearch,
    r.freshFirstSearchCpu,
    r.hybridP50,
    r.hybridP95,
    r.mem0?.searchP50 ?? Number.NaN,
    r.mem0?.searchP95 ?? Number.NaN,
    r.mem0 === undefined ? 'n/a' : `${(r.mem0.searchP95 / r.hybridP95).toFixed(1)}×`,
  ]),
);
printTable(
  'Snapshot load (top 50 + profile), ms',
  ['memories', 'p50', 'p95'],
  results.map((r) => [r.size, r.snapP50, r.snapP95]),
);
if (mem0Error !== undefined) console.log(`\nmem0 baseline NOT measured: ${mem0Error}`);
