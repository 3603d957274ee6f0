/**
 * The SQLite read caches (capability switches, pending approvals, kv, sessions and the last message seq) never
 * answer stale: a write committed by another connection, in this process or another, is seen on the very next
 * read; this connection's own writes are seen; a rolled-back write is not.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier, silentLogger } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { z } from 'zod';
import { createSqliteStorage, type SqliteStorage } from '@minara/agent/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { type CacheHooks, type CommitTracker, createReadCache } from '../../src/storage/sqlite/read-cache';
import { approvalRecord as approval } from './contract';
import { tempDir } from './helpers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OPS = fileURLToPath(new URL('./fixtures/sqlite-ops.ts', import.meta.url));

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Two connections (two storages) on one fresh file. */
function twoConnections(): { a: SqliteStorage; b: SqliteStorage; path: string } {
  const { dir, cleanup } = tempDir();
  const path = join(dir, 'shared.db');
  const a = createSqliteStorage({ path, logger: silentLogger });
  const b = createSqliteStorage({ path, logger: silentLogger });
  cleanups.push(cleanup, () => a.close(), () => b.close());
  return { a, b, path };
}

/** Run storage operations in another OS process (its own connection) and wait for it to exit. */
function inAnotherProcess(path: string, ops: ReadonlyArray<readonly unknown[]>): unknown[] {
  const run = spawnSync(process.execPath, ['--import', 'tsx', OPS, path, JSON.stringify(ops)], { cwd: ROOT, encoding: 'utf8' });
  expect(run.status, run.stderr).toBe(0);
  const line = run.stdout.split('\n').find((l) => l.startsWith('done '));
  return JSON.parse(line!.slice(5)) as unknown[];
}

const message = (n: number) => ({ role: 'user' as const, json: JSON.stringify({ n }), createdAt: '2026-01-01T00:00:00.000Z' });
const now = '2026-01-01T00:00:00.000Z';

/** Run `writes` in one batch that a failing write rolls back; the batch throws. */
function rolledBack(storage: SqliteStorage, ...writes: Array<() => Promise<unknown>>): void {
  expect(() =>
    storage.batchWrites!(() => {
      for (const write of writes) void write().catch(() => undefined);
      void storage.conversations.appendMessages('no-such-session', [message(0)]).catch(() => undefined);
    }),
  ).toThrow(/rolled back/);
}

describe('capability switches (an operator stop must take effect on the very next call)', () => {
  it('a switch turned off by another connection is seen on the next read, and turned on again', async () => {
    const { a, b } = twoConnections();
    expect(await a.controls.listDisabledCapabilities({ userId: 'u1' })).toEqual([]);
    expect(await a.controls.listDisabledCapabilities({ userId: 'u1' })).toEqual([]);
    await b.controls.setCapability({ userId: 'u1', toolSet: 'trade', enabled: false, at: now, by: 'operator' });
    expect((await a.controls.listDisabledCapabilities({ userId: 'u1' })).map((s) => s.toolSet)).toEqual(['trade']);
    await b.controls.setCapability({ userId: 'u1', toolSet: 'trade', enabled: true, at: now });
    expect(await a.controls.listDisabledCapabilities({ userId: 'u1' })).toEqual([]);
  });

  it('a stop written by another OS process is seen on the next read', async () => {
    const { a, path } = twoConnections();
    expect(await a.controls.listDisabledCapabilities({ userId: 'u1' })).toEqual([]);
    inAnotherProcess(path, [['controls', 'setCapability', { userId: 'u1', toolSet: 'trade', enabled: false, at: now, by: 'operator' }]]);
    expect((await a.controls.listDisabledCapabilities({ userId: 'u1' })).map((s) => s.toolSet)).toEqual(['trade']);
    // The emergency stop flag lives in kv: the same holds for it.
    expect(await a.meta.get('safety:emergency-stop')).toBeUndefined();
    inAnotherProcess(path, [['meta', 'set', 'safety:emergency-stop', '{"engaged":true}']]);
    expect(await a.meta.get('safety:emergency-stop')).toBe('{"engaged":true}');
  });

  it("this connection's own switch is seen; a rolled-back one is not", async () => {
    const { a } = twoConnections();
    expect(await a.controls.listDisabledCapabilities({ userId: 'u1' })).toEqual([]);
    await a.controls.setCapability({ userId: 'u1', toolSet: 'trade', enabled: false, at: now });
    expect((await a.controls.listDisabledCapabilities({ userId: 'u1' })).map((s) => s.toolSet)).toEqual(['trade']);
    rolledBack(a, () => a.controls.setCapability({ userId: 'u1', toolSet: 'trade', enabled: true, at: now }), () => a.controls.setCapability({ userId: 'u1', toolSet: 'read', enabled: false, at: now }));
    expect((await a.controls.listDisabledCapabilities({ userId: 'u1' })).map((s) => s.toolSet)).toEqual(['trade']);
  });
});

