import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../util/canonical-json';
import type { InstanceInfo, MetaStorage } from '../types';
import { checkId, invalidArgument } from './checks';
import type { SqliteHandle } from './handle';
import { type CommitTracker, createReadCache } from './read-cache';

interface InstanceRow {
  instance_id: string;
  hmac_key: Buffer;
  created_at: string;
}

/** kv keys the cache keeps, and their total size in characters (a value over a quarter of it is not cached). */
const KV_CACHE_KEYS = 2048;
const KV_CACHE_CHARS = 4 * 1024 * 1024;

const SELECT_INSTANCE = 'SELECT instance_id, hmac_key, created_at FROM instance_meta WHERE singleton = 1';

/**
 * The `meta` domain on SQLite: the instance record (created once, atomically) and the kv table. Kv
 * values (and absent keys) come from a cache validated by `data_version` on each read; this connection's own
 * `set`/`delete` update it once their transaction commits.
 */
export function createSqliteMetaStorage(handle: SqliteHandle, now: () => Date, reads: CommitTracker): MetaStorage {
  const kv = createReadCache<string | undefined>(reads, { maxEntries: KV_CACHE_KEYS, maxWeight: KV_CACHE_CHARS, weigh: (v) => 64 + (v?.length ?? 0) });
  const readKv = (key: string): string | undefined => (handle.prepare('SELECT value FROM kv WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  /**
   * Inside a write: the key now holds `value` (undefined: deleted). The entry takes the value at the commit when the
   * transaction already knows its `data_version` (a batch that appended messages); else it is only dropped (the
   * next read loads it): a journal entry written beside an audit row is not worth a statement.
   */
  const wrote = (key: string, value: string | undefined): void => {
    const version = reads.knownVersion();
    kv.wrote(key, version === undefined ? undefined : { value, version });
  };
  const copy = (row: InstanceRow): InstanceInfo => ({
    instanceId: row.instance_id,
    hmacKey: new Uint8Array(row.hmac_key),
    createdAt: row.created_at,
  });

  return {
    async getInstance() {
      let row = handle.read('meta.getInstance', () => handle.prepare(SELECT_INSTANCE).get() as InstanceRow | undefined);
      if (row === undefined) {
        // Two processes may get here at once: INSERT OR IGNORE under BEGIN IMMEDIATE lets exactly one key win,
        // and both read the winner back inside their transaction.
        row = handle.write('meta.getInstance', () => {
          const key = randomBytes(32);
          handle
            .prepare('INSERT OR IGNORE INTO instance_meta (singleton, instance_id, hmac_key, created_at) VALUES (1, ?, ?, ?)')
            .run(sha256Hex(key).slice(0, 16), key, now().toISOString());
          return handle.prepare(SELECT_INSTANCE).get() as InstanceRow;
        });
      }
      return copy(row);
    },

    async get(key) {
      checkId('meta.get', 'key', key);
      return handle.read('meta.get', () => kv.get(key, () => readKv(key)));
    },

    async set(key, value) {
      checkId('meta.set', 'key', key);
      if (typeof value !== 'string') throw invalidArgument('meta.set', `value must be a string, got ${typeof value}`);
      handle.write('meta.set', () => {
        handle
          .prepare('INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at')
          .run(key, value, now().toISOString());
        wrote(key, value);
      });
    },

    async delete(key) {
      checkId('meta.delete', 'key', key);
      handle.write('meta.delete', () => {
        handle.prepare('DELETE FROM kv WHERE key = ?').run(key);
        wrote(key, undefined);
      });
    },
  };
}
