import type { ArtifactRecord, ArtifactStorage, FileStorage, StoredFileRecord } from '../artifact-types';
import { checkArtifactQuery, checkFileRecord, checkNewArtifact, checkScope } from '../artifact-checks';
import { checkId, checkLimit, duplicateId } from '../sqlite/checks';
import { compact } from './copy';

/** The `artifacts` domain in memory: same semantics as the SQLite engine. */
export function createInMemoryArtifactStorage(): ArtifactStorage {
  const rows = new Map<string, ArtifactRecord>();
  let seq = 0;
  const order = new Map<string, number>();
  const own = (userId: string, id: string) => {
    const r = rows.get(id);
    return r && r.userId === userId ? r : undefined;
  };
  const transition = (op: string, scope: { userId: string }, id: string, patch: Partial<ArtifactRecord>, at: string) => {
    checkScope(op, scope);
    checkId(op, 'id', id);
    checkId(op, 'at', at);
    const r = own(scope.userId, id);
    if (!r || r.status !== 'running') return undefined;
    const next = compact({ ...r, ...patch, updatedAt: at });
    rows.set(id, next);
    return { ...next };
  };
  return {
    async insert(scope, a) {
      checkScope('artifacts.insert', scope);
      checkNewArtifact('artifacts.insert', a);
      if (rows.has(a.id)) throw duplicateId('artifacts.insert', 'an artifact', a.id);
      const r: ArtifactRecord = compact({ id: a.id, userId: scope.userId, kind: a.kind, status: 'running' as const, title: a.title, sessionId: a.sessionId, turnId: a.turnId, createdAt: a.createdAt, updatedAt: a.createdAt });
      rows.set(a.id, r);
      order.set(a.id, ++seq);
      return { ...r };
    },
    async markCompleted(scope, id, patch) {
      if (typeof patch?.dataJson !== 'string') checkId('artifacts.markCompleted', 'dataJson', patch?.dataJson);
      return transition('artifacts.markCompleted', scope, id, { status: 'completed', dataJson: patch.dataJson }, patch.at);
    },
    async markError(scope, id, patch) {
      if (typeof patch?.error !== 'string') checkId('artifacts.markError', 'error', patch?.error);
      return transition('artifacts.markError', scope, id, { status: 'error', error: patch.error }, patch.at);
    },
    async get(scope, id) {
      checkScope('artifacts.get', scope);
      checkId('artifacts.get', 'id', id);
      const r = own(scope.userId, id);
      return r ? { ...r } : undefined;
    },
    async list(scope, query = {}) {
      checkScope('artifacts.list', scope);
      const limit = checkArtifactQuery('artifacts.list', query);
      return [...rows.values()]
        .filter((r) => r.userId === scope.userId && (query.sessionId === undefined || r.sessionId === query.sessionId) && (query.kind === undefined || r.kind === query.kind))
        .sort((a, b) => (a.createdAt === b.createdAt ? order.get(b.id)! - order.get(a.id)! : a.createdAt < b.createdAt ? 1 : -1))
        .slice(0, limit)
        .map((r) => ({ ...r }));
    },
  };
}

/** The `files` metadata domain in memory: same semantics as the SQLite engine. */
export function createInMemoryFileStorage(): FileStorage {
  const rows = new Map<string, StoredFileRecord>();
  const order = new Map<string, number>();
  let seq = 0;
  return {
    async put(scope, r) {
      checkScope('files.put', scope);
      checkFileRecord('files.put', r);
      if (rows.has(r.key)) throw duplicateId('files.put', 'a file', r.key);
      const rec: StoredFileRecord = compact({ ...r, userId: scope.userId });
      rows.set(r.key, rec);
      order.set(r.key, ++seq);
      return { ...rec };
    },
    async get(scope, key) {
      checkScope('files.get', scope);
      checkId('files.get', 'key', key);
      const r = rows.get(key);
      return r && r.userId === scope.userId ? { ...r } : undefined;
    },
    async list(scope, query = {}) {
      checkScope('files.list', scope);
      const limit = checkLimit('files.list', query.limit, 50);
      return [...rows.values()]
        .filter((r) => r.userId === scope.userId)
        .sort((a, b) => (a.createdAt === b.createdAt ? order.get(b.key)! - order.get(a.key)! : a.createdAt < b.createdAt ? 1 : -1))
        .slice(0, limit)
        .map((r) => ({ ...r }));
    },
    async delete(scope, key) {
      checkScope('files.delete', scope);
      checkId('files.delete', 'key', key);
      const r = rows.get(key);
      if (!r || r.userId !== scope.userId) return false;
      rows.delete(key);
      return true;
    },
  };
}
