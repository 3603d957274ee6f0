/**
 * The `artifacts` and `files` domains on PostgreSQL: the same rows, checks and scoping as the SQLite engine
 * (`src/storage/sqlite/artifacts.ts`); an id of another user reads as absent, and a status moves only from
 * `running`, by compare-and-set.
 */
import type { ArtifactRecord, ArtifactStorage, FileStorage, StoredFileRecord } from '../artifact-types';
import { checkArtifactQuery, checkFileRecord, checkNewArtifact, checkScope } from '../artifact-checks';
import { checkId, checkLimit, duplicateId } from '../sqlite/checks';
import type { PgHandle, PgRow } from './handle';
import type { PostgresMigration } from './migrate';

/** Migrations of the `artifacts` domain. Append new versions; never edit one that has shipped. */
export const artifactMigrations: readonly PostgresMigration[] = [
  {
    domain: 'artifacts',
    version: 1,
    name: 'chat artifacts and stored file metadata',
    up: async (tx, { t }) => {
      await tx.run(`CREATE TABLE ${t('chat_artifacts')} (
        id TEXT PRIMARY KEY, user_id TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, title TEXT, session_id TEXT, turn_id TEXT,
        data_json TEXT, error TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, seq BIGINT GENERATED ALWAYS AS IDENTITY)`);
      await tx.run(`CREATE INDEX chat_artifacts_user_created ON ${t('chat_artifacts')} (user_id, created_at)`);
      await tx.run(`CREATE INDEX chat_artifacts_session ON ${t('chat_artifacts')} (session_id)`);
      await tx.run(`CREATE TABLE ${t('stored_files')} (
        key TEXT PRIMARY KEY, user_id TEXT NOT NULL, media_type TEXT NOT NULL, declared_type TEXT, filename TEXT, size_bytes BIGINT NOT NULL,
        sha256 TEXT NOT NULL, location TEXT NOT NULL, session_id TEXT, created_at TEXT NOT NULL, seq BIGINT GENERATED ALWAYS AS IDENTITY)`);
      await tx.run(`CREATE INDEX stored_files_user_created ON ${t('stored_files')} (user_id, created_at)`);
    },
  },
];

const opt = <K extends string>(k: K, v: unknown) => (v === null || v === undefined ? {} : ({ [k]: String(v) } as Record<K, string>));

function toArtifact(r: PgRow): ArtifactRecord {
  return {
    id: String(r.id), userId: String(r.user_id), kind: r.kind as ArtifactRecord['kind'], status: r.status as ArtifactRecord['status'],
    ...opt('title', r.title), ...opt('sessionId', r.session_id), ...opt('turnId', r.turn_id), ...opt('dataJson', r.data_json), ...opt('error', r.error),
    createdAt: String(r.created_at), updatedAt: String(r.updated_at),
  };
}

function toFile(r: PgRow): StoredFileRecord {
  return {
    key: String(r.key), userId: String(r.user_id), mediaType: String(r.media_type), ...opt('declaredType', r.declared_type), ...opt('filename', r.filename),
    sizeBytes: Number(r.size_bytes), sha256: String(r.sha256), location: String(r.location), ...opt('sessionId', r.session_id), createdAt: String(r.created_at),
  };
}

