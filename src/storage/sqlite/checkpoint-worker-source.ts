/**
 * The code of the background WAL checkpoint thread, as plain CommonJS (it runs as `new Worker(source, { eval: true })`,
 * so no bundler or test transform ever rewrites it and no file has to be found beside the bundle). It opens its own
 * connection to the database file with the host's better-sqlite3 (`workerData.driverPath`), says `ready`, and runs one
 * `PRAGMA wal_checkpoint(PASSIVE)` whenever the host's commit counter (`cells[4]`) has moved since the last look,
 * looking every `activeMs` while commits come and backing off to `idleMaxMs` while none do. PASSIVE never waits for a lock and never blocks a writer or a reader: it copies what it can
 * of the WAL into the database file and fsyncs it, on this thread instead of the committing one.
 *
 * Progress goes through shared memory (`workerData.cells`, an Int32Array: [0] 1 once the connection is open,
 * [1] checkpoints completed, [2] WAL frames at the last one, [3] of them copied; the host writes [4], its commits), because the host's event loop may not
 * turn for thousands of commits (a loop of awaited appends never yields to it), and the host must see `ready` without it.
 * Messages in: `'close'` (closes the connection; the thread then ends as nothing is left to run).
 * Messages out: `{ type: 'error', message, fatal }` (fatal: the connection could not be opened; the thread ends).
 */
export const CHECKPOINT_WORKER_SOURCE = String.raw`
'use strict';
const { parentPort, workerData } = require('node:worker_threads');
const messageOf = (error) => String((error && error.message) || error);
const cells = workerData.cells;
let db;
try {
  const Database = require(workerData.driverPath);
  db = new Database(workerData.path, { fileMustExist: true, timeout: workerData.busyTimeoutMs });
} catch (error) {
  parentPort.postMessage({ type: 'error', message: messageOf(error), fatal: true });
  process.exit(1);
}
const ACTIVE_MS = workerData.activeMs;
const IDLE_MAX_MS = workerData.idleMaxMs;
const BATCH = workerData.batchCommits;
let checkpointedAt = 0; // the host's commit count when the last checkpoint began
let lastSeen = 0;
let delay = ACTIVE_MS;
let timer;
function checkpoint(commits) {
  checkpointedAt = commits;
  try {
    const row = db.pragma('wal_checkpoint(PASSIVE)')[0];
    Atomics.store(cells, 2, row.log);
    Atomics.store(cells, 3, row.checkpointed);
    Atomics.add(cells, 1, 1);
  } catch (error) {
    parentPort.postMessage({ type: 'error', message: messageOf(error), fatal: false });
  }
}
// Poll the host's commit count: no message and no system call on the commit path. Checkpoint once BATCH commits
// came since the last one (about SQLite's own 1000 pages at ~6 pages a commit, so no more fsyncs than it did), or
// when commits stopped coming (the WAL is left fully copied, and the next writer starts it over). While commits come
// the count is looked at every ACTIVE_MS; while none do, the interval doubles up to IDLE_MAX_MS.
function tick() {
  const commits = Atomics.load(cells, 4);
  const moved = commits !== lastSeen;
  lastSeen = commits;
  if (((commits - checkpointedAt) | 0) >= BATCH || (!moved && commits !== checkpointedAt)) checkpoint(commits);
  delay = moved ? ACTIVE_MS : Math.min(delay * 2, IDLE_MAX_MS);
  timer = setTimeout(tick, delay);
}
parentPort.on('message', (message) => {
  if (message !== 'close') return;
  clearTimeout(timer);
  try { db.close(); } catch (error) { /* closing is best effort */ }
  parentPort.close();
});
Atomics.store(cells, 0, 1);
checkpoint(Atomics.load(cells, 4));
timer = setTimeout(tick, ACTIVE_MS);
`;
