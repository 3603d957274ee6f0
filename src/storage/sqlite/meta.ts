import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../util/canonical-json';
import type { InstanceInfo, MetaStorage } from '../types';
import { checkId, invalidArgument } from './checks';
import type { SqliteHandle } from './handle';

interface InstanceRow {
  instance_id: string;
  hmac_key: Buffer;
  created_at: string;
}

const SELECT_INSTANCE = 'SELECT instance_id, hmac_key, created_at FROM instance_meta WHERE singleton = 1';

/** The `meta` domain on SQLite: the instance record (created once, atomically) and the kv table. */
export function createSqliteMetaStorage(handle: SqliteHandle, now: () => Date): MetaStorage {
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
      const row = handle.read('meta.get', () => handle.prepare('SELECT value FROM kv WHERE key = ?').get(key) as { value: string } | undefined);
      return row?.value;
    },

    async set(key, value) {
      checkId('meta.set', 'key', key);
      if (typeof value !== 'string') throw invalidArgument('meta.set', `value must be a string, got ${typeof value}`);
      handle.write('meta.set', () =>
        handle
          .prepare('INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at')
          .run(key, value, now().toISOString()),
      );
    },

    async delete(key) {
      checkId('meta.delete', 'key', key);
      handle.write('meta.delete', () => handle.prepare('DELETE FROM kv WHERE key = ?').run(key));
    },
  };
}
