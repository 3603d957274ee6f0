import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { Logger } from '../../util/logger';
import { CHECKPOINT_WORKER_SOURCE } from './checkpoint-worker-source';

/** Options of the background WAL checkpointer (`SqliteStorageOptions.backgroundCheckpoints`; docs/storage.md, "Checkpoints"). */
export interface SqliteBackgroundCheckpointOptions {
  /**
   * Start the checkpoint thread once this connection has committed this many write transactions, so a short-lived
   * process (a CLI command) never pays for a thread. A positive integer.
   * @default 256
   */
  readonly startAfterCommits?: number | undefined;
}

/** SQLite's own `wal_autocheckpoint` (pages): what the connection uses with no thread, or after the thread ended. */
export const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/**
 * The committing connection's `wal_autocheckpoint` while the thread runs: a safety net that keeps the WAL bounded
 * (about 16 MiB at 4 KiB pages) when the thread falls behind, as it does under back-to-back commits, where a PASSIVE
 * checkpoint never finds the WAL idle enough to let the next writer start it over.
 */
export const BACKGROUND_AUTOCHECKPOINT_PAGES = 4000;
const DEFAULT_START_AFTER_COMMITS = 256;
/** How often the thread looks for new commits while they come, and the longest it waits while none do. */
const ACTIVE_MS = 10;
const IDLE_MAX_MS = 1_000;
/** Commits between the thread's checkpoints while commits keep coming (~6 pages each: about SQLite's own 1000 pages). */
const BATCH_COMMITS = 128;
/** How often, in commits, the committing connection looks at the thread's state (its commit count is published at each). */
const CHECK_EVERY_COMMITS = 16;
/** At most one warning per this long for checkpoint failures (each is also counted in the status). */
const WARN_EVERY_MS = 60_000;
/** How long `close` waits for the thread to close its connection before it terminates it. */
const CLOSE_WAIT_MS = 2_000;

/** Where the checkpointer is: `waiting` for its first commits, `starting`, `running`, `stopped` (failed; SQLite's own autocheckpoint runs), `closed`. */
export type WalCheckpointerState = 'waiting' | 'starting' | 'running' | 'stopped' | 'closed';

/** What the checkpointer has done so far (for tests and diagnostics). */
export interface WalCheckpointerStatus {
  readonly state: WalCheckpointerState;
  /** Checkpoints the thread has completed. */
  readonly checkpoints: number;
  /** Checkpoints or starts that failed. */
  readonly failures: number;
  readonly lastError: string | undefined;
  /** WAL frames when the thread's last checkpoint ran, and how many of them it had copied into the database file. */
  readonly walFrames: number;
  readonly checkpointedFrames: number;
}

/** Runs WAL checkpoints of one file database on a worker thread with its own connection. */
export interface WalCheckpointer {
  /** Called after every commit of the committing connection (the hot path: a counter and a comparison). */
  noteCommit(): void;
  status(): WalCheckpointerStatus;
  /** Resolves after the thread's next completed checkpoint (or once it is not running). For tests. */
  nextCheckpoint(): Promise<void>;
  /** End the thread as if it had died (the connection falls back to SQLite's own autocheckpoint). For tests. */
  kill(): Promise<void>;
  /** Close the thread's connection and end the thread; idempotent. */
  close(): Promise<void>;
}

/** Options of {@link createWalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** The file the committing connection has open (absolute, or a `file:` URI). */
  readonly path: string;
  /** The committing connection: its `wal_autocheckpoint` is raised while the thread runs and restored after. */
  readonly db: Database.Database;
  readonly logger: Logger;
  readonly busyTimeoutMs: number;
  readonly startAfterCommits?: number | undefined;
}

const registry = new WeakMap<object, WalCheckpointer>();

/** Remember the checkpointer of a storage (so tests can observe it without a public handle). */
export function registerWalCheckpointer(owner: object, checkpointer: WalCheckpointer): void {
  registry.set(owner, checkpointer);
}

/** The background checkpointer of a SQLite storage, or `undefined` (in memory, or turned off). For tests. */
export function walCheckpointerOf(owner: object): WalCheckpointer | undefined {
  return registry.get(owner);
}

type WorkerMessage = { type: 'error'; message: string; fatal: boolean };

/**
 * Move WAL checkpoints off the committing connection. Nothing starts at open: after `startAfterCommits` commits a
 * worker thread opens its own connection to the file (unref'd, so it never keeps the process alive) and from then
 * on runs a `wal_checkpoint(PASSIVE)` every 128 commits and whenever commits stop coming, going by the commit count it
 * polls (every 10 ms while commits come, backing off to 1 s while none do); the commit path only stores that count
 * in shared memory. Once it is ready the committing connection's own autocheckpoint is raised to
 * {@link BACKGROUND_AUTOCHECKPOINT_PAGES} (a safety net, not off). If the thread cannot start or dies, the failure
 * is logged, the autocheckpoint goes back to SQLite's default and nothing else changes. Commits and their durability are untouched: a checkpoint only copies committed pages.
 * The thread reports progress through shared memory, read on the commit path, because the host's event loop may not
 * turn for thousands of commits.
 */
