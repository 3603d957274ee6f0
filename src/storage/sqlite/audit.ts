import type { AuditChainHead } from '../audit-types';
import { AUDIT_CONTENT_COLUMNS, auditChainRowOf, auditContentOf, auditEntryOf, auditHeadOf, auditRowHash, verifyAuditChain } from '../audit-chain';
import type { AuditQuery, AuditStorage } from '../types';
import { AUDIT_ENTRY_SHAPE, checkLimit, checkRecord } from './checks';
import type { SqliteHandle, SqliteMigration } from './handle';

const COLUMNS = AUDIT_CONTENT_COLUMNS.map(([c]) => c);
const INSERT = `INSERT INTO audit_log (${COLUMNS.join(', ')}, seq, prev_hash, hash) VALUES (${COLUMNS.map(() => '?').join(', ')}, ?, ?, ?)`;
const HEAD = 'SELECT seq, hash, legacy_rows, legacy_max_id FROM audit_chain_head WHERE singleton = 1';

/**
 * The `audit` domain's own migrations (beside `core`, which created `audit_log`): the outcome, tenant, kind and
 * detail columns, the chain link, and the chain-head row. Rows already in the table stay as they are: the head
 * records how many there were (`legacy_rows`, `legacy_max_id`) and `verify` reports them as the unchained prefix.
 */
export const auditMigrations: readonly SqliteMigration[] = [
  {
    domain: 'audit',
    version: 1,
    name: 'audit outcomes, tenant, kinds and the hash chain',
    up(db) {
      db.exec(`
        ALTER TABLE audit_log ADD COLUMN user_id TEXT;
        ALTER TABLE audit_log ADD COLUMN kind TEXT;
        ALTER TABLE audit_log ADD COLUMN outcome_json TEXT;
        ALTER TABLE audit_log ADD COLUMN detail_json TEXT;
        ALTER TABLE audit_log ADD COLUMN seq INTEGER;
        ALTER TABLE audit_log ADD COLUMN prev_hash TEXT;
        ALTER TABLE audit_log ADD COLUMN hash TEXT;
        CREATE INDEX audit_log_user ON audit_log (user_id, id);
        CREATE TABLE audit_chain_head (
          singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
          seq INTEGER NOT NULL,
          hash TEXT NOT NULL,
          legacy_rows INTEGER NOT NULL,
          legacy_max_id INTEGER NOT NULL,
          started_at TEXT NOT NULL
        ) STRICT;
        INSERT INTO audit_chain_head (singleton, seq, hash, legacy_rows, legacy_max_id, started_at)
          SELECT 1, 0, '${'0'.repeat(64)}', COUNT(*), COALESCE(MAX(id), 0), strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM audit_log;
      `);
    },
  },
];

/** WHERE clause and parameters for an audit filter (`since` inclusive, `until` exclusive). */
function where(filter: Omit<AuditQuery, 'limit'>): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    if (value === undefined) return;
    clauses.push(clause);
    params.push(value);
  };
  add('tool_name = ?', filter.toolName);
  add('session_id = ?', filter.sessionId);
  add('trace_id = ?', filter.traceId);
  add('decision = ?', filter.decision);
  add('at >= ?', filter.since);
  add('at < ?', filter.until);
  add('user_id = ?', filter.userId);
  add("COALESCE(kind, 'tool_call') = ?", filter.kind);
  add('id > ?', filter.afterId);
  add('id < ?', filter.beforeId);
  return { sql: clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`, params };
}

/**
 * The `audit` domain on SQLite: an append-only, hash-chained table. Each append reads the chain head, inserts
 * the row with its link and moves the head, in one `BEGIN IMMEDIATE` transaction (so processes sharing the file
 * take turns and never fork the chain).
 */
export function createSqliteAuditStorage(handle: SqliteHandle): AuditStorage {
  const head = (): AuditChainHead => auditHeadOf(handle.prepare(HEAD).get() as Record<string, unknown> | undefined);
  return {
    async append(entry) {
      checkRecord('audit.append', 'entry', entry, AUDIT_ENTRY_SHAPE);
      const content = auditContentOf(entry);
      const values = AUDIT_CONTENT_COLUMNS.map(([, key]) => content[key] ?? null);
      handle.write('audit.append', () => {
        const h = head();
        const seq = h.seq + 1;
        const hash = auditRowHash(h.hash, seq, content);
        handle.prepare(INSERT).run(...values, seq, h.hash, hash);
        handle.prepare('UPDATE audit_chain_head SET seq = ?, hash = ? WHERE singleton = 1').run(seq, hash);
      });
    },

    async query(filter = {}) {
      const limit = checkLimit('audit.query', filter.limit, 100);
      const { sql, params } = where(filter);
      const order = filter.order === 'oldest' ? 'ASC' : 'DESC';
      const rows = handle.read('audit.query', () => handle.prepare(`SELECT * FROM audit_log${sql} ORDER BY id ${order} LIMIT ?`).all(...params, limit) as Record<string, unknown>[]);
      return rows.map((r) => auditEntryOf(auditChainRowOf(r)));
    },

    async count(filter = {}) {
      const { sql, params } = where(filter);
      const row = handle.read('audit.count', () => handle.prepare(`SELECT COUNT(*) AS n FROM audit_log${sql}`).get(...params) as { n: number });
      return row.n;
    },

    async head() {
      return handle.read('audit.head', head);
    },

    async verify(options = {}) {
      // The head and the newest id in one statement (one snapshot): rows appended while the walk runs are not judged.
      const snap = handle.read('audit.verify', () => handle.prepare(`SELECT seq, hash, legacy_rows, legacy_max_id, (SELECT COALESCE(MAX(id), 0) FROM audit_log) AS max_id FROM audit_chain_head WHERE singleton = 1`).get() as Record<string, unknown> | undefined);
      const maxId = Number(snap?.max_id ?? 0);
      return verifyAuditChain(auditHeadOf(snap), async (afterId, limit) =>
        handle.read('audit.verify', () => (handle.prepare('SELECT * FROM audit_log WHERE id > ? AND id <= ? ORDER BY id LIMIT ?').all(afterId, maxId, limit) as Record<string, unknown>[]).map(auditChainRowOf)),
      options);
    },
  };
}
