import type { ArtifactRecord, ArtifactStorage, FileStorage, StoredFileRecord } from '../artifact-types';
import { checkArtifactQuery, checkFileRecord, checkNewArtifact, checkScope } from '../artifact-checks';
import { checkId, checkLimit, duplicateId } from './checks';
import type { SqliteHandle, SqliteMigration } from './handle';

/**
 * Migrations of the `artifacts` domain. Append new versions; never edit one that has shipped.
 *
 * v1 — `chat_artifacts` (charts, reports, spreadsheets: one row shape) and `stored_files` (upload metadata;
 * the bytes stay on disk), both keyed by id and scoped by `user_id`.
 */
export const artifactMigrations: readonly SqliteMigration[] = [
  {
    domain: 'artifacts',
    version: 1,
    name: 'chat artifacts and stored file metadata',
    up(db) {
      db.exec(`
        CREATE TABLE chat_artifacts (
          id          TEXT PRIMARY KEY,
          user_id     TEXT NOT NULL,
          kind        TEXT NOT NULL,
          status      TEXT NOT NULL,
          title       TEXT,
          session_id  TEXT,
          turn_id     TEXT,
          data_json   TEXT,
          error       TEXT,
          created_at  TEXT NOT NULL,
          updated_at  TEXT NOT NULL
        ) STRICT;
        CREATE INDEX chat_artifacts_user_created ON chat_artifacts (user_id, created_at);
        CREATE INDEX chat_artifacts_session ON chat_artifacts (session_id);

        CREATE TABLE stored_files (
          key           TEXT PRIMARY KEY,
          user_id       TEXT NOT NULL,
          media_type    TEXT NOT NULL,
          declared_type TEXT,
          filename      TEXT,
          size_bytes    INTEGER NOT NULL,
          sha256        TEXT NOT NULL,
          location      TEXT NOT NULL,
          session_id    TEXT,
          created_at    TEXT NOT NULL
        ) STRICT;
        CREATE INDEX stored_files_user_created ON stored_files (user_id, created_at);
      `);
    },
  },
];

interface ArtifactRow {
  id: string; user_id: string; kind: string; status: string; title: string | null; session_id: string | null; turn_id: string | null;
  data_json: string | null; error: string | null; created_at: string; updated_at: string;
}

function toArtifact(r: ArtifactRow): ArtifactRecord {
  return {
    id: r.id, userId: r.user_id, kind: r.kind as ArtifactRecord['kind'], status: r.status as ArtifactRecord['status'],
    ...(r.title !== null ? { title: r.title } : {}), ...(r.session_id !== null ? { sessionId: r.session_id } : {}), ...(r.turn_id !== null ? { turnId: r.turn_id } : {}),
    ...(r.data_json !== null ? { dataJson: r.data_json } : {}), ...(r.error !== null ? { error: r.error } : {}),
    createdAt: r.created_at, updatedAt: r.updated_at,
  };
}

interface FileRow {
  key: string; user_id: string; media_type: string; declared_type: string | null; filename: string | null; size_bytes: number; sha256: string;
  location: string; session_id: string | null; created_at: string;
}

function toFile(r: FileRow): StoredFileRecord {
  return {
    key: r.key, userId: r.user_id, mediaType: r.media_type, ...(r.declared_type !== null ? { declaredType: r.declared_type } : {}),
    ...(r.filename !== null ? { filename: r.filename } : {}), sizeBytes: r.size_bytes, sha256: r.sha256, location: r.location,
    ...(r.session_id !== null ? { sessionId: r.session_id } : {}), createdAt: r.created_at,
  };
}

