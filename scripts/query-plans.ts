/**
 * Full scans in the SQLite engine's statements (scripts/check-query-plans.ts; docs/storage.md, "Query plans").
 * Each statement is EXPLAINed on a database every migration has run on; a `SCAN <table>` step that uses no index,
 * on a table that grows with use, is a finding unless an allowance names the statement and why it may scan.
 */
import type Database from 'better-sqlite3';

/** Tables whose size does not grow with use (one row, or one per configured thing): scanning them is fine. */
export const BOUNDED_TABLES: ReadonlySet<string> = new Set([
  'schema_migrations', 'instance_meta', 'audit_chain_head', 'audit_lookup_state', 'memory_fts_state', 'memory_fts_stats', 'memory_vector_info',
  'controls', 'user_quotas', 'sqlite_sequence', 'sqlite_schema', 'sqlite_master', 'dbstat',
]);

/** A statement that may scan a growing table, and why. */
export interface ScanAllowance {
  readonly pattern: RegExp;
  readonly reason: string;
}

/** A full scan found: the plan step and the statement. */
export interface FullScan {
  readonly table: string;
  readonly detail: string;
  readonly sql: string;
}

/** What {@link findFullScans} found. */
export interface QueryPlanReport {
  readonly explained: number;
  readonly scans: readonly FullScan[];
  readonly allowed: ReadonlyArray<FullScan & { readonly reason: string }>;
  /** Statements that could not be EXPLAINed here (a table this database does not have, such as an optional extension's). */
  readonly unexplained: ReadonlyArray<{ readonly sql: string; readonly error: string }>;
}

/** Run `EXPLAIN QUERY PLAN` with every parameter bound to NULL (the plan does not depend on the values). */
function explain(db: Database.Database, sql: string): Array<{ detail: string }> {
  const statement = db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  const named = [...new Set([...sql.matchAll(/[@:$]([A-Za-z_]\w*)/g)].map((m) => m[1]!))];
  if (named.length > 0) return statement.all(Object.fromEntries(named.map((n) => [n, null]))) as Array<{ detail: string }>;
  // Positional: try counts upward until better-sqlite3 stops asking for more.
  for (let n = 0; ; n++) {
    try {
      return statement.all(...new Array<null>(n).fill(null)) as Array<{ detail: string }>;
    } catch (error) {
      if (n >= 200 || !/parameter/i.test(String((error as Error).message))) throw error;
    }
  }
}

/** `alias → table` for each `FROM table [AS] alias` and `JOIN table [AS] alias` of a statement. */
function aliasesOf(sql: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of sql.matchAll(/\b(?:FROM|JOIN)\s+(\w+)\s+(?:AS\s+)?(\w+)/gi)) {
    if (!/^(WHERE|ON|USING|JOIN|LEFT|INNER|CROSS|ORDER|GROUP|LIMIT|WINDOW|UNION|NATURAL|SET|VALUES)$/i.test(m[2]!)) out.set(m[2]!, m[1]!);
  }
  return out;
}

/** EXPLAIN each statement on `db` and sort its full scans of growing tables into findings and allowed ones. */
export function findFullScans(db: Database.Database, statements: Iterable<string>, allowances: readonly ScanAllowance[]): QueryPlanReport {
  const scans: FullScan[] = [];
  const allowed: Array<FullScan & { reason: string }> = [];
  const unexplained: Array<{ sql: string; error: string }> = [];
  let explained = 0;
  const tables = new Set((db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name));
  for (const sql of new Set(statements)) {
    if (!/^\s*(WITH|SELECT|UPDATE|DELETE|INSERT|REPLACE)\b/i.test(sql)) continue;
    let steps: Array<{ detail: string }>;
    try {
      steps = explain(db, sql);
    } catch (error) {
      unexplained.push({ sql, error: String((error as Error).message) });
      continue;
    }
    explained += 1;
    for (const { detail } of steps) {
      const m = /^SCAN (\w+)$/.exec(detail);
      if (m === null) continue; // an index, a rowid range, a virtual table
      // SQLite names an aliased table by its alias: resolve it; a name that is no table is a CTE or subquery.
      const table = tables.has(m[1]!) ? m[1]! : aliasesOf(sql).get(m[1]!);
      if (table === undefined || !tables.has(table) || BOUNDED_TABLES.has(table)) continue;
      const scan = { table, detail, sql };
      const allowance = allowances.find((a) => a.pattern.test(sql));
      if (allowance === undefined) scans.push(scan);
      else allowed.push({ ...scan, reason: allowance.reason });
    }
  }
  return { explained, scans, allowed, unexplained };
}
