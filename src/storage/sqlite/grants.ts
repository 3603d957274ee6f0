import type { GrantRecord, GrantStorage } from '../types';
import { checkGrantExtras, checkGrantKind, checkId, checkRecord, duplicateId, GRANT_SHAPE } from './checks';
import type { SqliteHandle } from './handle';
import { jsonOrNull, nul, opt } from './rows';

interface GrantRow {
  id: string;
  kind: GrantRecord['kind'];
  tool_name: string;
  session_id: string | null;
  sources_json: string | null;
  arg_limits_json: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  note: string | null;
  user_id: string | null;
  tools_json: string | null;
  tool_sets_json: string | null;
  cap_per_call_usd: number | null;
  cap_per_day_usd: number | null;
  created_by: string | null;
}

const INSERT = `INSERT INTO grants
  (id, kind, tool_name, session_id, sources_json, arg_limits_json, created_at, expires_at, revoked_at, note,
   user_id, tools_json, tool_sets_json, cap_per_call_usd, cap_per_day_usd, created_by)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

function toRecord(r: GrantRow): GrantRecord {
  return {
    id: r.id,
    kind: r.kind,
    toolName: r.tool_name,
    ...opt('sessionId', r.session_id),
    ...opt('sources', r.sources_json === null ? null : (JSON.parse(r.sources_json) as string[])),
    ...opt('argLimits', r.arg_limits_json === null ? null : (JSON.parse(r.arg_limits_json) as GrantRecord['argLimits'])),
    createdAt: r.created_at,
    ...opt('expiresAt', r.expires_at),
    ...opt('revokedAt', r.revoked_at),
    ...opt('note', r.note),
    ...opt('userId', r.user_id),
    ...opt('tools', r.tools_json === null ? null : (JSON.parse(r.tools_json) as string[])),
    ...opt('toolSets', r.tool_sets_json === null ? null : (JSON.parse(r.tool_sets_json) as string[])),
    ...opt('capPerCallUsd', r.cap_per_call_usd),
    ...opt('capPerDayUsd', r.cap_per_day_usd),
    ...opt('createdBy', r.created_by),
  };
}

/** The `grants` domain on SQLite. Listing is newest first; revoked grants are hidden unless asked for. */
export function createSqliteGrantStorage(handle: SqliteHandle): GrantStorage {
  return {
    async create(grant) {
      checkRecord('grants.create', 'grant', grant, GRANT_SHAPE);
      checkGrantKind('grants.create', 'grant.kind', grant.kind);
      checkGrantExtras('grants.create', grant as unknown as Record<string, unknown>);
      handle.write('grants.create', () => {
        try {
          handle
            .prepare(INSERT)
            .run(
              grant.id, grant.kind, grant.toolName, nul(grant.sessionId), jsonOrNull(grant.sources), jsonOrNull(grant.argLimits),
              grant.createdAt, nul(grant.expiresAt), nul(grant.revokedAt), nul(grant.note),
              nul(grant.userId), jsonOrNull(grant.tools), jsonOrNull(grant.toolSets), nul(grant.capPerCallUsd), nul(grant.capPerDayUsd), nul(grant.createdBy),
            );
        } catch (error) {
          if ((error as { code?: unknown }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw duplicateId('grants.create', 'a grant', grant.id, error);
          throw error;
        }
      });
    },

    async get(id) {
      checkId('grants.get', 'id', id);
      const row = handle.read('grants.get', () => handle.prepare('SELECT * FROM grants WHERE id = ?').get(id) as GrantRow | undefined);
      return row === undefined ? undefined : toRecord(row);
    },

    async list(query = {}) {
      if (query.kind !== undefined) checkGrantKind('grants.list', 'kind', query.kind);
      const clauses: string[] = [];
      const params: unknown[] = [];
      const add = (clause: string, value: unknown) => {
        if (value === undefined) return;
        clauses.push(clause);
        params.push(value);
      };
      add('kind = ?', query.kind);
      add('tool_name = ?', query.toolName);
      add('session_id = ?', query.sessionId);
      add('user_id = ?', query.userId);
      if (query.includeRevoked !== true) clauses.push('revoked_at IS NULL');
      const whereSql = clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`;
      const rows = handle.read('grants.list', () =>
        handle.prepare(`SELECT * FROM grants${whereSql} ORDER BY created_at DESC, rowid DESC`).all(...params) as GrantRow[],
      );
      return rows.map(toRecord);
    },

    async revoke(id, at) {
      checkId('grants.revoke', 'id', id);
      checkId('grants.revoke', 'at', at);
      const result = handle.write('grants.revoke', () =>
        handle.prepare('UPDATE grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id),
      );
      return result.changes === 1;
    },
  };
}