describe('pending approvals of a session', () => {
  it('an approval created or decided by another connection or process is seen on the next list', async () => {
    const { a, b, path } = twoConnections();
    const pending = async () => (await a.approvals.list({ status: 'pending', sessionId: 's1', limit: 20 })).map((r) => r.id);
    expect(await pending()).toEqual([]);
    await b.approvals.create(approval({ id: 'apr_1', sessionId: 's1' }));
    expect(await pending()).toEqual(['apr_1']);
    await b.approvals.transition('apr_1', ['pending'], 'approved', { decidedAt: now });
    expect(await pending()).toEqual([]);
    inAnotherProcess(path, [['approvals', 'create', approval({ id: 'apr_2', sessionId: 's1' })]]);
    expect(await pending()).toEqual(['apr_2']);
  });

  it("this connection's own approvals are seen; rolled-back ones are not", async () => {
    const { a } = twoConnections();
    const pending = async () => (await a.approvals.list({ status: 'pending', sessionId: 's1', limit: 20 })).map((r) => r.id);
    expect(await pending()).toEqual([]);
    await a.approvals.create(approval({ id: 'apr_1', sessionId: 's1' }));
    expect(await pending()).toEqual(['apr_1']);
    rolledBack(a, () => a.approvals.create(approval({ id: 'apr_2', sessionId: 's1' })), () => a.approvals.transition('apr_1', ['pending'], 'denied', { decidedAt: now }));
    expect(await pending()).toEqual(['apr_1']);
    await a.approvals.transition('apr_1', ['pending'], 'denied', { decidedAt: now });
    expect(await pending()).toEqual([]);
  });
});

