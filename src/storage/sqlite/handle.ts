import type Database from 'better-sqlite3';
import type { Logger } from '../../util/logger';

/**
 * What each SQLite domain module receives: the connection plus the two ways to touch it.
 * Every statement goes through `read` or `write`, which retry on SQLITE_BUSY and wrap failures in
 * `StorageError`, so no `SQLITE_BUSY` reaches a caller.
 */
export interface SqliteHandle {
  readonly db: Database.Database;
  /** sqlite-vec is loaded into this connection. */
  readonly vectorAvailable: boolean;
  readonly logger: Logger;
  /** Run a read. `operation` names it in errors. */
  read<T>(operation: string, fn: (db: Database.Database) => T): T;
  /** Run `fn` in a `BEGIN IMMEDIATE` transaction (retried as a whole on SQLITE_BUSY). */
  write<T>(operation: string, fn: (db: Database.Database) => T): T;
  /** Prepared-statement cache keyed by SQL text. */
  prepare(sql: string): Database.Statement;
}

/** One schema migration of one domain. Versions are per domain, contiguous from 1. */
export interface SqliteMigration {
  readonly domain: string;
  readonly version: number;
  readonly name: string;
  /** Runs inside the migration transaction. `vectorAvailable` says whether sqlite-vec is loaded. */
  up(db: Database.Database, env: { vectorAvailable: boolean }): void;
}
