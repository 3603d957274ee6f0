import type Database from 'better-sqlite3';
import { StorageError } from '../../errors/subclasses';
import type { SqliteMigration } from './handle';
import { withBusyRetry } from './sqlite-handle';

const DOMAIN_NAME = /^[a-z][a-z0-9_]*$/;

const CREATE_SCHEMA_MIGRATIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  domain TEXT NOT NULL,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  PRIMARY KEY (domain, version)
) STRICT`;

function migrationError(message: string, cause?: unknown): StorageError {
  return new StorageError('migrate', message, { code: 'MIGRATION_FAILED', cause });
}

/**
 * Group migrations by domain (in order of first appearance) and check each domain's versions run 1..n
 * without gaps or duplicates. Throws StorageError `MIGRATION_FAILED` naming the domain otherwise.
 */
export function planMigrations(migrations: readonly SqliteMigration[]): Map<string, SqliteMigration[]> {
  const byDomain = new Map<string, SqliteMigration[]>();
  migrations.forEach((m, i) => {
    if (typeof m.domain !== 'string' || !DOMAIN_NAME.test(m.domain)) {
      throw migrationError(`migrations[${i}].domain must match ${String(DOMAIN_NAME)}, got ${JSON.stringify(m.domain)}`);
    }
    if (typeof m.name !== 'string' || m.name.length === 0) {
      throw migrationError(`migrations[${i}] (${m.domain} v${String(m.version)}) needs a non-empty name`);
    }
    if (typeof m.up !== 'function') throw migrationError(`migrations[${i}] (${m.domain} v${String(m.version)} "${m.name}") needs an up() function`);
    const list = byDomain.get(m.domain) ?? [];
    list.push(m);
    byDomain.set(m.domain, list);
  });
  for (const [domain, list] of byDomain) {
    list.sort((a, b) => a.version - b.version);
    list.forEach((m, i) => {
      if (m.version !== i + 1) {
        const got = list.map((x) => String(x.version)).join(', ');
        throw migrationError(`migrations of domain "${domain}" must be numbered 1..${list.length} without gaps or duplicates; got ${got}`);
      }
    });
  }
  return byDomain;
}

function appliedVersions(db: Database.Database): Map<string, number> {
  const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (exists === undefined) return new Map();
  const rows = db.prepare('SELECT domain, MAX(version) AS version FROM schema_migrations GROUP BY domain').all() as { domain: string; version: number }[];
  return new Map(rows.map((r) => [r.domain, r.version]));
}

function pending(plan: Map<string, SqliteMigration[]>, applied: Map<string, number>): SqliteMigration[] {
  const out: SqliteMigration[] = [];
  for (const [domain, list] of plan) {
    const current = applied.get(domain) ?? 0;
    if (current > list.length) {
      throw migrationError(
        `the database has domain "${domain}" at schema v${current}, newer than the v${list.length} this version of @minara/agent knows; upgrade the package instead of opening a newer database with an older one`,
      );
    }
    out.push(...list.slice(current));
  }
  return out;
}

/** Options of {@link runMigrations}. */
export interface RunMigrationsOptions {
  readonly vectorAvailable: boolean;
  readonly busyTimeoutMs: number;
  readonly now: () => Date;
}

/**
 * Apply every pending migration of every domain in one `BEGIN IMMEDIATE` transaction. Applied versions are
 * read again inside the transaction, so two processes opening a fresh file at once never apply one twice.
 * A throwing migration rolls the whole transaction back and throws StorageError `MIGRATION_FAILED` naming
 * domain, version and name. Returns the migrations that this call applied.
 */
export function runMigrations(db: Database.Database, migrations: readonly SqliteMigration[], options: RunMigrationsOptions): SqliteMigration[] {
  const plan = planMigrations(migrations);
  // Fast path: nothing pending, so no write lock is taken (the common case on every open after the first).
  const before = withBusyRetry('migrate', options.busyTimeoutMs, () => appliedVersions(db));
  if (pending(plan, before).length === 0 && before.size > 0) return [];

  return withBusyRetry('migrate', options.busyTimeoutMs, () => {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(CREATE_SCHEMA_MIGRATIONS);
      const todo = pending(plan, appliedVersions(db));
      const record = db.prepare('INSERT INTO schema_migrations (domain, version, name, applied_at) VALUES (?, ?, ?, ?)');
      for (const m of todo) {
        try {
          const result: unknown = m.up(db, { vectorAvailable: options.vectorAvailable });
          if (typeof (result as { then?: unknown } | null)?.then === 'function') {
            throw new Error('up() returned a Promise; migrations must be synchronous (they run inside one SQLite transaction)');
          }
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error);
          throw migrationError(`migration ${m.domain} v${m.version} "${m.name}" failed and was rolled back: ${reason}`, error);
        }
        record.run(m.domain, m.version, m.name, options.now().toISOString());
      }
      db.exec('COMMIT');
      return todo;
    } catch (error) {
      if (db.inTransaction) db.exec('ROLLBACK');
      throw error;
    }
  });
}

/** Highest applied version per domain; `known` domains without a row report 0. */
export function readSchemaVersions(db: Database.Database, known: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const domain of known) out[domain] = 0;
  for (const [domain, version] of appliedVersions(db)) out[domain] = version;
  return out;
}
