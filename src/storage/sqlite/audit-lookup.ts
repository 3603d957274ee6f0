import type Database from 'better-sqlite3';

/**
 * Trace, session and tool lookups of the SQLite audit log, kept in batches instead of per row.
 *
 * `audit_log` keeps one secondary index, the tenant index circuit breakers read on the call path. Rows by trace id,
 * session or tool name are operator lookups (`minara audit trace`, `--session`, `--tool`, the web app's trail and
 * audit page), so they are found through `audit_lookup`, a (kind, key, id) table filled for all rows up to a watermark
 * (`audit_lookup_state.through`) in one statement every {@link AUDIT_LOOKUP_BATCH} appends, inside the append that
 * crosses it. Rows above the watermark (fewer than one batch) are read directly by id. An append therefore writes
 * three index pages fewer than with `audit_log_trace`, `audit_log_session` and `audit_log_tool_at`
 * (docs/operations.md, "Sixth round").
 *
 * The table is only a finder, never evidence: every lookup is joined back to `audit_log` and filtered on the row's
 * own columns, so an entry left behind by a row edited or deleted with SQL matches nothing, and a trigger adds the
 * entries of a row whose id, trace, session or tool is edited.
 */
export const AUDIT_LOOKUP_BATCH = 1024;

/** Kinds of lookup entries: the row's trace id, its session id, and its tool name. */
const TRACE = 't';
const SESSION = 's';
const TOOL = 'n';
/** One INSERT per kind for the row `NEW` (the triggers' body). */
const INDEX_NEW = `INSERT OR IGNORE INTO audit_lookup (kind, key, id) SELECT '${TRACE}', NEW.trace_id, NEW.id WHERE NEW.trace_id IS NOT NULL;
      INSERT OR IGNORE INTO audit_lookup (kind, key, id) SELECT '${SESSION}', NEW.session_id, NEW.id WHERE NEW.session_id IS NOT NULL;
      INSERT OR IGNORE INTO audit_lookup (kind, key, id) VALUES ('${TOOL}', NEW.tool_name, NEW.id);`;

/** Fill the lookup for every row above `afterId` and move the watermark (inside a write transaction). */
const CATCH_UP = `INSERT OR IGNORE INTO audit_lookup (kind, key, id)
  SELECT kind, key, id FROM (
    SELECT '${TRACE}' AS kind, trace_id AS key, id FROM audit_log WHERE id > ? AND trace_id IS NOT NULL
    UNION ALL SELECT '${SESSION}', session_id, id FROM audit_log WHERE id > ? AND session_id IS NOT NULL
    UNION ALL SELECT '${TOOL}', tool_name, id FROM audit_log WHERE id > ?
  ) ORDER BY kind, key, id`;

/**
 * The `audit` domain's migration 4: drop the per-row trace, session and tool indexes and index every existing row in
 * `audit_lookup`. Written to be safe to run again over a partly older file (tests take files back to older versions).
 */
export function migrateAuditLookup(db: Database.Database): void {
  db.exec(`
    DROP INDEX IF EXISTS audit_log_trace;
    DROP INDEX IF EXISTS audit_log_tool_at;
    DROP INDEX IF EXISTS audit_log_session;
    CREATE TABLE IF NOT EXISTS audit_lookup (
      kind TEXT NOT NULL,
      key  TEXT NOT NULL,
      id   INTEGER NOT NULL,
      PRIMARY KEY (kind, key, id)
    ) STRICT, WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS audit_lookup_state (
      singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
      through   INTEGER NOT NULL
    ) STRICT;
    INSERT OR IGNORE INTO audit_lookup_state (singleton, through) VALUES (1, 0);
    -- A row whose id, trace, session or tool is edited with SQL is found under its new values at once; an entry for the old
    -- values stays behind and matches nothing (lookups are filtered on the row's own columns).
    CREATE TRIGGER IF NOT EXISTS audit_lookup_edited AFTER UPDATE OF id, trace_id, session_id, tool_name ON audit_log BEGIN
      ${INDEX_NEW}
    END;
    -- A row inserted with SQL under the watermark (into a gap an edit left) is found too; appends are always above
    -- it, so for them this is one comparison.
    CREATE TRIGGER IF NOT EXISTS audit_lookup_inserted AFTER INSERT ON audit_log
    WHEN NEW.id <= (SELECT through FROM audit_lookup_state WHERE singleton = 1) BEGIN
      ${INDEX_NEW}
    END;
  `);
  const through = db.prepare('SELECT through FROM audit_lookup_state WHERE singleton = 1').get() as { through: number };
  catchUpAuditLookup(db, through.through);
}

/**
 * Index every row above `afterId` and move the watermark to the newest row; returns the new watermark. Runs inside
 * the caller's write transaction (an append's, or the migration's), so it sees and covers a consistent set of rows.
 */
export function catchUpAuditLookup(db: { prepare(sql: string): Database.Statement }, afterId: number): number {
  db.prepare(CATCH_UP).run(afterId, afterId, afterId);
  const newest = (db.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM audit_log').get() as { id: number }).id;
  const through = Math.max(afterId, newest);
  // An upsert: a state row deleted with SQL comes back here (until then, lookups find only what the table lists).
  db.prepare('INSERT INTO audit_lookup_state (singleton, through) VALUES (1, ?) ON CONFLICT (singleton) DO UPDATE SET through = excluded.through').run(through);
  return through;
}

/** The watermark as part of the chain-state statement (one snapshot). */
export const AUDIT_LOOKUP_THROUGH = `(SELECT through FROM audit_lookup_state WHERE singleton = 1)`;

/**
 * The clause that narrows a query by trace id, session or tool name to the ids the lookup lists plus the rows above the
 * watermark (the caller keeps its own `trace_id = ?`, `session_id = ?` or `tool_name = ?` test, which settles every candidate).
 * `undefined` when the filter names none of them.
 */
export function auditLookupClause(filter: { readonly traceId?: string | undefined; readonly sessionId?: string | undefined; readonly toolName?: string | undefined }): { sql: string; param: string } | undefined {
  // The most selective key the filter names: a trace is one turn, a session many, a tool the most rows.
  const [kind, key] =
    filter.traceId !== undefined ? [TRACE, filter.traceId]
    : filter.sessionId !== undefined ? [SESSION, filter.sessionId]
    : filter.toolName !== undefined ? [TOOL, filter.toolName]
    : [undefined, undefined];
  if (kind === undefined || key === undefined) return undefined;
  return {
    sql: `id IN (SELECT id FROM audit_lookup WHERE kind = '${kind}' AND key = ? UNION ALL SELECT id FROM audit_log WHERE id > ${AUDIT_LOOKUP_THROUGH})`,
    param: key,
  };
}
