import type { ConversationStorage, NewMessage, SessionRecord, StoredMessage } from '../types';
import { checkId, checkLimit, checkMessages, invalidArgument, notFound } from './checks';
import type { SqliteHandle } from './handle';
import { jsonOrNull, nul, opt } from './rows';

interface SessionRow {
  id: string;
  user_id: string | null;
  title: string | null;
  created_at: string;
  updated_at: string;
  metadata_json: string | null;
}

interface MessageRow {
  session_id: string;
  seq: number;
  role: StoredMessage['role'];
  json: string;
  turn_id: string | null;
  created_at: string;
}

const SELECT_SESSION = 'SELECT * FROM sessions WHERE id = ?';
const INSERT_MESSAGE = 'INSERT INTO messages (session_id, seq, role, json, turn_id, created_at) VALUES (?, ?, ?, ?, ?, ?)';
const NO_SESSION_HINT = '; call conversations.ensureSession first';

function toSession(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    ...opt('userId', r.user_id),
    ...opt('title', r.title),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...opt('metadata', r.metadata_json === null ? null : (JSON.parse(r.metadata_json) as Record<string, unknown>)),
  };
}

function toMessage(r: MessageRow): StoredMessage {
  return { sessionId: r.session_id, seq: r.seq, role: r.role, json: r.json, ...opt('turnId', r.turn_id), createdAt: r.created_at };
}

/** The `conversations` domain on SQLite: sessions plus messages with a contiguous per-session `seq`. */
export function createSqliteConversationStorage(handle: SqliteHandle, now: () => Date): ConversationStorage {
  /** Inside a write: insert `messages` after `base`, bump the session, return the stored rows. */
  const insertAfter = (sessionId: string, base: number, messages: readonly NewMessage[]): StoredMessage[] => {
    const insert = handle.prepare(INSERT_MESSAGE);
    const stored = messages.map((m, i): StoredMessage => {
      const seq = base + i + 1;
      insert.run(sessionId, seq, m.role, m.json, nul(m.turnId), m.createdAt);
      return { sessionId, seq, role: m.role, json: m.json, ...opt('turnId', m.turnId), createdAt: m.createdAt };
    });
    handle.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?').run(now().toISOString(), sessionId);
    return stored;
  };

  const requireSession = (operation: string, sessionId: string): void => {
    if (handle.prepare('SELECT 1 FROM sessions WHERE id = ?').get(sessionId) === undefined) {
      throw notFound(operation, 'session', sessionId, NO_SESSION_HINT);
    }
  };

  return {
    async ensureSession(session) {
      if (typeof session !== 'object' || session === null) throw invalidArgument('conversations.ensureSession', 'session must be an object');
      checkId('conversations.ensureSession', 'session.id', session.id);
      checkId('conversations.ensureSession', 'session.now', session.now);
      const row = handle.write('conversations.ensureSession', () => {
        handle
          .prepare('INSERT OR IGNORE INTO sessions (id, user_id, title, created_at, updated_at, metadata_json) VALUES (?, ?, ?, ?, ?, ?)')
          .run(session.id, nul(session.userId), nul(session.title), session.now, session.now, jsonOrNull(session.metadata));
        return handle.prepare(SELECT_SESSION).get(session.id) as SessionRow;
      });
      return toSession(row);
    },

    async getSession(id) {
      checkId('conversations.getSession', 'id', id);
      const row = handle.read('conversations.getSession', () => handle.prepare(SELECT_SESSION).get(id) as SessionRow | undefined);
      return row === undefined ? undefined : toSession(row);
    },

    async listSessions(query = {}) {
      const limit = checkLimit('conversations.listSessions', query.limit, 100);
      const rows = handle.read('conversations.listSessions', () =>
        query.userId === undefined
          ? (handle.prepare('SELECT * FROM sessions ORDER BY updated_at DESC, rowid DESC LIMIT ?').all(limit) as SessionRow[])
          : (handle.prepare('SELECT * FROM sessions WHERE user_id = ? ORDER BY updated_at DESC, rowid DESC LIMIT ?').all(query.userId, limit) as SessionRow[]),
      );
      return rows.map(toSession);
    },

    async appendMessages(sessionId, messages) {
      const op = 'conversations.appendMessages';
      checkId(op, 'sessionId', sessionId);
      checkMessages(op, messages);
      // The write lock (BEGIN IMMEDIATE) makes MAX(seq) + 1 safe against a second process appending at once.
      return handle.write(op, () => {
        requireSession(op, sessionId);
        if (messages.length === 0) return [];
        const { last } = handle.prepare('SELECT COALESCE(MAX(seq), 0) AS last FROM messages WHERE session_id = ?').get(sessionId) as { last: number };
        return insertAfter(sessionId, last, messages);
      });
    },

    async listMessages(sessionId, query = {}) {
      const op = 'conversations.listMessages';
      checkId(op, 'sessionId', sessionId);
      const limit = checkLimit(op, query.limit);
      const afterSeq = query.afterSeq ?? 0;
      if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw invalidArgument(op, `afterSeq must be a non-negative integer, got ${String(query.afterSeq)}`);
      const rows = handle.read(op, () =>
        limit === undefined
          ? (handle.prepare('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq').all(sessionId, afterSeq) as MessageRow[])
          : (handle.prepare('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(sessionId, afterSeq, limit) as MessageRow[]),
      );
      return rows.map(toMessage);
    },

    async replaceMessages(sessionId, messages) {
      const op = 'conversations.replaceMessages';
      checkId(op, 'sessionId', sessionId);
      checkMessages(op, messages);
      return handle.write(op, () => {
        requireSession(op, sessionId);
        handle.prepare('DELETE FROM messages WHERE session_id = ?').run(sessionId);
        return insertAfter(sessionId, 0, messages);
      });
    },

    async deleteSession(id) {
      checkId('conversations.deleteSession', 'id', id);
      const result = handle.write('conversations.deleteSession', () => handle.prepare('DELETE FROM sessions WHERE id = ?').run(id));
      return result.changes === 1;
    },
  };
}
