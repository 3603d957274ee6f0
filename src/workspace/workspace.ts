import { MinaraError } from '../errors/index';
import type { CallSource } from '../safety/permission-tier';
import { silentLogger } from '../util/logger';
import { archiveBootstrap } from './bootstrap';
import { appendDailyLog, type JournalTurn } from './daily-log';
import { startDreamScheduler, type DreamScheduler } from './dreaming/scheduler';
import { type DreamTickResult, runDreamTick } from './dreaming/task';
import { readEditableFile, type WorkspaceFileContent, type WorkspaceWriteOptions, type WorkspaceWriteResult, writeEditableFile } from './editor';
import { createFileCache, type WorkspaceFileCache } from './file-cache';
import { type HeartbeatInput, nextHeartbeat } from './heartbeat';
import { type CreateWorkspaceOptions, resolveWorkspaceSettings, type WorkspaceSettings } from './options';
import { buildPromptBlocks, type WorkspaceNotice, type WorkspacePromptBlocks } from './prompt-blocks';
import { atomicWriteConfined, atomicWriteConfinedSync, readConfined, statWritten } from './safe-fs';
import { type SeedResult, seedWorkspaceIfMissing } from './seed';
import { createSoulChangeDetector } from './soul-state';
import { createTurnEndHook, type TurnEndInput, type TurnEndResult } from './turn-end';
import { withWriteLock } from './write-lock';

/** Options of `loadPromptBlocks`. */
export interface LoadPromptBlocksOptions {
  /** Who started the turn; drives per-source filtering. @default 'user' */
  readonly source?: CallSource | undefined;
  /** The session the blocks are for (reserved for per-session journal focus; blocks do not vary by it today). */
  readonly sessionId?: string | undefined;
}

/** Input of `appendDailyLog`. */
export interface DailyLogInput {
  readonly sessionId: string;
  readonly surface: string;
  readonly summary?: string | undefined;
  readonly turns?: readonly JournalTurn[] | undefined;
  readonly openLoops?: readonly string[] | undefined;
}

/** The markdown workspace: identity, curated memory and between-session state on disk. */
export interface Workspace {
  /** Absolute workspace directory. */
  readonly dir: string;
  /** Settings after defaults. */
  readonly settings: WorkspaceSettings;
  /** Copy missing templates in (idempotent; never overwrites; BOOTSTRAP.md only into a brand-new workspace). */
  seed(): Promise<SeedResult>;
  /** The workspace prompt blocks for one turn, filtered by source. */
  loadPromptBlocks(options?: LoadPromptBlocksOptions): Promise<WorkspacePromptBlocks>;
  /** Read a whitelisted file with its sha256 for optimistic concurrency. */
  readFile(name: string): Promise<WorkspaceFileContent>;
  /** Write a whitelisted file if it still has `expectedSha256`; otherwise `WorkspaceConflictError`. */
  writeFile(name: string, content: string, options: WorkspaceWriteOptions): Promise<WorkspaceWriteResult>;
  /** Rewrite HEARTBEAT.md's state sections, keeping `## Schedule` byte for byte. */
  writeHeartbeat(input: HeartbeatInput): Promise<void>;
  /** Append one entry to `memory/YYYY-MM-DD-<session>.md`; returns the path written. */
  appendDailyLog(input: DailyLogInput): Promise<string>;
  /** Archive BOOTSTRAP.md as `BOOTSTRAP.md.done.<timestamp>`; `undefined` when there is none. */
  completeBootstrap(): Promise<string | undefined>;
  /** The end-of-turn hook: heartbeat (when on), journal every N turns (when on), BOOTSTRAP_DONE. */
  onTurnEnd(input: TurnEndInput): Promise<TurnEndResult>;
  /** One dreaming pass now (whatever `dreaming.enabled` says); needs `dreaming.model`. */
  runDreamTick(options?: { signal?: AbortSignal }): Promise<DreamTickResult>;
  /** Start the interval scheduler when dreaming is enabled (a no-op handle otherwise). */
  startDreamScheduler(): DreamScheduler;
  /** Stop background timers. */
  close(): void;
}

/** A queue that runs one write at a time, in call order (an exclusive workspace's in-process write lock). */
function createWriteQueue(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const run = tail.then(fn, fn);
    tail = run.catch(() => undefined);
    return run;
  };
}

/**
 * The heartbeat writer: read HEARTBEAT.md (from the cache when the workspace is exclusive), rewrite its state
 * sections, replace it atomically (fsynced unless exclusive), all in the workspace's write order.
 */
function createHeartbeatWriter(deps: {
  readonly root: string;
  readonly settings: WorkspaceSettings;
  readonly cache: WorkspaceFileCache;
  readonly now: () => Date;
  readonly inOrder: <T>(fn: () => Promise<T>) => Promise<T>;
}): (input: HeartbeatInput) => Promise<void> {
  const { root, settings, cache, now, inOrder } = deps;
  async function readHeartbeat(): Promise<string | undefined> {
    if (settings.exclusive) {
      const file = await cache.load('HEARTBEAT.md');
      if (file.status === 'ok') return file.content;
      if (file.status === 'missing') return undefined;
    }
    return (await readConfined(root, 'HEARTBEAT.md', settings.maxReadBytes))?.content;
  }
  return async function writeHeartbeat(input: HeartbeatInput): Promise<void> {
    if (typeof input?.sessionId !== 'string' || input.sessionId === '') {
      throw new MinaraError('INVALID_ARGUMENT', 'sessionId: expected a non-empty string.');
    }
    if (!Number.isInteger(input.turnCount) || input.turnCount < 0) {
      throw new MinaraError('INVALID_ARGUMENT', `turnCount: expected a non-negative integer, got ${String(input.turnCount)}.`);
    }
    await inOrder(async () => {
      const previous = await readHeartbeat();
      const content = nextHeartbeat(previous, input, now());
      if (settings.exclusive) {
        // The only writer, no fsync: synchronous calls (microseconds each) instead of seven thread-pool round trips.
        const written = atomicWriteConfinedSync(root, 'HEARTBEAT.md', content);
        await cache.wrote('HEARTBEAT.md', content, () => Promise.resolve(written));
        return;
      }
      const written = await atomicWriteConfined(root, 'HEARTBEAT.md', content);
      await cache.wrote('HEARTBEAT.md', content, () => statWritten(written));
    });
  };
}

