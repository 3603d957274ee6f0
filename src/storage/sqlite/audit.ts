import type { AuditEntry, AuditEntryInput, AuditQuery, AuditStorage } from '../types';
import { AUDIT_ENTRY_SHAPE, checkLimit, checkRecord } from './checks';
import type { SqliteHandle } from './handle';
import { nul, opt } from './rows';

interface AuditRow {
  id: number;
  at: string;
  tool_name: string;
  tier: number;
  source: string;
  session_id: string | null;
  trace_id: string | null;
  tool_call_id: string | null;
  approval_id: string | null;
  decision: AuditEntry['decision'];
  code: string | null;
  reason: string | null;
  duration_ms: number;
  args_json: string;
  mode: 'preview' | 'execute' | null;
}

const INSERT = `INSERT INTO audit_log
  (at, tool_name, tier, source, session_id, trace_id, tool_call_id, approval_id, decision, code, reason, duration_ms, args_json, mode)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function toEntry(r: AuditRow): AuditEntry {
  return {
    id: r.id,
    at: r.at,
    toolName: r.tool_name,
    tier: r.tier,
    source: r.source,
    ...opt('sessionId', r.session_id),
    ...opt('traceId', r.trace_id),
    ...opt('toolCallId', r.tool_call_id),
    ...opt('approvalId', r.approval_id),
    decision: r.decision,
    ...opt('code', r.code),
    ...opt('reason', r.reason),
    durationMs: r.duration_ms,
    argsJson: r.args_json,
    ...opt('mode', r.mode),
  };
}

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
  return { sql: clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`, params };
}

/** The `audit` domain on SQLite: an append-only table, queried newest first. */
export function createSqliteAuditStorage(handle: SqliteHandle): AuditStorage {
  return {
    async append(entry: AuditEntryInput) {
      checkRecord('audit.append', 'entry', entry, AUDIT_ENTRY_SHAPE);
      handle.write('audit.append', () =>
        handle
          .prepare(INSERT)
          .run(
            entry.at,
            entry.toolName,
            entry.tier,
            entry.source,
            nul(entry.sessionId),
            nul(entry.traceId),
            nul(entry.toolCallId),
            nul(entry.approvalId),
            entry.decision,
            nul(entry.code),
            nul(entry.reason),
            entry.durationMs,
            entry.argsJson,
            nul(entry.mode),
          ),
      );
    },

    async query(filter = {}) {
      const limit = checkLimit('audit.query', filter.limit, 100);
      const { sql, params } = where(filter);
      const rows = handle.read('audit.query', () =>
        handle.prepare(`SELECT * FROM audit_log${sql} ORDER BY id DESC LIMIT ?`).all(...params, limit) as AuditRow[],
      );
      return rows.map(toEntry);
    },

    async count(filter = {}) {
      const { sql, params } = where(filter);
      const row = handle.read('audit.count', () => handle.prepare(`SELECT COUNT(*) AS n FROM audit_log${sql}`).get(...params) as { n: number });
      return row.n;
    },
  };
}
