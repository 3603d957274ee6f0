/**
 * The `meta`, `approvals`, `grants` and `conversations` domains on Postgres (`audit` is in audit.ts). Same input checks and
 * semantics as the SQLite engine (shared `checks.ts`); the concurrency points are single statements or row
 * locks: the instance key is `INSERT … ON CONFLICT DO NOTHING` then read back, an approval transition is one
 * `UPDATE … WHERE status = ANY(…)` (exactly one caller wins, across instances), and appends lock the session
 * row (`FOR UPDATE`) so `MAX(seq) + 1` cannot race another instance.
 */
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../../util/canonical-json';
import type {
  ApprovalRecord, ApprovalStorage, ConversationStorage, GrantRecord, GrantStorage, InstanceInfo, MetaStorage, NewMessage,
  SessionRecord, StoredMessage,
} from '../types';
import {
  APPROVAL_SHAPE, checkGrantExtras, checkGrantKind, checkId, checkLimit, checkMessages, checkRecord, checkStatus, checkStatuses, duplicateId, GRANT_SHAPE, invalidArgument,
  notFound,
} from '../sqlite/checks';
import { jsonOrNull, nul, opt } from '../sqlite/rows';
import { sqlState, type PgHandle, type PgRow, type PgTx } from './handle';

const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const bytes = (v: unknown): Uint8Array => (v instanceof Uint8Array ? new Uint8Array(v) : new Uint8Array(0));

/** Re-throw a unique violation as the engine's "already exists" error. */
async function uniqueAs<T>(operation: string, what: string, id: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause ?? error;
    if (sqlState(cause) === '23505') throw duplicateId(operation, what, id, cause);
    throw error;
  }
}

/** How `meta` publishes a change: a CTE plus the final SELECT, folded into the write's statement. */
export type MetaChangeInline = (first: number, payloadSql: string) => { cte: string; select: string; params: unknown[] };

/** `meta`: instance record (created once, atomically) and key/value flags; each set/delete publishes its key. */
export function createPgMetaStorage(h: PgHandle, now: () => Date, inline?: MetaChangeInline): MetaStorage {
  const t = h.t('instance_meta');
  const toInfo = (r: PgRow): InstanceInfo => ({ instanceId: String(r.instance_id), hmacKey: bytes(r.hmac_key), createdAt: String(r.created_at) });
  /** Run `write` (a CTE) with the change notice in the same statement. */
  const withNotice = async (operation: string, write: string, params: unknown[]) => {
    if (inline === undefined) return void (await h.op(operation).run(write.replace(/^WITH w AS \((.*)\)$/s, '$1'), params));
    const n = inline(params.length + 1, '$1');
    await h.op(operation).run(`${write}, ${n.cte} ${n.select}`, [...params, ...n.params]);
  };
  return {
    async getInstance() {
      const op = 'meta.getInstance';
      let row = await h.op(op).get(`SELECT instance_id, hmac_key, created_at FROM ${t} WHERE singleton = 1`);
      if (row === undefined) {
        const key = randomBytes(32);
        await h.op(op).run(`INSERT INTO ${t} (singleton, instance_id, hmac_key, created_at) VALUES (1, $1, $2, $3) ON CONFLICT (singleton) DO NOTHING`, [
          sha256Hex(key).slice(0, 16), key, now().toISOString(),
        ]);
        row = await h.op(op).get(`SELECT instance_id, hmac_key, created_at FROM ${t} WHERE singleton = 1`);
      }
      return toInfo(row!);
    },
    async get(key) {
      checkId('meta.get', 'key', key);
      const row = await h.op('meta.get').get(`SELECT value FROM ${h.t('kv')} WHERE key = $1`, [key]);
      return row === undefined ? undefined : String(row.value);
    },
    async set(key, value) {
      checkId('meta.set', 'key', key);
      if (typeof value !== 'string') throw invalidArgument('meta.set', `value must be a string, got ${typeof value}`);
      await withNotice(
        'meta.set',
        `WITH w AS (INSERT INTO ${h.t('kv')} (key, value, updated_at) VALUES ($1::text, $2, $3) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at)`,
        [key, value, now().toISOString()],
      );
    },
    async delete(key) {
      checkId('meta.delete', 'key', key);
      await withNotice('meta.delete', `WITH w AS (DELETE FROM ${h.t('kv')} WHERE key = $1::text)`, [key]);
    },
  };
}