/**
 * Create the workspace over a directory. Nothing is written until you call a method.
 *
 * @example
 * ```ts
 * const workspace = createWorkspace({ ...workspaceConfigFromEnv(process.env), logger });
 * await workspace.seed();
 * const blocks = await workspace.loadPromptBlocks({ source: 'user', sessionId });
 * // instructions: [identity (cached), dynamic, bootstrap?, notices…, then derived layers]
 * await workspace.onTurnEnd({ sessionId, surface: 'repl', turnCount: 1, replyText });
 * ```
 */
export function createWorkspace(options: CreateWorkspaceOptions = {}): Workspace {
  const settings = resolveWorkspaceSettings(options);
  const { now = () => new Date(), logger = silentLogger } = options;
  const root = settings.dir;
  const cache = createFileCache(root, settings.maxReadBytes, { trustOwnWrites: settings.exclusive });
  const soul = createSoulChangeDetector(root, now, logger);
  const schedulers = new Set<DreamScheduler>();
  // An exclusive workspace orders its own writes in process; any other takes the cross-process file lock.
  const inOrder = settings.exclusive ? createWriteQueue() : <T>(fn: () => Promise<T>) => withWriteLock(root, logger, fn);

  const writeHeartbeat = createHeartbeatWriter({ root, settings, cache, now, inOrder });

  async function appendJournal(input: DailyLogInput): Promise<string> {
    if (typeof input?.sessionId !== 'string' || input.sessionId === '') {
      throw new MinaraError('INVALID_ARGUMENT', 'sessionId: expected a non-empty string.');
    }
    const rel = await appendDailyLog(root, { ...input, at: now() }, settings.maxReadBytes);
    cache.invalidate(rel);
    return rel;
  }

  async function completeBootstrap(): Promise<string | undefined> {
    const archived = await withWriteLock(root, logger, () => archiveBootstrap(root, now()));
    cache.invalidate('BOOTSTRAP.md');
    if (archived) logger.info('bootstrap_completed', { module: 'workspace/bootstrap', archivedAs: archived });
    return archived;
  }

  async function tick(signal?: AbortSignal): Promise<DreamTickResult> {
    const model = options.dreaming?.model;
    if (model === undefined) throw new MinaraError('MODEL_NOT_CONFIGURED', 'dreaming.model: runDreamTick needs a LanguageModel.');
    const result = await runDreamTick({
      root,
      model,
      now,
      logger,
      settings: settings.dreaming,
      listDailyLogs: () => cache.listDailyLogs(),
      maxReadBytes: settings.maxReadBytes,
      signal,
    });
    // A dream appends to MEMORY.md behind the cache's back: an exclusive workspace's cache must hear of it.
    cache.invalidate('MEMORY.md');
    return result;
  }

  return {
    dir: root,
    settings,
    async seed() {
      const result = await seedWorkspaceIfMissing(root);
      cache.invalidate();
      return result;
    },
    async loadPromptBlocks(opts = {}) {
      const source = opts.source ?? 'user';
      const extraNotices: WorkspaceNotice[] = [];
      if (source === 'user') {
        const soulFile = await cache.load('SOUL.md');
        if (soulFile.status === 'ok') {
          const notice = await soul.check(soulFile.sha256());
          if (notice) extraNotices.push(notice);
        }
      }
      const blocks = await buildPromptBlocks(cache, settings.prompt, { source, now: now(), root, extraNotices });
      for (const f of blocks.files) {
        if (f.status === 'refused' || f.status === 'too-large') logger.warn('workspace_file_not_loaded', { module: 'workspace/loader', file: f.file, status: f.status, reason: f.reason });
      }
      return blocks;
    },
    readFile: (name) => readEditableFile(root, name, settings.maxReadBytes),
    async writeFile(name, content, writeOptions) {
      const write = async () => {
        const result = await writeEditableFile(root, name, content, writeOptions, { maxBytes: settings.maxReadBytes, logger });
        cache.invalidate(result.name);
        return result;
      };
      // The editor takes the file lock itself; an exclusive workspace also queues it behind its own heartbeat writes.
      return settings.exclusive ? inOrder(write) : write();
    },
    writeHeartbeat,
    appendDailyLog: appendJournal,
    completeBootstrap,
    onTurnEnd: createTurnEndHook({
      heartbeatEnabled: settings.heartbeat,
      dailyLog: settings.dailyLog,
      logger,
      now,
      writeHeartbeat,
      appendJournal,
      completeBootstrap,
    }),
    runDreamTick: (o = {}) => tick(o.signal),
    startDreamScheduler() {
      if (!settings.dreaming.enabled) {
        logger.info('dreaming_disabled', { module: 'workspace/dreaming-task', event: 'dreaming_disabled' });
        return { stop() {}, running: false };
      }
      const scheduler = startDreamScheduler({ intervalMs: settings.dreaming.intervalHours * 3_600_000, tick: () => tick(), logger });
      schedulers.add(scheduler);
      return scheduler;
    },
    close() {
      for (const s of schedulers) s.stop();
      schedulers.clear();
    },
  };
}