describe('kv (meta.get)', () => {
  it('a value set or deleted by another connection is seen on the next read', async () => {
    const { a, b } = twoConnections();
    expect(await a.meta.get('k')).toBeUndefined();
    await b.meta.set('k', 'one');
    expect(await a.meta.get('k')).toBe('one');
    expect(await a.meta.get('k')).toBe('one');
    await b.meta.set('k', 'two');
    expect(await a.meta.get('k')).toBe('two');
    await b.meta.delete('k');
    expect(await a.meta.get('k')).toBeUndefined();
  });

  it("this connection's own writes are seen; rolled-back ones are not", async () => {
    const { a, b } = twoConnections();
    await a.meta.set('k', 'one');
    expect(await a.meta.get('k')).toBe('one');
    await a.conversations.ensureSession({ id: 's', now });
    // The append reads data_version first, so the kv writes after it would be cached at the commit.
    rolledBack(a, () => a.conversations.appendMessages('s', [message(1)]), () => a.meta.set('k', 'two'), () => a.meta.set('other', 'x'));
    expect(await a.meta.get('k')).toBe('one');
    rolledBack(a, () => a.conversations.appendMessages('s', [message(1)]), () => a.meta.delete('k'));
    expect(await a.meta.get('k')).toBe('one');
    expect(await a.meta.get('other')).toBeUndefined();
    expect(await b.meta.get('k')).toBe('one');
    await a.meta.delete('k');
    expect(await a.meta.get('k')).toBeUndefined();
  });

  it('rows changed through storage.handle, in a write or directly on the connection, are seen', async () => {
    const { a } = twoConnections();
    await a.meta.set('k', 'one');
    expect(await a.meta.get('k')).toBe('one');
    a.handle.write('host.kv', (db) => db.prepare("UPDATE kv SET value = 'two' WHERE key = 'k'").run());
    expect(await a.meta.get('k')).toBe('two');
    expect(await a.meta.get('k')).toBe('two');
    const db = a.handle.db;
    expect(await a.meta.get('k')).toBe('two');
    db.exec("UPDATE kv SET value = 'three' WHERE key = 'k'");
    expect(await a.meta.get('k')).toBe('three');
  });

  it('a domain read inside a host write sees what the host changed there', async () => {
    const { a } = twoConnections();
    await a.meta.set('k', 'one');
    expect(await a.meta.get('k')).toBe('one');
    let seen: Promise<string | undefined> | undefined;
    a.handle.write('host.kv', (db) => {
      db.prepare("UPDATE kv SET value = 'two' WHERE key = 'k'").run();
      seen = a.meta.get('k'); // its statement runs now, inside the host's transaction
    });
    expect(await seen).toBe('two');
  });

  it('a statement taken from storage.handle.prepare and run later is seen', async () => {
    const { a } = twoConnections();
    await a.meta.set('k', 'one');
    const update = a.handle.prepare("UPDATE kv SET value = 'two' WHERE key = 'k'");
    expect(await a.meta.get('k')).toBe('one');
    update.run();
    expect(await a.meta.get('k')).toBe('two');
  });

  it('a value read inside a transaction after writing it there is not kept when the transaction rolls back', async () => {
    const { a } = twoConnections();
    await a.meta.set('k', 'one');
    await a.controls.setCapability({ userId: 'u1', toolSet: 'trade', enabled: false, at: now });
    // Each call's statements run synchronously inside the batch (the reads see the batch's own writes).
    rolledBack(
      a,
      () => a.meta.set('k', 'two'),
      () => a.controls.setCapability({ userId: 'u1', toolSet: 'trade', enabled: true, at: now }),
      () => a.meta.get('k'),
      () => a.controls.listDisabledCapabilities({ userId: 'u1' }),
    );
    expect(await a.meta.get('k')).toBe('one');
    expect(await a.controls.listDisabledCapabilities({ userId: 'u1' })).toHaveLength(1);
  });
});

