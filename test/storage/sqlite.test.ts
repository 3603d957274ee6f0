import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError, MinaraError, silentLogger, StorageError } from '@minara/agent';
import { createSqliteStorage, type SqliteMigration, type SqliteStorage } from '@minara/agent/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEntry, runStorageContract } from './contract';
import { runControlsContract } from './controls-contract';
import { recordingLogger, tempDir } from './helpers';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A fresh database file in its own temporary directory, removed after the test. */
function freshPath(name = 'minara.db'): string {
  const { dir, cleanup } = tempDir();
  cleanups.push(cleanup);
  return join(dir, name);
}

runStorageContract('sqlite (file, WAL)', ({ now }) => createSqliteStorage({ path: freshPath(), now, logger: silentLogger }));
runStorageContract('sqlite (:memory:)', ({ now }) => createSqliteStorage({ path: ':memory:', now, logger: silentLogger }));
runControlsContract('sqlite (file, WAL)', () => createSqliteStorage({ path: freshPath(), logger: silentLogger }));

describe('createSqliteStorage', () => {
  let open: SqliteStorage[] = [];
  const make = (options: Parameters<typeof createSqliteStorage>[0]): SqliteStorage => {
    const storage = createSqliteStorage({ logger: silentLogger, ...options });
    open.push(storage);
    return storage;
  };
  beforeEach(() => {
    open = [];
  });
  afterEach(async () => {
    for (const s of open) await s.close();
  });

  describe('connection', () => {
    it('creates parent directories and sets WAL, synchronous=NORMAL, foreign_keys and busy_timeout', () => {
      const path = join(freshPath(), '..', 'nested', 'deeper', 'minara.db');
      const storage = make({ path, busyTimeoutMs: 1234 });
      expect(existsSync(path)).toBe(true);
      const db = storage.handle.db;
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('synchronous', { simple: true })).toBe(1);
      expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(1234);
      expect(db.pragma('mmap_size', { simple: true })).toBe(256 * 1024 * 1024);
      expect(storage.kind).toBe('sqlite');
      expect(storage.path).toBe(path);
      expect(storage.capabilities.multiProcess).toBe(true);
      expect(storage.capabilities.fullText).toBe(true);
    });

    it('takes mmapSizeBytes (0 turns memory-mapped reads off) and reads the same data either way', async () => {
      const path = freshPath();
      const mapped = make({ path });
      await mapped.meta.set('k', 'mapped');
      const plain = make({ path, mmapSizeBytes: 0 });
      expect(plain.handle.db.pragma('mmap_size', { simple: true })).toBe(0);
      expect(await plain.meta.get('k')).toBe('mapped');
      expect(make({ path: ':memory:', mmapSizeBytes: 1 << 20 }).handle.db.pragma('mmap_size', { simple: true }) ?? 0).toBe(0);
    });

    it('defaults busy_timeout to 5000 and reports :memory: as single-process', () => {
      const storage = make({ path: ':memory:' });
      expect(storage.handle.db.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(storage.capabilities.multiProcess).toBe(false);
    });

    it('rejects bad options with a ConfigError naming the field', () => {
      const bad: Array<[unknown, string]> = [
        [undefined, 'options'],
        [{ path: '' }, 'path'],
        [{ path: 'x.db', busyTimeoutMs: -1 }, 'busyTimeoutMs'],
        [{ path: 'x.db', busyTimeoutMs: 1.5 }, 'busyTimeoutMs'],
        [{ path: 'x.db', vector: 'yes' }, 'vector'],
        [{ path: 'x.db', mmapSizeBytes: -1 }, 'mmapSizeBytes'],
        [{ path: 'x.db', mmapSizeBytes: '1GB' }, 'mmapSizeBytes'],
        [{ path: 'x.db', now: 'today' }, 'now'],
        [{ path: 'x.db', migrations: [{ domain: 'core', version: 1, name: 'x', up() {} }] }, 'migrations[0].domain'],
      ];
      for (const [options, field] of bad) {
        let error: unknown;
        try {
          createSqliteStorage(options as Parameters<typeof createSqliteStorage>[0]);
        } catch (e) {
          error = e;
        }
        expect(error, field).toBeInstanceOf(ConfigError);
        expect((error as ConfigError).fields, field).toEqual([field]);
        expect((error as ConfigError).message, field).toContain(field.split('[')[0]);
      }
    });

    it('persists everything across close and reopen', async () => {
      const path = freshPath();
      const first = createSqliteStorage({ path, logger: silentLogger });
      const instance = await first.meta.getInstance();
      await first.audit.append(auditEntry());
      await first.conversations.ensureSession({ id: 's1', now: '2026-01-01T00:00:00.000Z' });
      await first.conversations.appendMessages('s1', [{ role: 'user', json: '{}', createdAt: '2026-01-01T00:00:00.000Z' }]);
      await first.close();
      const second = make({ path });
      expect(await second.meta.getInstance()).toEqual(instance);
      expect(await second.audit.count()).toBe(1);
      expect((await second.conversations.appendMessages('s1', [{ role: 'assistant', json: '{}', createdAt: '2026-01-01T00:00:01.000Z' }]))[0]!.seq).toBe(2);
    });
  });

  describe('handle', () => {
    it('nests writes as savepoints: an inner failure rolls back only the inner part', () => {
      const storage = make({ path: ':memory:' });
      const { handle } = storage;
      handle.write('setup', (db) => db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)'));
      handle.write('outer', () => {
        handle.prepare('INSERT INTO t VALUES (1)').run();
        expect(() =>
          handle.write('inner', () => {
            handle.prepare('INSERT INTO t VALUES (2)').run();
            throw new Error('inner boom');
          }),
        ).toThrow(/inner: inner boom/);
        handle.write('inner ok', () => handle.prepare('INSERT INTO t VALUES (3)').run());
      });
      expect(handle.read('check', (db) => db.prepare('SELECT x FROM t ORDER BY x').pluck().all())).toEqual([1, 3]);
    });

    it('rolls the whole write back when the outer callback throws', () => {
      const storage = make({ path: ':memory:' });
      const { handle } = storage;
      handle.write('setup', (db) => db.exec('CREATE TABLE t (x INTEGER PRIMARY KEY)'));
      expect(() =>
        handle.write('outer', () => {
          handle.prepare('INSERT INTO t VALUES (1)').run();
          handle.write('inner', () => handle.prepare('INSERT INTO t VALUES (2)').run());
          throw new Error('outer boom');
        }),
      ).toThrow(StorageError);
      expect(handle.read('count', (db) => db.prepare('SELECT COUNT(*) FROM t').pluck().get())).toBe(0);
    });

    it('wraps SQLite failures in StorageError naming the operation, with the cause', () => {
      const storage = make({ path: ':memory:' });
      let error: unknown;
      try {
        storage.handle.read('my.operation', (db) => db.prepare('SELECT * FROM no_such_table').all());
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).code).toBe('STORAGE_ERROR');
      expect((error as StorageError).operation).toBe('my.operation');
      expect((error as StorageError).message).toMatch(/^my\.operation: no such table: no_such_table/);
      expect((error as StorageError).cause).toBeInstanceOf(Error);
    });

    it('refuses an async callback', () => {
      const storage = make({ path: ':memory:' });
      expect(() => storage.handle.write('async.op', async () => 1)).toThrow(/must be synchronous/);
    });

    it('caches prepared statements by SQL text', () => {
      const storage = make({ path: ':memory:' });
      expect(storage.handle.prepare('SELECT 1')).toBe(storage.handle.prepare('SELECT 1'));
    });

    it('fails with STORAGE_BUSY once another connection holds the write lock past the deadline', async () => {
      const path = freshPath();
      const holder = make({ path });
      const waiter = make({ path, busyTimeoutMs: 20 });
      let pending: Promise<void> | undefined;
      const started = Date.now();
      holder.handle.write('hold', () => {
        pending = waiter.audit.append(auditEntry());
      });
      const elapsed = Date.now() - started;
      const error = await pending!.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(MinaraError.isInstance(error)).toBe(true);
      expect((error as MinaraError).code).toBe('STORAGE_BUSY');
      expect((error as MinaraError).retryable).toBe(true);
      expect((error as MinaraError).message).toMatch(/^audit\.append: the database stayed locked/);
      expect(elapsed).toBeGreaterThanOrEqual(40); // more than one busy_timeout (20 ms): it retried before giving up
      // The lock is gone now, so the same call succeeds and nothing was half-written.
      await waiter.audit.append(auditEntry());
      expect(await holder.audit.count()).toBe(1);
    });
  });

  describe('migrations', () => {
    const tableMigration = (domain: string, version: number, table: string, calls?: { n: number }): SqliteMigration => ({
      domain,
      version,
      name: `create ${table}`,
      up(db) {
        if (calls) calls.n++;
        db.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY)`);
      },
    });
    const tables = (path: string): string[] => {
      const db = new Database(path, { readonly: true });
      try {
        return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all() as string[];
      } finally {
        db.close();
      }
    };
    const recorded = (path: string): Array<{ domain: string; version: number; name: string }> => {
      const db = new Database(path, { readonly: true });
      try {
        return db.prepare('SELECT domain, version, name FROM schema_migrations ORDER BY domain, version').all() as Array<{ domain: string; version: number; name: string }>;
      } finally {
        db.close();
      }
    };

    it('reports schema versions per domain, including built-in domains without migrations', async () => {
      const storage = make({ path: ':memory:', migrations: [tableMigration('host', 1, 'h1'), tableMigration('host', 2, 'h2')] });
      const versions = await storage.schemaVersions();
      expect(versions.core).toBe(2);
      expect(versions.memory).toEqual(expect.any(Number));
      expect(versions.host).toBe(2);
    });

    it('applies each migration once and is idempotent on reopen', async () => {
      const path = freshPath();
      const calls = { n: 0 };
      const migrations = [tableMigration('host', 1, 'h1', calls)];
      await createSqliteStorage({ path, logger: silentLogger, migrations }).close();
      const before = recorded(path);
      await createSqliteStorage({ path, logger: silentLogger, migrations }).close();
      const reopened = make({ path, migrations: [...migrations, tableMigration('host', 2, 'h2', calls)] });
      expect(calls.n).toBe(2);
      expect(before).toContainEqual({ domain: 'core', version: 1, name: expect.any(String) });
      expect(before).toContainEqual({ domain: 'host', version: 1, name: 'create h1' });
      await reopened.close();
      expect(recorded(path)).toEqual([...before, { domain: 'host', version: 2, name: 'create h2' }].sort((a, b) => a.domain.localeCompare(b.domain) || a.version - b.version));
    });

    it('rejects a migration list with a gap, a duplicate or a bad start', () => {
      for (const versions of [[1, 3], [1, 1], [2], [1, 2, 2]]) {
        let error: unknown;
        try {
          createSqliteStorage({ path: ':memory:', logger: silentLogger, migrations: versions.map((v, i) => tableMigration('host', v, `t${i}`)) });
        } catch (e) {
          error = e;
        }
        expect(error, String(versions)).toBeInstanceOf(StorageError);
        expect((error as StorageError).code).toBe('MIGRATION_FAILED');
        expect((error as StorageError).message).toContain('domain "host"');
        expect((error as StorageError).message).toContain(`got ${[...versions].sort().join(', ')}`);
      }
    });

    it('rolls a failing migration back completely on a fresh file and names it', () => {
      const path = freshPath();
      const failing: SqliteMigration = {
        domain: 'host',
        version: 1,
        name: 'create and explode',
        up(db) {
          db.exec('CREATE TABLE half_done (id INTEGER)');
          throw new Error('kaboom');
        },
      };
      let error: unknown;
      try {
        createSqliteStorage({ path, logger: silentLogger, migrations: [failing] });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(StorageError);
      expect((error as StorageError).code).toBe('MIGRATION_FAILED');
      expect((error as StorageError).message).toContain('migration host v1 "create and explode" failed and was rolled back: kaboom');
      // One transaction for all domains: nothing from this open survives, not even core or the log table.
      expect(tables(path)).toEqual([]);
      // And the file opens fine without the bad migration.
      expect(make({ path }).kind).toBe('sqlite');
    });

    it('keeps earlier versions when a later migration fails, and records nothing for it', async () => {
      const path = freshPath();
      await createSqliteStorage({ path, logger: silentLogger, migrations: [tableMigration('host', 1, 'h1')] }).close();
      const failing: SqliteMigration = {
        domain: 'host',
        version: 2,
        name: 'broken v2',
        up(db) {
          db.exec('CREATE TABLE h2 (id INTEGER)');
          db.exec('INSERT INTO h1 (id) VALUES (1)');
          db.exec('THIS IS NOT SQL');
        },
      };
      expect(() => createSqliteStorage({ path, logger: silentLogger, migrations: [tableMigration('host', 1, 'h1'), failing] })).toThrow(/host v2 "broken v2" failed/);
      expect(tables(path)).not.toContain('h2');
      expect(recorded(path).filter((r) => r.domain === 'host')).toEqual([{ domain: 'host', version: 1, name: 'create h1' }]);
      const db = new Database(path, { readonly: true });
      expect(db.prepare('SELECT COUNT(*) FROM h1').pluck().get()).toBe(0);
      db.close();
    });

    it('refuses an async migration and applies nothing', () => {
      const path = freshPath();
      const asyncMigration = { domain: 'host', version: 1, name: 'async by mistake', up: async () => undefined } as unknown as SqliteMigration;
      expect(() => createSqliteStorage({ path, logger: silentLogger, migrations: [asyncMigration] })).toThrow(/host v1 "async by mistake" failed .*must be synchronous/);
      expect(tables(path)).toEqual([]);
    });

    it('refuses a database whose schema is newer than the code', async () => {
      const path = freshPath();
      await createSqliteStorage({ path, logger: silentLogger, migrations: [tableMigration('host', 1, 'h1'), tableMigration('host', 2, 'h2')] }).close();
      expect(() => createSqliteStorage({ path, logger: silentLogger, migrations: [tableMigration('host', 1, 'h1')] })).toThrow(/domain "host" at schema v2, newer than the v1/);
    });
  });

  describe('vector capability', () => {
    it('loads sqlite-vec when available', () => {
      const logger = recordingLogger();
      const storage = make({ path: ':memory:', logger });
      expect(storage.capabilities.vector).toBe(true);
      expect(storage.capabilities.vectorUnavailableReason).toBeUndefined();
      expect(storage.handle.vectorAvailable).toBe(true);
      expect(storage.handle.read('vec', (db) => db.prepare('SELECT vec_version()').pluck().get())).toMatch(/^v0\./);
      expect(logger.lines.filter((l) => l.level === 'warn')).toEqual([]);
    });

    it('degrades with one warning when the extension fails to load, and still works', async () => {
      const logger = recordingLogger();
      const storage = make({
        path: freshPath(),
        logger,
        loadVectorExtension: () => {
          throw new Error('cannot open shared object file vec0.so');
        },
      });
      expect(storage.capabilities.vector).toBe(false);
      expect(storage.capabilities.vectorUnavailableReason).toBe('sqlite-vec failed to load: cannot open shared object file vec0.so');
      expect(storage.handle.vectorAvailable).toBe(false);
      const warnings = logger.lines.filter((l) => l.level === 'warn');
      expect(warnings).toHaveLength(1);
      expect(warnings[0]!.message).toContain('sqlite-vec unavailable');
      expect(warnings[0]!.fields).toMatchObject({ reason: expect.stringContaining('vec0.so') });
      await storage.audit.append(auditEntry());
      expect(await storage.audit.count()).toBe(1);
      expect(await storage.schemaVersions()).toMatchObject({ core: 2 });
      expect(logger.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    });

    it('does not try when vector is false', () => {
      const logger = recordingLogger();
      let called = false;
      const storage = make({
        path: ':memory:',
        logger,
        vector: false,
        loadVectorExtension: () => {
          called = true;
        },
      });
      expect(called).toBe(false);
      expect(storage.capabilities.vector).toBe(false);
      expect(storage.capabilities.vectorUnavailableReason).toBe('disabled by options (vector: false)');
      expect(logger.lines).toEqual([]);
    });
  });

  describe('closed storage', () => {
    it('fails handle calls too', async () => {
      const storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
      await storage.close();
      expect(() => storage.handle.read('late.read', () => 1)).toThrow('late.read: storage is closed');
      expect(() => storage.handle.write('late.write', () => 1)).toThrow('late.write: storage is closed');
      expect(() => storage.handle.prepare('SELECT 1')).toThrow('storage is closed');
      expect(() => storage.handle.db).toThrow('storage is closed');
    });
  });
});
