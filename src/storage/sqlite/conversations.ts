import type { ConversationStorage, NewMessage, SessionRecord, StoredMessage } from '../types';
import { checkId, checkLimit, checkMessages, invalidArgument, notFound } from './checks';
import type { SqliteHandle } from './handle';
import { conversationReads, type MessageRow, type SessionRow } from './conversation-cache';
import type { CommitTracker } from './read-cache';
import { jsonOrNull, nul, opt } from './rows';

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

/**
 * The `conversations` domain on SQLite: sessions plus messages with a contiguous per-session `seq`. Session rows, each session's last seq and transcript come from caches validated by `data_version` (see
 * conversation-cache.ts): an append takes its seq from memory instead of `MAX(seq)` while no other connection
 * committed, and the caches take this connection's writes once their transaction commits.
 */
export function createSqliteConversationStorage(handle: SqliteHandle, now: () => Date, reads: CommitTracker): ConversationStorage {
  const cached = conversationReads(handle, reads);
  /** Inside a write: insert `messages` after `base`, bump the session, tell the caches; return the stored messages. */
  const insertAfter = (row: SessionRow, base: number, messages: readonly NewMessage[], replace: boolean): StoredMessage[] => {
    const insert = handle.prepare(INSERT_MESSAGE);
    const rows = messages.map((m, i): MessageRow => {
      const r: MessageRow = { session_id: row.id, seq: base + i + 1, role: m.role, json: m.json, turn_id: nul(m.turnId), created_at: m.createdAt };
      insert.run(r.session_id, r.seq, r.role, r.json, r.turn_id, r.created_at);
      return r;
    });
    const updatedAt = now().toISOString();
    handle.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?').run(updatedAt, row.id);
    cached.wrote(row.id, { row: { ...row, updated_at: updatedAt }, last: base + messages.length, ...(replace ? { transcript: rows } : { appended: rows }) });
    return rows.map(toMessage);
  };

  const requireSession = (operation: string, sessionId: string): SessionRow => {
    const row = cached.session(sessionId);
    if (row === undefined) throw notFound(operation, 'session', sessionId, NO_SESSION_HINT);
    return row;
  };

  return {
    async ensureSession(session) {
      if (typeof session !== 'object' || session === null) throw invalidArgument('conversations.ensureSession', 'session must be an object');
      checkId('conversations.ensureSession', 'session.id', session.id);
      checkId('conversations.ensureSession', 'session.now', session.now);
      const row = handle.write('conversations.ensureSession', () => {
        const created = handle
          .prepare('INSERT OR IGNORE INTO sessions (id, user_id, title, created_at, updated_at, metadata_json) VALUES (?, ?, ?, ?, ?, ?)')
          .run(session.id, nul(session.userId), nul(session.title), session.now, session.now, jsonOrNull(session.metadata)).changes === 1;
        const stored = handle.prepare(SELECT_SESSION).get(session.id) as SessionRow;
        // A session this write created has no messages yet: its first append needs no MAX(seq).
        cached.wrote(session.id, created ? { row: stored, last: 0, transcript: [] } : { row: stored });
        return stored;
      });
      return toSession(row);
    },

    async getSession(id) {
      checkId('conversations.getSession', 'id', id);
      const row = handle.read('conversations.getSession', () => cached.session(id));
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
      // The last seq comes from memory while no other connection committed (data_version), else from MAX(seq).
      return handle.write(op, () => {
        const row = requireSession(op, sessionId);
        if (messages.length === 0) return [];
        return insertAfter(row, cached.lastSeq(sessionId), messages, false);
      });
    },

    async listMessages(sessionId, query = {}) {
      const op = 'conversations.listMessages';
      checkId(op, 'sessionId', sessionId);
      const limit = checkLimit(op, query.limit);
      const afterSeq = query.afterSeq ?? 0;
      if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw invalidArgument(op, `afterSeq must be a non-negative integer, got ${String(query.afterSeq)}`);
      const rows = handle.read(op, () => cached.messages(sessionId, afterSeq, limit));
      return rows.map(toMessage);
    },

    async replaceMessages(sessionId, messages) {
      const op = 'conversations.replaceMessages';
      checkId(op, 'sessionId', sessionId);
      checkMessages(op, messages);
      return handle.write(op, () => {
        const row = requireSession(op, sessionId);
        handle.prepare('DELETE FROM messages WHERE session_id = ?').run(sessionId);
        return insertAfter(row, 0, messages, true);
      });
    },

    async deleteSession(id) {
      checkId('conversations.deleteSession', 'id', id);
      const result = handle.write('conversations.deleteSession', () => {
        cached.wrote(id, { row: undefined });
        return handle.prepare('DELETE FROM sessions WHERE id = ?').run(id);
      });
      return result.changes === 1;
    },
  };
}
