import type { MemoryStorage } from '../memory-types';
import type { SqliteHandle, SqliteMigration } from './handle';

/** Memory-domain migrations (placeholder until the memory issue lands). */
export const memoryMigrations: readonly SqliteMigration[] = [];

/** The SQLite memory domain (placeholder until the memory issue lands). */
export function createSqliteMemoryStorage(_handle: SqliteHandle): MemoryStorage {
  return { ready: true };
}