describe('sessions and the last message seq', () => {
  it('messages appended by another connection or process are counted: seqs stay contiguous', async () => {
    const { a, b, path } = twoConnections();
    await a.conversations.ensureSession({ id: 's', now });
    expect((await a.conversations.appendMessages('s', [message(1)])).map((m) => m.seq)).toEqual([1]);
    expect((await b.conversations.appendMessages('s', [message(2), message(3)])).map((m) => m.seq)).toEqual([2, 3]);
    expect((await a.conversations.appendMessages('s', [message(4)])).map((m) => m.seq)).toEqual([4]);
    inAnotherProcess(path, [['conversations', 'appendMessages', 's', [message(5)]]]);
    expect((await a.conversations.appendMessages('s', [message(6)])).map((m) => m.seq)).toEqual([6]);
    await b.conversations.replaceMessages('s', [message(7)]);
    expect((await a.conversations.appendMessages('s', [message(8)])).map((m) => m.seq)).toEqual([2]);
    expect((await a.conversations.listMessages('s')).map((m) => JSON.parse(m.json).n)).toEqual([7, 8]);
  });

  it("a transcript (listMessages) shows other connections' appends and replacements, own appends, and not rolled-back ones", async () => {
    const { a, b, path } = twoConnections();
    const ns = async (query?: { afterSeq?: number; limit?: number }) => (await a.conversations.listMessages('s', query)).map((m) => [m.seq, JSON.parse(m.json).n]);
    await a.conversations.ensureSession({ id: 's', now });
    expect(await ns()).toEqual([]);
    await a.conversations.appendMessages('s', [message(1), message(2)]);
    expect(await ns()).toEqual([[1, 1], [2, 2]]);
    await b.conversations.appendMessages('s', [message(3)]);
    expect(await ns()).toEqual([[1, 1], [2, 2], [3, 3]]);
    inAnotherProcess(path, [['conversations', 'appendMessages', 's', [message(4)]]]);
    expect(await ns({ afterSeq: 2 })).toEqual([[3, 3], [4, 4]]);
    expect(await ns()).toEqual([[1, 1], [2, 2], [3, 3], [4, 4]]);
    rolledBack(a, () => a.conversations.appendMessages('s', [message(5)]), () => a.conversations.listMessages('s'));
    expect(await ns()).toEqual([[1, 1], [2, 2], [3, 3], [4, 4]]);
    await a.conversations.appendMessages('s', [message(6)]);
    expect(await ns({ afterSeq: 1, limit: 2 })).toEqual([[2, 2], [3, 3]]);
    expect(await ns({ afterSeq: 4 })).toEqual([[5, 6]]);
    expect(await ns({ afterSeq: 5 })).toEqual([]);
    await b.conversations.replaceMessages('s', [message(7)]);
    expect(await ns()).toEqual([[1, 7]]);
    await a.conversations.replaceMessages('s', [message(8), message(9)]);
    expect(await ns()).toEqual([[1, 8], [2, 9]]);
    await b.conversations.deleteSession('s');
    expect(await ns()).toEqual([]);
  });

  it('a session deleted or created by another connection is seen by getSession and appendMessages', async () => {
    const { a, b } = twoConnections();
    expect(await a.conversations.getSession('s')).toBeUndefined();
    await b.conversations.ensureSession({ id: 's', now, title: 'first' });
    expect((await a.conversations.getSession('s'))?.title).toBe('first');
    await a.conversations.appendMessages('s', [message(1), message(2)]);
    await b.conversations.deleteSession('s');
    expect(await a.conversations.getSession('s')).toBeUndefined();
    await expect(a.conversations.appendMessages('s', [message(3)])).rejects.toMatchObject({ code: 'NOT_FOUND' });
    await b.conversations.ensureSession({ id: 's', now, title: 'second' });
    expect((await a.conversations.getSession('s'))?.title).toBe('second');
    expect((await a.conversations.appendMessages('s', [message(3)])).map((m) => m.seq)).toEqual([1]);
  });

  it("another connection's append moves the session's updatedAt as this connection reads it", async () => {
    const { dir, cleanup } = tempDir();
    const path = join(dir, 'shared.db');
    const a = createSqliteStorage({ path, logger: silentLogger, now: () => new Date('2026-01-02T00:00:00.000Z') });
    const b = createSqliteStorage({ path, logger: silentLogger, now: () => new Date('2026-01-03T00:00:00.000Z') });
    cleanups.push(cleanup, () => a.close(), () => b.close());
    await a.conversations.ensureSession({ id: 's', now });
    await a.conversations.appendMessages('s', [message(1)]);
    expect((await a.conversations.getSession('s'))?.updatedAt).toBe('2026-01-02T00:00:00.000Z');
    await b.conversations.appendMessages('s', [message(2)]);
    expect((await a.conversations.getSession('s'))?.updatedAt).toBe('2026-01-03T00:00:00.000Z');
  });

  it("this connection's own appends and deletes are seen; a rolled-back append is not", async () => {
    const { a } = twoConnections();
    await a.conversations.ensureSession({ id: 's', now });
    await a.conversations.appendMessages('s', [message(1)]);
    rolledBack(a, () => a.conversations.appendMessages('s', [message(2), message(3)]), () => a.conversations.deleteSession('s'));
    expect((await a.conversations.getSession('s'))?.id).toBe('s');
    expect((await a.conversations.appendMessages('s', [message(4)])).map((m) => m.seq)).toEqual([2]);
    await a.conversations.replaceMessages('s', []);
    expect((await a.conversations.appendMessages('s', [message(5)])).map((m) => m.seq)).toEqual([1]);
    await a.conversations.deleteSession('s');
    expect(await a.conversations.getSession('s')).toBeUndefined();
    await expect(a.conversations.appendMessages('s', [message(6)])).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('what the caches save', () => {
  /** Record the SQL of every statement run on connections opened while `fn` runs. */
  async function recordingSql<T>(fn: (executed: string[]) => Promise<T>): Promise<T> {
    const executed: string[] = [];
    const proto = Database.prototype as unknown as { prepare(sql: string): Database.Statement };
    const original = proto.prepare;
    proto.prepare = function (this: Database.Database, sql: string) {
      const statement = original.call(this, sql);
      for (const method of ['run', 'get', 'all', 'iterate'] as const) {
        const run = statement[method] as (...args: unknown[]) => unknown;
        (statement as unknown as Record<string, unknown>)[method] = function (this: unknown, ...args: unknown[]) {
          executed.push(sql);
          return run.apply(this, args);
        };
      }
      return statement;
    };
    try {
      return await fn(executed);
    } finally {
      proto.prepare = original;
    }
  }

  it("a warm turn's reads run one PRAGMA data_version each; an append takes its seq from memory", async () => {
    await recordingSql(async (executed) => {
      const { a } = twoConnections();
      await a.conversations.ensureSession({ id: 's', now });
      const reads = async () => {
        await a.controls.listDisabledCapabilities({ userId: 'u1' });
        await a.approvals.list({ status: ['pending'], sessionId: 's', limit: 20 });
        await a.meta.get('runtime:session:s');
        await a.conversations.getSession('s');
        await a.conversations.listMessages('s');
      };
      await reads();
      // As a turn's end: the append reads data_version in the batch, so the kv value written beside it is kept.
      a.batchWrites!(() => {
        void a.conversations.appendMessages('s', [message(1)]);
        void a.meta.set('runtime:session:s', '{}');
      });
      executed.length = 0;
      await reads();
      await a.conversations.appendMessages('s', [message(2), message(3)]);
      expect(executed).toEqual([
        ...Array.from({ length: 5 }, () => 'PRAGMA data_version'),
        'BEGIN IMMEDIATE',
        'PRAGMA data_version',
        'INSERT INTO messages (session_id, seq, role, json, turn_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        'INSERT INTO messages (session_id, seq, role, json, turn_id, created_at) VALUES (?, ?, ?, ?, ?, ?)',
        'UPDATE sessions SET updated_at = ? WHERE id = ?',
        'COMMIT',
      ]);
      expect((await a.conversations.listMessages('s')).map((m) => m.seq)).toEqual([1, 2, 3]);
    });
  });

  it('a kv value written alone is dropped, not kept (no data_version read for it): the next read loads it once', async () => {
    await recordingSql(async (executed) => {
      const { a } = twoConnections();
      await a.meta.get('k');
      executed.length = 0;
      await a.meta.set('k', 'v');
      expect(executed.filter((sql) => sql.startsWith('PRAGMA'))).toEqual([]);
      expect(await a.meta.get('k')).toBe('v');
      expect(await a.meta.get('k')).toBe('v');
      expect(executed.filter((sql) => sql.startsWith('SELECT'))).toEqual(['SELECT value FROM kv WHERE key = ?']);
    });
  });

  it('reads begun in one batchReads group run one PRAGMA data_version for all of them', async () => {
    await recordingSql(async (executed) => {
      const { a } = twoConnections();
      await a.conversations.ensureSession({ id: 's', now });
      const begin = () => [
        a.controls.listDisabledCapabilities({ userId: 'u1' }),
        a.approvals.list({ status: ['pending'], sessionId: 's', limit: 20 }),
        a.meta.get('runtime:session:s'),
        a.conversations.getSession('s'),
        a.conversations.listMessages('s'),
      ];
      await Promise.all(begin()); // warm
      executed.length = 0;
      let started: Array<Promise<unknown>> = [];
      a.batchReads!(() => {
        started = begin();
      });
      await Promise.all(started);
      expect(executed).toEqual(['PRAGMA data_version']);
    });
  });

  it('a 3-step SQLite turn runs three PRAGMA data_version outside its two write transactions', async () => {
    await recordingSql(async (executed) => {
      const { a } = twoConnections();
      const getPrice = defineTool({
        name: 'get_price', toolSet: 'read', description: 'Spot price', permissionTier: PermissionTier.READ_ONLY, sideEffects: false,
        inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: 1 }),
      });
      const model = createScriptedModel([]);
      const runtime = createAgentRuntime({ model, tools: createToolRegistry({ storage: a, tools: [getPrice] }), storage: a, logger: silentLogger, defaultUserId: 'u1' });
      const turn = async (sessionId: string) => {
        model.push({ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] }, { text: 'done' });
        await runtime.buildSystemPromptBlocks({ sessionId });
        executed.length = 0;
        await runtime.generate({ sessionId, message: 'prices?' });
        let inWrite = false;
        const outside: string[] = [];
        let writes = 0;
        for (const sql of executed) {
          if (sql.startsWith('BEGIN')) (inWrite = true), writes++;
          else if (sql === 'COMMIT' || sql === 'ROLLBACK') inWrite = false;
          else if (!inWrite && sql === 'PRAGMA data_version') outside.push(sql);
        }
        return { outside: outside.length, writes };
      };
      await turn('warm');
      // The turn's start (session row, state, memory key, approvals, history, journal) is one; each call's switches one.
      expect(await turn('s1')).toEqual({ outside: 3, writes: 2 });
    });
  });

  it('a host that takes the raw connection turns the caches off: every read goes to the database', async () => {
    await recordingSql(async (executed) => {
      const { a } = twoConnections();
      void a.handle.db;
      await a.meta.get('k');
      executed.length = 0;
      await a.meta.get('k');
      expect(executed).toEqual(['SELECT value FROM kv WHERE key = ?']);
    });
  });
});

describe('createReadCache: bounded memory', () => {
  const tracker = (): CommitTracker & { dataVersion: number; hooks: CacheHooks[] } => {
    const t = {
      dataVersion: 1,
      hooks: [] as CacheHooks[],
      enabled: true,
      version: () => t.dataVersion,
      knownVersion: () => undefined,
      afterCommit: (fn: () => void) => fn(),
      mayCache: () => true,
      inTransaction: () => false,
      transactionToken: () => undefined,
      burst: (start: () => void) => start(),
      invalidateAll: () => t.hooks.forEach((h) => h.clear()),
      register: (h: CacheHooks) => void t.hooks.push(h),
    };
    return t;
  };

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const cache = createReadCache<number>(tracker(), { maxEntries: 3 });
    let loads = 0;
    const get = (k: string) => cache.get(k, () => ++loads);
    get('a');
    get('b');
    get('c');
    get('a'); // a is now the most recently used
    get('d'); // evicts b
    expect(cache.size).toBe(3);
    const before = loads;
    get('a');
    get('c');
    get('d');
    expect(loads).toBe(before);
    get('b');
    expect(loads).toBe(before + 1);
  });

  it('keeps the total weight under maxWeight and does not keep a value over a quarter of it', () => {
    const cache = createReadCache<string>(tracker(), { maxEntries: 100, maxWeight: 100, weigh: (v) => v.length });
    cache.get('big', () => 'x'.repeat(26));
    expect(cache.size).toBe(0);
    for (const k of ['a', 'b', 'c', 'd', 'e']) cache.get(k, () => 'y'.repeat(25));
    expect(cache.size).toBe(4);
  });

  it('an entry read at another data_version is read again', () => {
    const t = tracker();
    const cache = createReadCache<number>(t, { maxEntries: 3 });
    let loads = 0;
    cache.get('a', () => ++loads);
    cache.get('a', () => ++loads);
    expect(loads).toBe(1);
    t.dataVersion++;
    expect(cache.get('a', () => ++loads)).toBe(2);
  });
});
