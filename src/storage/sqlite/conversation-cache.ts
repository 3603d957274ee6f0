/**
 * The conversations domain's reads on SQLite, answered from caches validated by `data_version` when the engine
 * tracks commits (see read-cache.ts): session rows (and their absence), each session's last message seq (an append
 * then needs no `MAX(seq)`), and each session's transcript (a turn loads it whole). This connection's own writes
 * update them once their transaction commits.
 */
import type { StoredMessage } from '../types';
import type { SqliteHandle } from './handle';
import { type CommitTracker, createReadCache } from './read-cache';

export interface SessionRow {
  id: string;
  user_id: string | null;
  title: string | null;
  created_at: string;
  updated_at: string;
  metadata_json: string | null;
}

export interface MessageRow {
  session_id: string;
  seq: number;
  role: StoredMessage['role'];
  json: string;
  turn_id: string | null;
  created_at: string;
}

/** Sessions whose row and last seq the caches keep; rows and transcripts are weighed by their size in characters. */
const SESSION_CACHE_ENTRIES = 1024;
const SESSION_CACHE_CHARS = 4 * 1024 * 1024;
const SEQ_CACHE_ENTRIES = 4096;
const TRANSCRIPT_CACHE_SESSIONS = 256;
const TRANSCRIPT_CACHE_CHARS = 16 * 1024 * 1024;

const SELECT_SESSION = 'SELECT * FROM sessions WHERE id = ?';

/** What changed in a session, for the caches (inside the write that changed it). */
export interface SessionChange {
  /** The session row after the write; undefined: the session does not exist. */
  readonly row: SessionRow | undefined;
  /** The last seq after the write; undefined: not known (the entry is dropped). */
  readonly last?: number | undefined;
  /** Rows appended after the transcript as it was. */
  readonly appended?: readonly MessageRow[] | undefined;
  /** The whole transcript after the write. */
  readonly transcript?: readonly MessageRow[] | undefined;
}

/** The session reads the conversations domain makes. */
export interface ConversationReads {
  /** The session row, or undefined when there is none. */
  session(id: string): SessionRow | undefined;
  /** The last message seq of a session; call inside the write that appends (the write lock holds it still). */
  lastSeq(id: string): number;
  /** The messages after `afterSeq`, in order, at most `limit`. */
  messages(id: string, afterSeq: number, limit: number | undefined): readonly MessageRow[];
  /** Inside a write: how the session stands once it commits. */
  wrote(id: string, change: SessionChange): void;
}

/** The conversation reads, cached through `reads` (the engine's commit tracker). */
export function conversationReads(handle: SqliteHandle, reads: CommitTracker): ConversationReads {
  const loadSession = (id: string) => handle.prepare(SELECT_SESSION).get(id) as SessionRow | undefined;
  const loadLast = (id: string) => (handle.prepare('SELECT COALESCE(MAX(seq), 0) AS last FROM messages WHERE session_id = ?').get(id) as { last: number }).last;
  const loadMessages = (id: string, afterSeq: number, limit: number | undefined): MessageRow[] =>
    limit === undefined
      ? (handle.prepare('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq').all(id, afterSeq) as MessageRow[])
      : (handle.prepare('SELECT * FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?').all(id, afterSeq, limit) as MessageRow[]);
  const sessions = createReadCache<SessionRow | undefined>(reads, {
    maxEntries: SESSION_CACHE_ENTRIES,
    maxWeight: SESSION_CACHE_CHARS,
    weigh: (r) => 128 + (r === undefined ? 0 : r.id.length + (r.title?.length ?? 0) + (r.metadata_json?.length ?? 0)),
  });
  const lastSeqs = createReadCache<number>(reads, { maxEntries: SEQ_CACHE_ENTRIES });
  const transcripts = createReadCache<readonly MessageRow[]>(reads, {
    maxEntries: TRANSCRIPT_CACHE_SESSIONS,
    maxWeight: TRANSCRIPT_CACHE_CHARS,
    weigh: (rows) => rows.reduce((n, r) => n + 96 + r.json.length, 64),
  });

  return {
    session: (id) => sessions.get(id, () => loadSession(id)),
    lastSeq(id) {
      const last = lastSeqs.peek(id);
      if (last !== undefined) return last.value;
      const transcript = transcripts.peek(id);
      return transcript === undefined ? loadLast(id) : (transcript.value.at(-1)?.seq ?? 0);
    },
    messages(id, afterSeq, limit) {
      // The whole transcript (what a turn loads) is cached; a page is cut from it when it is cached.
      if (afterSeq === 0 && limit === undefined) return transcripts.get(id, () => loadMessages(id, 0, undefined));
      const all = transcripts.peek(id)?.value;
      if (all === undefined) return loadMessages(id, afterSeq, limit);
      const from = all.findIndex((r) => r.seq > afterSeq);
      if (from < 0) return [];
      return limit === undefined ? all.slice(from) : all.slice(from, from + limit);
    },
    wrote(id, change) {
      const version = reads.version();
      sessions.wrote(id, { value: change.row, version });
      lastSeqs.wrote(id, change.last === undefined ? undefined : { value: change.last, version });
      const before = change.appended === undefined ? undefined : transcripts.peek(id)?.value;
      const after = change.transcript ?? (before === undefined || change.appended === undefined ? undefined : [...before, ...change.appended]);
      transcripts.wrote(id, after === undefined ? undefined : { value: after, version });
    },
  };
}
