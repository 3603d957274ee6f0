import type { GrantRecord, GrantStorage } from '../types';
import { checkGrantExtras, checkGrantKind, checkId, checkRecord, duplicateId, GRANT_SHAPE } from '../sqlite/checks';
import { compact, jsonCopy } from './copy';

/** The `grants` domain in memory. Listing is newest first; revoked grants are hidden unless asked for. */
export function createInMemoryGrantStorage(): GrantStorage {
  const byId = new Map<string, GrantRecord>();
  return {
    async create(grant) {
      checkRecord('grants.create', 'grant', grant, GRANT_SHAPE);
      checkGrantKind('grants.create', 'grant.kind', grant.kind);
      checkGrantExtras('grants.create', grant as unknown as Record<string, unknown>);
      if (byId.has(grant.id)) throw duplicateId('grants.create', 'a grant', grant.id);
      byId.set(grant.id, jsonCopy(compact({ ...grant })));
    },
    async get(id) {
      checkId('grants.get', 'id', id);
      const row = byId.get(id);
      return row === undefined ? undefined : jsonCopy(row);
    },
    async list(query = {}) {
      if (query.kind !== undefined) checkGrantKind('grants.list', 'kind', query.kind);
      return [...byId.values()]
        .map((row, order) => ({ row, order }))
        .filter(
          ({ row }) =>
            (query.kind === undefined || row.kind === query.kind) &&
            (query.toolName === undefined || row.toolName === query.toolName) &&
            (query.sessionId === undefined || row.sessionId === query.sessionId) &&
            (query.userId === undefined || row.userId === query.userId) &&
            (query.includeRevoked === true || row.revokedAt === undefined),
        )
        .sort((a, b) => (a.row.createdAt < b.row.createdAt ? 1 : a.row.createdAt > b.row.createdAt ? -1 : b.order - a.order))
        .map(({ row }) => jsonCopy(row));
    },
    async revoke(id, at) {
      checkId('grants.revoke', 'id', id);
      checkId('grants.revoke', 'at', at);
      const row = byId.get(id);
      if (row === undefined || row.revokedAt !== undefined) return false;
      byId.set(id, { ...row, revokedAt: at });
      return true;
    },
  };
}