function toApproval(r: PgRow): ApprovalRecord {
  return {
    id: String(r.id), toolName: String(r.tool_name), toolCallId: String(r.tool_call_id), inputHash: String(r.input_hash), inputJson: String(r.input_json),
    tier: Number(r.tier), ...opt('sessionId', str(r.session_id)), ...opt('traceId', str(r.trace_id)), source: String(r.source), reason: String(r.reason),
    status: r.status as ApprovalRecord['status'], createdAt: String(r.created_at), expiresAt: String(r.expires_at), ...opt('decidedAt', str(r.decided_at)),
    ...opt('decisionReason', str(r.decision_reason)), ...opt('executedAt', str(r.executed_at)), signature: String(r.signature),
    ...opt('decisionSignature', str(r.decision_signature)), ...opt('executionSignature', str(r.execution_signature)),
  };
}

/** `approvals`: `transition` is one compare-and-set UPDATE (exactly one winner across instances). */
export function createPgApprovalStorage(h: PgHandle): ApprovalStorage {
  const t = h.t('approvals');
  return {
    async create(r) {
      checkRecord('approvals.create', 'record', r, APPROVAL_SHAPE);
      checkStatus('approvals.create', 'record.status', r.status);
      await uniqueAs('approvals.create', 'an approval', r.id, () =>
        h.op('approvals.create').run(
          `INSERT INTO ${t} (id, tool_name, tool_call_id, input_hash, input_json, tier, session_id, trace_id, source, reason, status, created_at, expires_at,
             decided_at, decision_reason, executed_at, signature, decision_signature, execution_signature)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
          [
            r.id, r.toolName, r.toolCallId, r.inputHash, r.inputJson, r.tier, nul(r.sessionId), nul(r.traceId), r.source, r.reason, r.status, r.createdAt, r.expiresAt,
            nul(r.decidedAt), nul(r.decisionReason), nul(r.executedAt), r.signature, nul(r.decisionSignature), nul(r.executionSignature),
          ],
        ),
      );
    },
    async get(id) {
      checkId('approvals.get', 'id', id);
      const row = await h.op('approvals.get').get(`SELECT * FROM ${t} WHERE id = $1`, [id]);
      return row === undefined ? undefined : toApproval(row);
    },
    async list(query = {}) {
      const limit = checkLimit('approvals.list', query.limit, 100);
      const clauses: string[] = [];
      const params: unknown[] = [];
      if (query.status !== undefined) {
        params.push([...checkStatuses('approvals.list', 'status', query.status)]);
        clauses.push(`status = ANY($${params.length}::text[])`);
      }
      if (query.sessionId !== undefined) {
        params.push(query.sessionId);
        clauses.push(`session_id = $${params.length}`);
      }
      params.push(limit);
      const where = clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`;
      return (await h.op('approvals.list').all(`SELECT * FROM ${t}${where} ORDER BY created_at DESC, seq DESC LIMIT $${params.length}`, params)).map(toApproval);
    },
    async transition(id, from, to, patch = {}) {
      checkId('approvals.transition', 'id', id);
      const fromStatuses = checkStatuses('approvals.transition', 'from', from);
      checkStatus('approvals.transition', 'to', to);
      const changed = await h.op('approvals.transition').run(
        `UPDATE ${t} SET status = $1,
           decided_at = COALESCE($2, decided_at), decision_reason = COALESCE($3, decision_reason), decision_signature = COALESCE($4, decision_signature),
           executed_at = COALESCE($5, executed_at), execution_signature = COALESCE($6, execution_signature)
         WHERE id = $7 AND status = ANY($8::text[])`,
        [to, nul(patch.decidedAt), nul(patch.decisionReason), nul(patch.decisionSignature), nul(patch.executedAt), nul(patch.executionSignature), id, [...fromStatuses]],
      );
      return changed === 1;
    },
  };
}

function toGrant(r: PgRow): GrantRecord {
  return {
    id: String(r.id), kind: r.kind as GrantRecord['kind'], toolName: String(r.tool_name), ...opt('sessionId', str(r.session_id)),
    ...opt('sources', r.sources_json == null ? null : (JSON.parse(String(r.sources_json)) as string[])),
    ...opt('argLimits', r.arg_limits_json == null ? null : (JSON.parse(String(r.arg_limits_json)) as GrantRecord['argLimits'])),
    createdAt: String(r.created_at), ...opt('expiresAt', str(r.expires_at)), ...opt('revokedAt', str(r.revoked_at)), ...opt('note', str(r.note)),
    ...opt('userId', str(r.user_id)),
    ...opt('tools', r.tools_json == null ? null : (JSON.parse(String(r.tools_json)) as string[])),
    ...opt('toolSets', r.tool_sets_json == null ? null : (JSON.parse(String(r.tool_sets_json)) as string[])),
    ...opt('capPerCallUsd', r.cap_per_call_usd == null ? null : Number(r.cap_per_call_usd)),
    ...opt('capPerDayUsd', r.cap_per_day_usd == null ? null : Number(r.cap_per_day_usd)),
    ...opt('createdBy', str(r.created_by)),
  };
}

/** `grants`: newest first; revoked grants hidden unless asked for. */
export function createPgGrantStorage(h: PgHandle): GrantStorage {
  const t = h.t('grants');
  return {
    async create(g) {
      checkRecord('grants.create', 'grant', g, GRANT_SHAPE);
      checkGrantKind('grants.create', 'grant.kind', g.kind);
      checkGrantExtras('grants.create', g as unknown as Record<string, unknown>);
      await uniqueAs('grants.create', 'a grant', g.id, () =>
        h.op('grants.create').run(
          `INSERT INTO ${t} (id, kind, tool_name, session_id, sources_json, arg_limits_json, created_at, expires_at, revoked_at, note,
             user_id, tools_json, tool_sets_json, cap_per_call_usd, cap_per_day_usd, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
          [
            g.id, g.kind, g.toolName, nul(g.sessionId), jsonOrNull(g.sources), jsonOrNull(g.argLimits), g.createdAt, nul(g.expiresAt), nul(g.revokedAt), nul(g.note),
            nul(g.userId), jsonOrNull(g.tools), jsonOrNull(g.toolSets), nul(g.capPerCallUsd), nul(g.capPerDayUsd), nul(g.createdBy),
          ],
        ),
      );
    },
    async get(id) {
      checkId('grants.get', 'id', id);
      const row = await h.op('grants.get').get(`SELECT * FROM ${t} WHERE id = $1`, [id]);
      return row === undefined ? undefined : toGrant(row);
    },
    async list(query = {}) {
      if (query.kind !== undefined) checkGrantKind('grants.list', 'kind', query.kind);
      const clauses: string[] = [];
      const params: unknown[] = [];
      const add = (column: string, value: unknown) => {
        if (value === undefined) return;
        params.push(value);
        clauses.push(`${column} = $${params.length}`);
      };
      add('kind', query.kind);
      add('tool_name', query.toolName);
      add('session_id', query.sessionId);
      add('user_id', query.userId);
      if (query.includeRevoked !== true) clauses.push('revoked_at IS NULL');
      const where = clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`;
      return (await h.op('grants.list').all(`SELECT * FROM ${t}${where} ORDER BY created_at DESC, seq DESC`, params)).map(toGrant);
    },
    async revoke(id, at) {
      checkId('grants.revoke', 'id', id);
      checkId('grants.revoke', 'at', at);
      return (await h.op('grants.revoke').run(`UPDATE ${t} SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, [at, id])) === 1;
    },
  };
}

function toSession(r: PgRow): SessionRecord {
  return {
    id: String(r.id), ...opt('userId', str(r.user_id)), ...opt('title', str(r.title)), createdAt: String(r.created_at), updatedAt: String(r.updated_at),
    ...opt('metadata', r.metadata_json == null ? null : (JSON.parse(String(r.metadata_json)) as Record<string, unknown>)),
  };
}

function toMessage(r: PgRow): StoredMessage {
  return { sessionId: String(r.session_id), seq: Number(r.seq), role: r.role as StoredMessage['role'], json: String(r.json), ...opt('turnId', str(r.turn_id)), createdAt: String(r.created_at) };
}

const NO_SESSION_HINT = '; call conversations.ensureSession first';

/** `conversations`: sessions plus messages with a contiguous per-session `seq` (the session row is locked). */
export function createPgConversationStorage(h: PgHandle, now: () => Date): ConversationStorage {
  const S = h.t('sessions');
  const M = h.t('messages');
  const insertAfter = async (tx: PgTx, sessionId: string, base: number, messages: readonly NewMessage[]): Promise<StoredMessage[]> => {
    const stored = messages.map((m, i): StoredMessage => ({ sessionId, seq: base + i + 1, role: m.role, json: m.json, ...opt('turnId', m.turnId), createdAt: m.createdAt }));
    if (stored.length > 0) {
      await tx.run(
        `INSERT INTO ${M} (session_id, seq, role, json, turn_id, created_at)
         SELECT $1, * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[], $6::text[])`,
        [sessionId, stored.map((m) => m.seq), stored.map((m) => m.role), stored.map((m) => m.json), stored.map((m) => m.turnId ?? null), stored.map((m) => m.createdAt)],
      );
    }
    await tx.run(`UPDATE ${S} SET updated_at = $1 WHERE id = $2`, [now().toISOString(), sessionId]);
    return stored;
  };
  const lockSession = async (tx: PgTx, op: string, sessionId: string): Promise<void> => {
    if ((await tx.get(`SELECT 1 AS x FROM ${S} WHERE id = $1 FOR UPDATE`, [sessionId])) === undefined) throw notFound(op, 'session', sessionId, NO_SESSION_HINT);
  };
  return {
    async ensureSession(session) {
      if (typeof session !== 'object' || session === null) throw invalidArgument('conversations.ensureSession', 'session must be an object');
      checkId('conversations.ensureSession', 'session.id', session.id);
      checkId('conversations.ensureSession', 'session.now', session.now);
      const op = h.op('conversations.ensureSession');
      await op.run(
        `INSERT INTO ${S} (id, user_id, title, created_at, updated_at, metadata_json) VALUES ($1, $2, $3, $4, $4, $5) ON CONFLICT (id) DO NOTHING`,
        [session.id, nul(session.userId), nul(session.title), session.now, jsonOrNull(session.metadata)],
      );
      return toSession((await op.get(`SELECT * FROM ${S} WHERE id = $1`, [session.id]))!);
    },
    async getSession(id) {
      checkId('conversations.getSession', 'id', id);
      const row = await h.op('conversations.getSession').get(`SELECT * FROM ${S} WHERE id = $1`, [id]);
      return row === undefined ? undefined : toSession(row);
    },
    async listSessions(query = {}) {
      const limit = checkLimit('conversations.listSessions', query.limit, 100);
      const rows =
        query.userId === undefined
          ? await h.op('conversations.listSessions').all(`SELECT * FROM ${S} ORDER BY updated_at DESC, seq DESC LIMIT $1`, [limit])
          : await h.op('conversations.listSessions').all(`SELECT * FROM ${S} WHERE user_id = $1 ORDER BY updated_at DESC, seq DESC LIMIT $2`, [query.userId, limit]);
      return rows.map(toSession);
    },
    async appendMessages(sessionId, messages) {
      const op = 'conversations.appendMessages';
      checkId(op, 'sessionId', sessionId);
      checkMessages(op, messages);
      return h.tx(op, async (tx) => {
        await lockSession(tx, op, sessionId);
        if (messages.length === 0) return [];
        const row = await tx.get(`SELECT COALESCE(MAX(seq), 0) AS last FROM ${M} WHERE session_id = $1`, [sessionId]);
        return insertAfter(tx, sessionId, Number(row?.last ?? 0), messages);
      });
    },
    async listMessages(sessionId, query = {}) {
      const op = 'conversations.listMessages';
      checkId(op, 'sessionId', sessionId);
      const limit = checkLimit(op, query.limit);
      const afterSeq = query.afterSeq ?? 0;
      if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw invalidArgument(op, `afterSeq must be a non-negative integer, got ${String(query.afterSeq)}`);
      const rows =
        limit === undefined
          ? await h.op(op).all(`SELECT * FROM ${M} WHERE session_id = $1 AND seq > $2 ORDER BY seq`, [sessionId, afterSeq])
          : await h.op(op).all(`SELECT * FROM ${M} WHERE session_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [sessionId, afterSeq, limit]);
      return rows.map(toMessage);
    },
    async replaceMessages(sessionId, messages) {
      const op = 'conversations.replaceMessages';
      checkId(op, 'sessionId', sessionId);
      checkMessages(op, messages);
      return h.tx(op, async (tx) => {
        await lockSession(tx, op, sessionId);
        await tx.run(`DELETE FROM ${M} WHERE session_id = $1`, [sessionId]);
        return insertAfter(tx, sessionId, 0, messages);
      });
    },
    async deleteSession(id) {
      checkId('conversations.deleteSession', 'id', id);
      return (await h.op('conversations.deleteSession').run(`DELETE FROM ${S} WHERE id = $1`, [id])) === 1;
    },
  };
}