export function createWalCheckpointer(options: WalCheckpointerOptions): WalCheckpointer {
  const { path, db, logger, busyTimeoutMs } = options;
  const startAfter = options.startAfterCommits ?? DEFAULT_START_AFTER_COMMITS;
  /** [0] ready, [1] checkpoints completed, [2] WAL frames at the last one, [3] of them copied (written by the thread); [4] commits (written here). */
  let cells: Int32Array | undefined;
  let state: WalCheckpointerState = 'waiting';
  let thread: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  let commits = 0;
  let next = startAfter;
  let failures = 0;
  let lastError: string | undefined;
  let lastWarnAt = -Infinity;
  /** The autocheckpoint the connection should have; applied right after a commit (never while a statement runs). */
  let wantedPages: number | undefined;
  /** The current thread's end was already reported (an `error` event or a fatal message comes before its `exit`). */
  let reportedFatal = false;

  const applyAutocheckpoint = () => {
    if (wantedPages === undefined || !db.open) return;
    try {
      db.pragma(`wal_autocheckpoint = ${wantedPages}`);
      wantedPages = undefined;
    } catch (error) {
      logger.debug('sqlite: could not set wal_autocheckpoint yet; retrying after the next commit', { error: messageOf(error) });
    }
  };

  const fail = (message: string, fatal: boolean) => {
    failures++;
    lastError = message;
    const now = Date.now();
    if (fatal || now - lastWarnAt >= WARN_EVERY_MS) {
      lastWarnAt = now;
      logger.warn(
        fatal
          ? 'sqlite: the background checkpoint thread stopped; SQLite checkpoints on the committing connection again'
          : 'sqlite: a background WAL checkpoint failed; the next one retries',
        { path, error: message, failures },
      );
    }
  };

  /** The thread is gone (failed to start, died, or was killed): back to SQLite's own autocheckpoint. */
  const stop = () => {
    thread = undefined;
    if (state === 'closed') return;
    state = 'stopped';
    next = commits + 1; // the next commit applies the autocheckpoint if it cannot be set now
    wantedPages = DEFAULT_AUTOCHECKPOINT_PAGES;
    applyAutocheckpoint();
  };

  const start = () => {
    state = 'starting';
    cells = new Int32Array(new SharedArrayBuffer(20));
    reportedFatal = false;
    try {
      const spawned = spawnThread({ path, busyTimeoutMs, cells }, {
        message: (message) => {
          if (message.fatal) reportedFatal = true;
          fail(message.message, message.fatal);
        },
        error: (error) => {
          reportedFatal = true;
          fail(error.message, true);
        },
        exit: (code) => {
          if (state !== 'closed' && !reportedFatal) fail(`the checkpoint thread exited (code ${code})`, true);
          stop();
        },
      });
      thread = spawned.worker;
      exited = spawned.exited;
    } catch (error) {
      fail(messageOf(error), true);
      stop();
    }
  };

  /** Once the thread's connection is open: the committing connection's autocheckpoint becomes the safety net. */
  const startedRunning = (): boolean => {
    if (cells === undefined || Atomics.load(cells, 0) !== 1) return false;
    state = 'running';
    wantedPages = BACKGROUND_AUTOCHECKPOINT_PAGES;
    return true;
  };

  const checkpointCount = () => (cells === undefined ? 0 : Atomics.load(cells, 1));

  return {
    noteCommit() {
      commits++;
      if (cells !== undefined) Atomics.store(cells, 4, commits | 0);
      if (commits < next) return;
      next = commits + CHECK_EVERY_COMMITS;
      if (state === 'starting' && !startedRunning()) return;
      applyAutocheckpoint();
      if (state === 'waiting') start();
      else if (state !== 'running' && wantedPages === undefined) next = Infinity;
    },
    status: () => ({
      state: state === 'starting' && startedRunning() ? 'running' : state,
      checkpoints: checkpointCount(),
      failures,
      lastError,
      walFrames: cells === undefined ? 0 : Atomics.load(cells, 2),
      checkpointedFrames: cells === undefined ? 0 : Atomics.load(cells, 3),
    }),
    async nextCheckpoint() {
      const before = checkpointCount();
      while (checkpointCount() === before && (state === 'running' || state === 'starting')) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    kill: () => endThread(thread, exited, 'kill'),
    async close() {
      if (state === 'closed') return;
      state = 'closed';
      next = Infinity;
      await endThread(thread, exited, 'close');
      thread = undefined;
    },
  };
}

/** Start the thread (listeners first, then `unref`: adding a 'message' listener refs the thread's port again). */
function spawnThread(
  data: { path: string; busyTimeoutMs: number; cells: Int32Array },
  on: { message(m: WorkerMessage): void; error(e: Error): void; exit(code: number): void },
): { worker: Worker; exited: Promise<void> } {
  // node:worker_threads and the driver's path load with the first start, not with the package.
  const require = createRequire(import.meta.url);
  const { Worker: WorkerThread } = require('node:worker_threads') as typeof import('node:worker_threads');
  const worker = new WorkerThread(CHECKPOINT_WORKER_SOURCE, {
    eval: true,
    workerData: { ...data, driverPath: require.resolve('better-sqlite3'), activeMs: ACTIVE_MS, idleMaxMs: IDLE_MAX_MS, batchCommits: BATCH_COMMITS },
    // The thread holds one connection and runs one pragma at a time; its heap stays small.
    resourceLimits: { maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 8 },
  });
  worker.on('message', (m: WorkerMessage) => {
    if (m.type === 'error') on.message(m);
  });
  worker.on('error', on.error);
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', (code) => {
      on.exit(code);
      resolve();
    });
  });
  worker.unref();
  return { worker, exited };
}

/** `close`: the thread closes its connection and ends (terminated if it has not within 2 s); `kill`: terminated at once. */
async function endThread(worker: Worker | undefined, exited: Promise<void>, how: 'close' | 'kill'): Promise<void> {
  if (worker === undefined) return;
  // Held until the thread has ended (an unref'd thread's `exit` would never come if nothing else kept the loop alive).
  worker.ref();
  if (how === 'kill') {
    await worker.terminate();
    await exited;
    return;
  }
  worker.postMessage('close');
  const timer = setTimeout(() => void worker.terminate(), CLOSE_WAIT_MS);
  await exited;
  clearTimeout(timer);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
