/**
 * Dispatch throughput and latency for a READ_ONLY tool with a small schema.
 * Baseline in the same run: calling the handler after a plain zod parse (what any tool call costs anyway).
 * The SDK is loaded from the built package in dist/ (BENCH_FROM=src: the sources through tsx).
 * Run: npm run build && npm run bench -- dispatch
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { loadBenchSdk } from '../lib/sdk';
import { fmt, machine, summarize, table, timeEach } from '../lib/stats';

// The SDK from the built dist/ (what a consumer runs), or from src/ through tsx with BENCH_FROM=src (../lib/sdk.ts).
const bench = await loadBenchSdk().catch((error: unknown) => {
  console.log(`target: dispatch ≥ 12,000 calls/s with the SQLite audit row (NOT RUN: ${error instanceof Error ? error.message : String(error)})`);
  process.exit(1);
});
const { createAuditIntegrity, createToolCallContext, createToolRegistry, defineTool, PermissionTier } = bench.sdk;
const { createSqliteStorage } = bench.sqlite;
const { createInMemoryStorage } = bench.testing;

const N = Number(process.env.BENCH_N ?? 20_000);
const schema = z.object({ symbol: z.string().min(1).max(16), currency: z.string().nullish() });
const handler = ({ symbol }: { symbol: string }) => ({ symbol, price: 97_000.5 });
const getPrice = defineTool({ name: 'get_price', toolSet: 'read', description: 'Spot price', inputSchema: schema, permissionTier: PermissionTier.READ_ONLY, execute: handler });

async function measure(label: string, call: (i: number) => unknown) {
  for (let i = 0; i < 2000; i++) await call(i); // warm-up
  const t0 = performance.now();
  const cpu0 = process.threadCpuUsage();
  const samples = await timeEach(N, call);
  const cpu = process.threadCpuUsage(cpu0);
  const wall = performance.now() - t0;
  // Calls per CPU-second of this (the calling) thread: what the code costs, steadier than the wall rate on a shared
  // host (the checkpoint thread's CPU is not in it; wall time waiting on the disk is not either).
  return { label, ...summarize(samples), perSec: N / (wall / 1000), perCpuSec: N / ((cpu.user + cpu.system) / 1e6) };
}

const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-dispatch-'));
const sqlite = createSqliteStorage({ path: path.join(dir, 'bench.db') });
// As createApp does: keyed links (HMAC) and signed checkpoints every 1000 rows / 60 s to a file in the data dir.
const integrity = createAuditIntegrity({ storage: sqlite, secret: new Uint8Array(32).fill(1), dataDir: path.join(dir, 'data') });
const ctx = createToolCallContext({ sessionId: 'bench', source: 'user' });
const symbols = ['BTC', 'ETH', 'SOL', 'ARB'];

const results: Array<Awaited<ReturnType<typeof measure>>> = [];
results.push(await measure('baseline: zod parse + handler', (i) => handler(schema.parse({ symbol: symbols[i % 4] }))));
const off = createToolRegistry({ tools: [getPrice], audit: false });
results.push(await measure('dispatch, audit off', (i) => off.dispatch('get_price', { symbol: symbols[i % 4] }, { context: ctx })));
const mem = createToolRegistry({ tools: [getPrice], storage: createInMemoryStorage() });
results.push(await measure('dispatch, audit on (in-memory)', (i) => mem.dispatch('get_price', { symbol: symbols[i % 4] }, { context: ctx })));
const onSqlite = createToolRegistry({ tools: [getPrice], storage: sqlite });
results.push(await measure('dispatch, audit on (SQLite WAL)', (i) => onSqlite.dispatch('get_price', { symbol: symbols[i % 4] }, { context: ctx })));
// A tenant's call (a gateway user's turn): its row also enters the per-user index the tenant views and breakers read.
const tenant = createToolCallContext({ sessionId: 'bench-alice', source: 'user', userId: 'alice' });
results.push(await measure('dispatch, audit on (SQLite WAL, tenant row)', (i) => onSqlite.dispatch('get_price', { symbol: symbols[i % 4] }, { context: tenant })));
// The same row with SQLite's own checkpoints on the committing connection (backgroundCheckpoints: false), as before
// checkpoints moved to a worker thread: the difference is what the thread takes off the call.
const inlineStorage = createSqliteStorage({ path: path.join(dir, 'inline.db'), backgroundCheckpoints: false });
const inlineIntegrity = createAuditIntegrity({ storage: inlineStorage, secret: new Uint8Array(32).fill(1), dataDir: path.join(dir, 'data-inline') });
const inline = createToolRegistry({ tools: [getPrice], storage: inlineStorage });
results.push(await measure('… checkpoints on the committing connection', (i) => inline.dispatch('get_price', { symbol: symbols[i % 4] }, { context: ctx })));
await inlineIntegrity.close();
await inlineStorage.close();
const auditRows = await sqlite.audit.count();
const chainOk = (await integrity.verify()).ok;
// The cost of one checkpoint (head read, Ed25519 signature, one line appended and fdatasync'd), taken 50 times.
const cp: number[] = [];
for (let i = 0; i < 50; i++) {
  const t = performance.now();
  await integrity.checkpoint();
  cp.push(performance.now() - t);
}
const cpStats = summarize(cp);
const tv = performance.now();
await integrity.verify();
const verifyMs = performance.now() - tv;
const tp = performance.now();
await integrity.prove(1);
const proveMs = performance.now() - tp;
await integrity.close();
await sqlite.close();
rmSync(dir, { recursive: true, force: true });

const base = results[0]!;
console.log(`\nbench/dispatch — ${N} sequential calls per row, the SDK from ${bench.from === 'dist' ? 'dist/' : 'src/ through tsx'}, ${machine()}\n`);
console.log(
  table(
    ['path', 'calls/s', 'per CPU-second', 'p50 ms', 'p95 ms', 'p99 ms', 'p50 vs baseline'],
    results.map((r) => [r.label, Math.round(r.perSec).toLocaleString('en-US'), Math.round(r.perCpuSec).toLocaleString('en-US'), fmt(r.p50, 4), fmt(r.p95, 4), fmt(r.p99, 4), `${(r.p50 / base.p50).toFixed(1)}×`]),
  ),
);
console.log(`\nTargets: ≥ 20,000 calls/s with audit off; ≥ 8,000 calls/s with the SQLite audit row (HMAC-keyed links, checkpoints every 1000 rows). SQLite audit rows written: ${auditRows}; chain verified against the newest checkpoint: ${chainOk}.`);
console.log(`One checkpoint (file sink, fdatasync): p50 ${fmt(cpStats.p50, 3)} ms, p95 ${fmt(cpStats.p95, 3)} ms. Verify of ${auditRows} rows: ${Math.round(verifyMs)} ms. Inclusion proof over ${auditRows} rows: ${Math.round(proveMs)} ms.`);
// One line for CI logs (.ci/run greps it).
const rate = (label: string) => Math.round(results.find((r) => r.label === label)!.perSec);
const withRow = rate('dispatch, audit on (SQLite WAL)');
const withRowCpu = Math.round(results.find((r) => r.label === 'dispatch, audit on (SQLite WAL)')!.perCpuSec);
console.log(
  `target: dispatch ≥ 12,000 calls/s with the SQLite audit row (${withRow.toLocaleString('en-US')} ${withRow >= 12_000 ? 'met' : 'NOT met'}; audit off ${rate('dispatch, audit off').toLocaleString('en-US')}, ` +
    `in-memory audit ${rate('dispatch, audit on (in-memory)').toLocaleString('en-US')}, SQLite with checkpoints on the committing connection ${rate('… checkpoints on the committing connection').toLocaleString('en-US')}; ` +
    `the SQLite row per CPU-second of the calling thread ${withRowCpu.toLocaleString('en-US')}) — ${N} calls per row, load average ${loadavg()[0]!.toFixed(2)}`,
);
