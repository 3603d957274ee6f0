/**
 * Versioned migrations of the Postgres engine: one `schema_migrations(domain, version, name, applied_at)`
 * table in the storage's schema; every pending migration of every domain runs in one transaction under a
 * transaction-scoped advisory lock keyed by the schema, so instances starting together migrate once (the
 * second waits, then finds nothing pending). A database whose schema is newer than the code is refused.
 */
import { StorageError } from '../../errors/subclasses';
import type { PgHandle, PgTx } from './handle';

/** One schema migration of one domain on Postgres. Versions are per domain, contiguous from 1. */
export interface PostgresMigration {
  readonly domain: string;
  readonly version: number;
  readonly name: string;
  /** Runs inside the migration transaction. `t(name)` is the schema-qualified name of a table. */
  up(tx: PgTx, env: { readonly schema: string; readonly t: (name: string) => string }): Promise<void>;
}

const DOMAIN_NAME = /^[a-z][a-z0-9_]*$/;

function migrationError(message: string, cause?: unknown): StorageError {
  return new StorageError('migrate', message, { code: 'MIGRATION_FAILED', cause });
}

/** Group by domain and check each domain's versions run 1..n. */
export function planPgMigrations(migrations: readonly PostgresMigration[]): Map<string, PostgresMigration[]> {
  const byDomain = new Map<string, PostgresMigration[]>();
  migrations.forEach((m, i) => {
    if (typeof m.domain !== 'string' || !DOMAIN_NAME.test(m.domain)) throw migrationError(`migrations[${i}].domain must match ${String(DOMAIN_NAME)}, got ${JSON.stringify(m.domain)}`);
    if (typeof m.name !== 'string' || m.name.length === 0) throw migrationError(`migrations[${i}] (${m.domain} v${String(m.version)}) needs a non-empty name`);
    if (typeof m.up !== 'function') throw migrationError(`migrations[${i}] (${m.domain} v${String(m.version)} "${m.name}") needs an up() function`);
    const list = byDomain.get(m.domain) ?? [];
    list.push(m);
    byDomain.set(m.domain, list);
  });
  for (const [domain, list] of byDomain) {
    list.sort((a, b) => a.version - b.version);
    list.forEach((m, i) => {
      if (m.version !== i + 1) {
        throw migrationError(`migrations of domain "${domain}" must be numbered 1..${list.length} without gaps or duplicates; got ${list.map((x) => String(x.version)).join(', ')}`);
      }
    });
  }
  return byDomain;
}

async function applied(tx: PgTx, handle: PgHandle): Promise<Map<string, number>> {
  const exists = await tx.get<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [`${handle.schema}.schema_migrations`]);
  if (exists?.ok !== true) return new Map();
  const rows = await tx.all<{ domain: string; version: number }>(`SELECT domain, MAX(version)::int AS version FROM ${handle.t('schema_migrations')} GROUP BY domain`);
  return new Map(rows.map((r) => [r.domain, Number(r.version)]));
}

function pending(plan: Map<string, PostgresMigration[]>, done: Map<string, number>): PostgresMigration[] {
  const out: PostgresMigration[] = [];
  for (const [domain, list] of plan) {
    const current = done.get(domain) ?? 0;
    if (current > list.length) {
      throw migrationError(
        `the database has domain "${domain}" at schema v${current}, newer than the v${list.length} this version of @minara/agent knows; upgrade the package on every instance instead of running an older one against a newer database`,
      );
    }
    out.push(...list.slice(current));
  }
  return out;
}

/** Apply every pending migration (see the module comment). Returns the migrations this call applied. */
export async function runPgMigrations(handle: PgHandle, migrations: readonly PostgresMigration[], now: () => Date): Promise<PostgresMigration[]> {
  const plan = planPgMigrations(migrations);
  // Fast path: nothing pending, no lock taken.
  const before = await applied(handle.op('migrate'), handle);
  if (before.size > 0 && pending(plan, before).length === 0) return [];
  return handle.tx('migrate', async (tx) => {
    await tx.run(`SELECT pg_advisory_xact_lock(hashtext($1))`, [`minara.migrate:${handle.schemaName}`]);
    await tx.run(`CREATE SCHEMA IF NOT EXISTS ${handle.schema}`);
    await tx.run(`CREATE TABLE IF NOT EXISTS ${handle.t('schema_migrations')} (
      domain TEXT NOT NULL, version INTEGER NOT NULL, name TEXT NOT NULL, applied_at TEXT NOT NULL, PRIMARY KEY (domain, version))`);
    const todo = pending(plan, await applied(tx, handle));
    for (const m of todo) {
      try {
        await tx.run(`SAVEPOINT minara_migration`);
        await m.up(tx, { schema: handle.schema, t: handle.t });
        await tx.run(`RELEASE SAVEPOINT minara_migration`);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        throw migrationError(`migration ${m.domain} v${m.version} "${m.name}" failed and was rolled back: ${reason}`, error);
      }
      await tx.run(`INSERT INTO ${handle.t('schema_migrations')} (domain, version, name, applied_at) VALUES ($1, $2, $3, $4)`, [m.domain, m.version, m.name, now().toISOString()]);
    }
    return todo;
  });
}

/** Highest applied version per domain; `known` domains without a row report 0. */
export async function readPgSchemaVersions(handle: PgHandle, known: Iterable<string>): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const domain of known) out[domain] = 0;
  for (const [domain, version] of await applied(handle.op('schemaVersions'), handle)) out[domain] = version;
  return out;
}