/** The `artifacts` domain on PostgreSQL. */
export function createPgArtifactStorage(h: PgHandle): ArtifactStorage {
  const A = h.t('chat_artifacts');
  const transition = async (op: string, scope: { userId: string }, id: string, column: 'data_json' | 'error', value: string, at: string, status: string) => {
    checkScope(op, scope);
    checkId(op, 'id', id);
    checkId(op, 'at', at);
    const r = await h.op(op).get(`UPDATE ${A} SET status = $1, ${column} = $2, updated_at = $3 WHERE id = $4 AND user_id = $5 AND status = 'running' RETURNING *`, [status, value, at, id, scope.userId]);
    return r ? toArtifact(r) : undefined;
  };
  return {
    async insert(scope, a) {
      checkScope('artifacts.insert', scope);
      checkNewArtifact('artifacts.insert', a);
      const r = await h.op('artifacts.insert').get(
        `INSERT INTO ${A} (id, user_id, kind, status, title, session_id, turn_id, created_at, updated_at) VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $7)
         ON CONFLICT (id) DO NOTHING RETURNING *`,
        [a.id, scope.userId, a.kind, a.title ?? null, a.sessionId ?? null, a.turnId ?? null, a.createdAt],
      );
      if (!r) throw duplicateId('artifacts.insert', 'an artifact', a.id);
      return toArtifact(r);
    },
    async markCompleted(scope, id, patch) {
      if (typeof patch?.dataJson !== 'string') checkId('artifacts.markCompleted', 'dataJson', patch?.dataJson);
      return transition('artifacts.markCompleted', scope, id, 'data_json', patch.dataJson, patch.at, 'completed');
    },
    async markError(scope, id, patch) {
      if (typeof patch?.error !== 'string') checkId('artifacts.markError', 'error', patch?.error);
      return transition('artifacts.markError', scope, id, 'error', patch.error, patch.at, 'error');
    },
    async get(scope, id) {
      checkScope('artifacts.get', scope);
      checkId('artifacts.get', 'id', id);
      const r = await h.op('artifacts.get').get(`SELECT * FROM ${A} WHERE id = $1 AND user_id = $2`, [id, scope.userId]);
      return r ? toArtifact(r) : undefined;
    },
    async list(scope, query = {}) {
      checkScope('artifacts.list', scope);
      const limit = checkArtifactQuery('artifacts.list', query);
      const where = ['user_id = $1'];
      const args: unknown[] = [scope.userId];
      if (query.sessionId !== undefined) (args.push(query.sessionId), where.push(`session_id = $${args.length}`));
      if (query.kind !== undefined) (args.push(query.kind), where.push(`kind = $${args.length}`));
      args.push(limit);
      return (await h.op('artifacts.list').all(`SELECT * FROM ${A} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, seq DESC LIMIT $${args.length}`, args)).map(toArtifact);
    },
  };
}

/** The `files` metadata domain on PostgreSQL. */
export function createPgFileStorage(h: PgHandle): FileStorage {
  const F = h.t('stored_files');
  return {
    async put(scope, r) {
      checkScope('files.put', scope);
      checkFileRecord('files.put', r);
      const row = await h.op('files.put').get(
        `INSERT INTO ${F} (key, user_id, media_type, declared_type, filename, size_bytes, sha256, location, session_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
         ON CONFLICT (key) DO NOTHING RETURNING *`,
        [r.key, scope.userId, r.mediaType, r.declaredType ?? null, r.filename ?? null, r.sizeBytes, r.sha256, r.location, r.sessionId ?? null, r.createdAt],
      );
      if (!row) throw duplicateId('files.put', 'a file', r.key);
      return toFile(row);
    },
    async get(scope, key) {
      checkScope('files.get', scope);
      checkId('files.get', 'key', key);
      const row = await h.op('files.get').get(`SELECT * FROM ${F} WHERE key = $1 AND user_id = $2`, [key, scope.userId]);
      return row ? toFile(row) : undefined;
    },
    async list(scope, query = {}) {
      checkScope('files.list', scope);
      const limit = checkLimit('files.list', query.limit, 50);
      return (await h.op('files.list').all(`SELECT * FROM ${F} WHERE user_id = $1 ORDER BY created_at DESC, seq DESC LIMIT $2`, [scope.userId, limit])).map(toFile);
    },
    async delete(scope, key) {
      checkScope('files.delete', scope);
      checkId('files.delete', 'key', key);
      return (await h.op('files.delete').run(`DELETE FROM ${F} WHERE key = $1 AND user_id = $2`, [key, scope.userId])) === 1;
    },
  };
}
