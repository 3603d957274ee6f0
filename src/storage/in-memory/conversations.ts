import type { ConversationStorage, NewMessage, SessionRecord, StoredMessage } from '../types';
import { checkId, checkLimit, checkMessages, invalidArgument, notFound } from '../sqlite/checks';
import { compact, jsonCopy } from './copy';

const NO_SESSION_HINT = '; call conversations.ensureSession first';

/** The `conversations` domain in memory: sessions plus per-session message arrays (`seq` = index + 1). */
export function createInMemoryConversationStorage(now: () => Date): ConversationStorage {
  /** id → session; Map order is creation order, the tie-breaker for equal `updatedAt`. */
  const sessions = new Map<string, SessionRecord>();
  const messages = new Map<string, StoredMessage[]>();

  const store = (sessionId: string, base: number, list: readonly NewMessage[]): StoredMessage[] =>
    list.map((m, i) => compact({ sessionId, seq: base + i + 1, role: m.role, json: m.json, turnId: m.turnId, createdAt: m.createdAt }));

  const touch = (sessionId: string): void => {
    const session = sessions.get(sessionId);
    if (session !== undefined) sessions.set(sessionId, { ...session, updatedAt: now().toISOString() });
  };

  return {
    async ensureSession(session) {
      if (typeof session !== 'object' || session === null) throw invalidArgument('conversations.ensureSession', 'session must be an object');
      checkId('conversations.ensureSession', 'session.id', session.id);
      checkId('conversations.ensureSession', 'session.now', session.now);
      let row = sessions.get(session.id);
      if (row === undefined) {
        row = jsonCopy(
          compact({ id: session.id, userId: session.userId, title: session.title, createdAt: session.now, updatedAt: session.now, metadata: session.metadata }),
        );
        sessions.set(session.id, row);
        messages.set(session.id, []);
      }
      return jsonCopy(row);
    },

    async getSession(id) {
      checkId('conversations.getSession', 'id', id);
      const row = sessions.get(id);
      return row === undefined ? undefined : jsonCopy(row);
    },

    async listSessions(query = {}) {
      const limit = checkLimit('conversations.listSessions', query.limit, 100);
      return [...sessions.values()]
        .map((row, order) => ({ row, order }))
        .filter(({ row }) => query.userId === undefined || row.userId === query.userId)
        .sort((a, b) => (a.row.updatedAt < b.row.updatedAt ? 1 : a.row.updatedAt > b.row.updatedAt ? -1 : b.order - a.order))
        .slice(0, limit)
        .map(({ row }) => jsonCopy(row));
    },

    async appendMessages(sessionId, list) {
      const op = 'conversations.appendMessages';
      checkId(op, 'sessionId', sessionId);
      checkMessages(op, list);
      const existing = messages.get(sessionId);
      if (existing === undefined) throw notFound(op, 'session', sessionId, NO_SESSION_HINT);
      if (list.length === 0) return [];
      const stored = store(sessionId, existing.length, list);
      existing.push(...stored);
      touch(sessionId);
      return stored.map((m) => ({ ...m }));
    },

    async listMessages(sessionId, query = {}) {
      const op = 'conversations.listMessages';
      checkId(op, 'sessionId', sessionId);
      const limit = checkLimit(op, query.limit);
      const afterSeq = query.afterSeq ?? 0;
      if (!Number.isSafeInteger(afterSeq) || afterSeq < 0) throw invalidArgument(op, `afterSeq must be a non-negative integer, got ${String(query.afterSeq)}`);
      const rows = (messages.get(sessionId) ?? []).slice(afterSeq);
      return (limit === undefined ? rows : rows.slice(0, limit)).map((m) => ({ ...m }));
    },

    async replaceMessages(sessionId, list) {
      const op = 'conversations.replaceMessages';
      checkId(op, 'sessionId', sessionId);
      checkMessages(op, list);
      if (!messages.has(sessionId)) throw notFound(op, 'session', sessionId, NO_SESSION_HINT);
      const stored = store(sessionId, 0, list);
      messages.set(sessionId, stored);
      touch(sessionId);
      return stored.map((m) => ({ ...m }));
    },

    async deleteSession(id) {
      checkId('conversations.deleteSession', 'id', id);
      messages.delete(id);
      return sessions.delete(id);
    },
  };
}
