import type { ConversationStorage, NewMessage, SessionRecord, StoredMessage } from '../types';
import { checkId, checkLimit, checkMessages, invalidArgument, notFound } from './checks';
import type { SqliteHandle } from './handle';
import { type CommitTracker, createReadCache, type ReadCache } from './read-cache';
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
/** Sessions whose row and last seq the caches keep; rows are weighed by their size in characters. */
const SESSION_CACHE_ENTRIES = 1024;
const SESSION_CACHE_CHARS = 4 * 1024 * 1024;
const SEQ_CACHE_ENTRIES = 4096;

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

/** The caches of the conversations domain; absent without a tracker. */
interface ConversationCaches {
  readonly reads: CommitTracker;
  /** Session rows by id (undefined: no such session). */
  readonly sessions: ReadCache<SessionRow | undefined>;
  /** The last message seq by session id. */
  readonly lastSeq: ReadCache<number>;
}

function conversationCaches(reads: CommitTracker | undefined): ConversationCaches | undefined {
  if (reads === undefined) return undefined;
  return {
    reads,
    sessions: createReadCache<SessionRow | undefined>(reads, {
      maxEntries: SESSION_CACHE_ENTRIES,
      maxWeight: SESSION_CACHE_CHARS,
      weigh: (r) => 128 + (r === undefined ? 0 : r.id.length + (r.title?.length ?? 0) + (r.metadata_json?.length ?? 0)),
    }),
    lastSeq: createReadCache<number>(reads, { maxEntries: SEQ_CACHE_ENTRIES }),
  };
}

/**
 * The `conversations` domain on SQLite: sessions plus messages with a contiguous per-session `seq`. With `reads`,
 * session rows (and their absence) and each session's last seq come from caches validated by `data_version`: an
 * append by this connection takes its seq from memory instead of `MAX(seq)` while no other connection committed,
 * and updates both caches once its transaction commits.
 */
export function createSqliteConversationStorage(handle: SqliteHandle, now: () => Date, reads?: CommitTracker): ConversationStorage {
  const caches = conversationCaches(reads);
  /** Inside a write: insert `messages` after `base`, bump the session, return the stored rows and the new `updated_at`. */
  const insertAfter = (sessionId: string, base: number, messages: readonly NewMessage[]): { stored: StoredMessage[]; updatedAt: string } => {
    const insert = handle.prepare(INSERT_MESSAGE);
    const stored = messages.map((m, i): StoredMessage => {
      const seq = base + i + 1;
      insert.run(sessionId, seq, m.role, m.json, nul(m.turnId), m.createdAt);
      return { sessionId, seq, role: m.role, json: m.json, ...opt('turnId', m.turnId), createdAt: m.createdAt };
    });
    const updatedAt = now().toISOString();
    handle.prepare('UPDATE sessions SET updated_at = ? WHERE id = ?').run(updatedAt, sessionId);
    return { stored, updatedAt };
  };

  const loadSession = (id: string): SessionRow | undefined => handle.prepare(SELECT_SESSION).get(id) as SessionRow | undefined;
  const sessionRow = (id: string): SessionRow | undefined => (caches === undefined ? loadSession(id) : caches.sessions.get(id, () => loadSession(id)));

  const requireSession = (operation: string, sessionId: string): SessionRow => {
    const row = sessionRow(sessionId);
    if (row === undefined) throw notFound(operation, 'session', sessionId, NO_SESSION_HINT);
    return row;
  };

  /** The last seq of a session, inside a write (the write lock keeps it from moving under us). */
  const lastSeq = (sessionId: string): number => {
    const cached = caches?.lastSeq.peek(sessionId);
    if (cached !== undefined) return cached.value;
    return (handle.prepare('SELECT COALESCE(MAX(seq), 0) AS last FROM messages WHERE session_id = ?').get(sessionId) as { last: number }).last;
  };

  /** Inside a write: after the commit the session row is `row` and its last seq `last` (undefined: unknown). */
  const wroteSession = (id: string, row: SessionRow | undefined, last: number | undefined): void => {
    if (caches === undefined) return;
    const version = caches.reads.version();
    caches.sessions.wrote(id, { value: row, version });
    caches.lastSeq.wrote(id, last === undefined ? undefined : { value: last, version });
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
        const stored = loadSession(session.id) as SessionRow;
        // A session this write created has no messages yet: its first append needs no MAX(seq).
        if (created) wroteSession(session.id, stored, 0);
        else caches?.sessions.wrote(session.id, { value: stored, version: caches.reads.version() });
        return stored;
      });
      return toSession(row);
    },

    async getSession(id) {
      checkId('conversations.getSession', 'id', id);
      const row = handle.read('conversations.getSession', () => sessionRow(id));
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
        const last = lastSeq(sessionId);
        const { stored, updatedAt } = insertAfter(sessionId, last, messages);
        wroteSession(sessionId, { ...row, updated_at: updatedAt }, last + messages.length);
        return stored;
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
        const row = requireSession(op, sessionId);
        handle.prepare('DELETE FROM messages WHERE session_id = ?').run(sessionId);
        const { stored, updatedAt } = insertAfter(sessionId, 0, messages);
        wroteSession(sessionId, { ...row, updated_at: updatedAt }, messages.length);
        return stored;
      });
    },

    async deleteSession(id) {
      checkId('conversations.deleteSession', 'id', id);
      const result = handle.write('conversations.deleteSession', () => {
        wroteSession(id, undefined, undefined);
        return handle.prepare('DELETE FROM sessions WHERE id = ?').run(id);
      });
      return result.changes === 1;
    },
  };
}