/** The `artifacts` domain on SQLite. */
export function createSqliteArtifactStorage(handle: SqliteHandle): ArtifactStorage {
  const getRow = (userId: string, id: string) => handle.prepare('SELECT * FROM chat_artifacts WHERE id = ? AND user_id = ?').get(id, userId) as ArtifactRow | undefined;
  const transition = (op: string, scope: { userId: string }, id: string, set: string, value: string, at: string, status: string) => {
    checkScope(op, scope);
    checkId(op, 'id', id);
    checkId(op, 'at', at);
    return handle.write(op, () => {
      const changed = handle.prepare(`UPDATE chat_artifacts SET status = ?, ${set} = ?, updated_at = ? WHERE id = ? AND user_id = ? AND status = 'running'`).run(status, value, at, id, scope.userId).changes;
      if (changed === 0) return undefined;
      const row = getRow(scope.userId, id);
      return row ? toArtifact(row) : undefined;
    });
  };
  return {
    async insert(scope, a) {
      checkScope('artifacts.insert', scope);
      checkNewArtifact('artifacts.insert', a);
      return handle.write('artifacts.insert', () => {
        const exists = handle.prepare('SELECT 1 FROM chat_artifacts WHERE id = ?').get(a.id);
        if (exists !== undefined) throw duplicateId('artifacts.insert', 'an artifact', a.id);
        handle
          .prepare("INSERT INTO chat_artifacts (id, user_id, kind, status, title, session_id, turn_id, created_at, updated_at) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?)")
          .run(a.id, scope.userId, a.kind, a.title ?? null, a.sessionId ?? null, a.turnId ?? null, a.createdAt, a.createdAt);
        return toArtifact(getRow(scope.userId, a.id)!);
      });
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
      const row = handle.read('artifacts.get', () => getRow(scope.userId, id));
      return row ? toArtifact(row) : undefined;
    },
    async list(scope, query = {}) {
      checkScope('artifacts.list', scope);
      const limit = checkArtifactQuery('artifacts.list', query);
      const where = ['user_id = ?'];
      const args: unknown[] = [scope.userId];
      if (query.sessionId !== undefined) {
        where.push('session_id = ?');
        args.push(query.sessionId);
      }
      if (query.kind !== undefined) {
        where.push('kind = ?');
        args.push(query.kind);
      }
      const rows = handle.read('artifacts.list', () =>
        handle.prepare(`SELECT * FROM chat_artifacts WHERE ${where.join(' AND ')} ORDER BY created_at DESC, rowid DESC LIMIT ?`).all(...args, limit),
      ) as ArtifactRow[];
      return rows.map(toArtifact);
    },
  };
}

/** The `files` metadata domain on SQLite. */
export function createSqliteFileStorage(handle: SqliteHandle): FileStorage {
  return {
    async put(scope, r) {
      checkScope('files.put', scope);
      checkFileRecord('files.put', r);
      return handle.write('files.put', () => {
        if (handle.prepare('SELECT 1 FROM stored_files WHERE key = ?').get(r.key) !== undefined) throw duplicateId('files.put', 'a file', r.key);
        handle
          .prepare('INSERT INTO stored_files (key, user_id, media_type, declared_type, filename, size_bytes, sha256, location, session_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
          .run(r.key, scope.userId, r.mediaType, r.declaredType ?? null, r.filename ?? null, r.sizeBytes, r.sha256, r.location, r.sessionId ?? null, r.createdAt);
        return toFile(handle.prepare('SELECT * FROM stored_files WHERE key = ?').get(r.key) as FileRow);
      });
    },
    async get(scope, key) {
      checkScope('files.get', scope);
      checkId('files.get', 'key', key);
      const row = handle.read('files.get', () => handle.prepare('SELECT * FROM stored_files WHERE key = ? AND user_id = ?').get(key, scope.userId)) as FileRow | undefined;
      return row ? toFile(row) : undefined;
    },
    async list(scope, query = {}) {
      checkScope('files.list', scope);
      const limit = checkLimit('files.list', query.limit, 50);
      const rows = handle.read('files.list', () =>
        handle.prepare('SELECT * FROM stored_files WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?').all(scope.userId, limit),
      ) as FileRow[];
      return rows.map(toFile);
    },
    async delete(scope, key) {
      checkScope('files.delete', scope);
      checkId('files.delete', 'key', key);
      return handle.write('files.delete', () => handle.prepare('DELETE FROM stored_files WHERE key = ? AND user_id = ?').run(key, scope.userId).changes === 1);
    },
  };
}
