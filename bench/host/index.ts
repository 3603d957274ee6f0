/**
 * How fast this host is at what the absolute goals of the other benches depend on, so a reader can tell a slow host
 * from a regression: `node -e 1` from spawn to exit (process start: the floor of `bench/cli`), a SQLite read
 * transaction (`PRAGMA data_version`, what each cached read of a turn costs) and a one-row SQLite write transaction
 * (`BEGIN IMMEDIATE`, an INSERT, `COMMIT` in WAL with `synchronous = NORMAL`, as the SDK opens files: what each commit
 * of a turn or a dispatch costs), the same with one row in each of 16 tables (16 WAL frames, as many as a SQLite turn's
 * end commit writes: what a commit costs per page), and a pure-JavaScript loop (JSON of a 5 KB object). Nothing of the
 * SDK runs here.
 * `.ci/run` prints its `host:` line before the benchmark lines. Run: `npm run bench -- host`.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { fmt, machine, summarize, table } from '../lib/stats';

/** Figures of the host the goals were set on (the tenth round of issue 41, docs/runtime.md). */
const REFERENCE = { nodeStartMs: 40, readTxUs: 2.2 } as const;

const nodeStart: number[] = [];
for (let i = 0; i < 7; i++) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, ['-e', '1']);
  if (r.status !== 0) throw new Error(`node -e 1 exited with ${String(r.status)}`);
  nodeStart.push(performance.now() - t0);
}

const dir = mkdtempSync(path.join(tmpdir(), 'minara-host-'));
const db = new Database(path.join(dir, 'host.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
// As with the SDK's checkpoint thread: no checkpoint inside a timed commit; the WAL is checkpointed between batches.
db.pragma('wal_autocheckpoint = 0');
db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL)');
/** A turn's end commit writes about 16 pages (docs/runtime.md, twelfth round): one row into each of 16 tables. */
const PAGES = 16;
for (let k = 0; k < PAGES; k++) db.exec(`CREATE TABLE p${k} (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`);
const pageInserts = Array.from({ length: PAGES }, (_, k) => db.prepare(`INSERT INTO p${k} (v) VALUES (?)`));
const version = db.prepare('PRAGMA data_version').pluck();
const begin = db.prepare('BEGIN IMMEDIATE');
const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
const commit = db.prepare('COMMIT');
/**
 * Per-iteration µs of `fn`, in batches of 100 (one timer read per batch), after a warm-up; the WAL is checkpointed
 * between batches, untimed (the next commit then writes the WAL from its start again, over pages the file already has).
 */
const micro = (batches: number, fn: () => void): number[] => {
  for (let i = 0; i < 1000; i++) fn();
  const out: number[] = [];
  for (let b = 0; b < batches; b++) {
    db.pragma('wal_checkpoint(RESTART)');
    const t0 = performance.now();
    for (let i = 0; i < 100; i++) fn();
    out.push(((performance.now() - t0) * 1000) / 100);
  }
  return out;
};
const readTx = micro(100, () => version.get());
const writeTx = micro(30, () => {
  begin.run();
  insert.run('x'.repeat(200));
  commit.run();
});
const pagesTx = micro(10, () => {
  begin.run();
  for (const statement of pageInserts) statement.run('x'.repeat(200));
  commit.run();
});
const doc = { items: Array.from({ length: 50 }, (_, i) => ({ id: i, symbol: `SYM${i}`, price: i * 1.5, note: 'n'.repeat(60) })) };
const json = micro(100, () => JSON.parse(JSON.stringify(doc)));
db.close();
rmSync(dir, { recursive: true, force: true });

const start = summarize(nodeStart), read = summarize(readTx), write = summarize(writeTx), pages = summarize(pagesTx), js = summarize(json);
console.log(`bench/host — ${machine()}, load average ${loadavg()[0]!.toFixed(2)}`);
console.log(table(['measure', 'p50', 'p95', 'reference host'], [
  ['node -e 1, spawn to exit (ms, 7 runs)', fmt(start.p50), fmt(start.p95), `${REFERENCE.nodeStartMs}`],
  ['SQLite read transaction, PRAGMA data_version (µs)', fmt(read.p50), fmt(read.p95), `${REFERENCE.readTxUs}`],
  ['SQLite write transaction, one 200-byte row, WAL (µs)', fmt(write.p50), fmt(write.p95), '—'],
  [`SQLite write transaction, a row in each of ${PAGES} tables (${PAGES} WAL frames, µs)`, fmt(pages.p50), fmt(pages.p95), '—'],
  ['JSON round trip of a 5 KB object (µs)', fmt(js.p50), fmt(js.p95), '—'],
]));
console.log(
  `host: node -e 1 ${fmt(start.p50, 1)} ms (reference ${REFERENCE.nodeStartMs}), SQLite read transaction ${fmt(read.p50, 2)} µs (reference ${REFERENCE.readTxUs}), ` +
    `write transaction ${fmt(write.p50, 1)} µs (${PAGES} pages: ${fmt(pages.p50, 1)} µs), JSON round trip ${fmt(js.p50, 1)} µs — load average ${loadavg()[0]!.toFixed(2)}; a slower host reads the absolute goals below as missed`,
);
