import type { ApprovalRecord, ApprovalStorage } from '../types';
import { APPROVAL_SHAPE, checkId, checkLimit, checkRecord, checkStatus, checkStatuses, duplicateId } from './checks';
import type { SqliteHandle } from './handle';
import { type CommitTracker, createReadCache } from './read-cache';
import { nul, opt, placeholders } from './rows';

interface ApprovalRow {
  id: string;
  tool_name: string;
  tool_call_id: string;
  input_hash: string;
  input_json: string;
  tier: number;
  session_id: string | null;
  trace_id: string | null;
  source: string;
  reason: string;
  status: ApprovalRecord['status'];
  created_at: string;
  expires_at: string;
  decided_at: string | null;
  decision_reason: string | null;
  executed_at: string | null;
  signature: string;
  decision_signature: string | null;
  execution_signature: string | null;
}

const INSERT = `INSERT INTO approvals
  (id, tool_name, tool_call_id, input_hash, input_json, tier, session_id, trace_id, source, reason, status,
   created_at, expires_at, decided_at, decision_reason, executed_at, signature, decision_signature, execution_signature)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function toRecord(r: ApprovalRow): ApprovalRecord {
  return {
    id: r.id,
    toolName: r.tool_name,
    toolCallId: r.tool_call_id,
    inputHash: r.input_hash,
    inputJson: r.input_json,
    tier: r.tier,
    ...opt('sessionId', r.session_id),
    ...opt('traceId', r.trace_id),
    source: r.source,
    reason: r.reason,
    status: r.status,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    ...opt('decidedAt', r.decided_at),
    ...opt('decisionReason', r.decision_reason),
    ...opt('executedAt', r.executed_at),
    signature: r.signature,
    ...opt('decisionSignature', r.decision_signature),
    ...opt('executionSignature', r.execution_signature),
  };
}

function isPrimaryKeyViolation(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** Session queries whose lists the cache keeps. */
const LIST_CACHE_QUERIES = 256;

/**
 * The `approvals` domain on SQLite; `transition` is one compare-and-set UPDATE. A session's list
 * (each turn asks for its pending approvals) comes from a cache validated by `data_version` on each read; any
 * approval this connection creates or moves drops every cached list.
 */
export function createSqliteApprovalStorage(handle: SqliteHandle, reads: CommitTracker): ApprovalStorage {
  const lists = createReadCache<readonly ApprovalRow[]>(reads, { maxEntries: LIST_CACHE_QUERIES });
  return {
    async create(record) {
      checkRecord('approvals.create', 'record', record, APPROVAL_SHAPE);
      checkStatus('approvals.create', 'record.status', record.status);
      handle.write('approvals.create', () => {
        lists.wroteAll();
        try {
          handle
            .prepare(INSERT)
            .run(
              record.id, record.toolName, record.toolCallId, record.inputHash, record.inputJson, record.tier,
              nul(record.sessionId), nul(record.traceId), record.source, record.reason, record.status,
              record.createdAt, record.expiresAt, nul(record.decidedAt), nul(record.decisionReason),
              nul(record.executedAt), record.signature, nul(record.decisionSignature), nul(record.executionSignature),
            );
        } catch (error) {
          if (isPrimaryKeyViolation(error)) throw duplicateId('approvals.create', 'an approval', record.id, error);
          throw error;
        }
      });
    },

    async get(id) {
      checkId('approvals.get', 'id', id);
      const row = handle.read('approvals.get', () => handle.prepare('SELECT * FROM approvals WHERE id = ?').get(id) as ApprovalRow | undefined);
      return row === undefined ? undefined : toRecord(row);
    },

    async list(query = {}) {
      const limit = checkLimit('approvals.list', query.limit, 100);
      const clauses: string[] = [];
      const params: unknown[] = [];
      if (query.status !== undefined) {
        const statuses = checkStatuses('approvals.list', 'status', query.status);
        clauses.push(`status IN (${placeholders(statuses.length)})`);
        params.push(...statuses);
      }
      if (query.sessionId !== undefined) {
        clauses.push('session_id = ?');
        params.push(query.sessionId);
      }
      const whereSql = clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`;
      const load = () => handle.prepare(`SELECT * FROM approvals${whereSql} ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(...params, limit) as ApprovalRow[];
      // A session's lists only (what a turn asks); the operator's listings across sessions read the table.
      const rows = handle.read('approvals.list', () => (query.sessionId === undefined ? load() : lists.get(JSON.stringify([whereSql, ...params, limit]), load)));
      return rows.map(toRecord);
    },

    async transition(id, from, to, patch = {}) {
      checkId('approvals.transition', 'id', id);
      const fromStatuses = checkStatuses('approvals.transition', 'from', from);
      checkStatus('approvals.transition', 'to', to);
      const result = handle.write('approvals.transition', () => {
        lists.wroteAll();
        return handle
          .prepare(
            `UPDATE approvals SET status = ?,
               decided_at = COALESCE(?, decided_at),
               decision_reason = COALESCE(?, decision_reason),
               decision_signature = COALESCE(?, decision_signature),
               executed_at = COALESCE(?, executed_at),
               execution_signature = COALESCE(?, execution_signature)
             WHERE id = ? AND status IN (${placeholders(fromStatuses.length)})`,
          )
          .run(to, nul(patch.decidedAt), nul(patch.decisionReason), nul(patch.decisionSignature), nul(patch.executedAt), nul(patch.executionSignature), id, ...fromStatuses);
      });
      return result.changes === 1;
    },
  };
}
