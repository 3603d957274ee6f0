import { readTogether } from '../storage/read-together';
import type { Storage } from '../storage/types';
import { parseTurnProvenance, type TurnProvenance } from '../safety/untrusted';

/** What the runtime keeps per session between turns (and across processes), in storage metadata. */
export interface SessionState {
  /** The frozen `<memory-context>` block, loaded once when the session starts. */
  readonly memorySnapshot?: string | undefined;
  /** Active skill ids after the last turn. */
  readonly activeSkills: readonly string[];
  /** Completed turns. */
  readonly turnCount: number;
  /**
   * The last user message (at most 2,000 characters): a run that only carries approval decisions gets the
   * learning context of the turn that proposed the calls.
   */
  readonly learningMessage?: string | undefined;
  /**
   * The untrusted sources read in this session so far (and their instruction-like passages): a later turn starts
   * labelled with them, so the label survives compaction and the approval-only run that follows.
   */
  readonly untrusted?: TurnProvenance | undefined;
  /** The snapshot is stored under its own key ({@link saveSessionMemory}), not inline in the state row. */
  readonly memoryStored?: boolean | undefined;
}

const key = (sessionId: string) => `runtime:session:${sessionId}`;
/** The frozen memory snapshot, written once when the session starts: the per-turn state row stays small. */
const memoryKey = (sessionId: string) => `runtime:session-memory:${sessionId}`;

/** The stored state row: the snapshot inline (rows written before it moved to its own key) or `memory: 'own-key'`. */
type StoredState = Partial<SessionState> & { memory?: 'own-key' };

/**
 * The session's state, or undefined for a session with none yet. The state row and the snapshot's own key are read
 * together (one look at the database where the storage batches reads, see {@link readTogether}).
 */
export async function loadSessionState(storage: Storage, sessionId: string): Promise<SessionState | undefined> {
  const [row, ownKey] = readTogether<[string | undefined, string | undefined]>(storage, [() => storage.meta.get(key(sessionId)), () => storage.meta.get(memoryKey(sessionId))]);
  ownKey.catch(() => undefined); // awaited below only when the row points at it
  const raw = await row;
  if (raw === undefined) return undefined;
  let parsed: StoredState;
  try {
    parsed = JSON.parse(raw) as StoredState;
  } catch {
    return undefined;
  }
  const memorySnapshot = typeof parsed.memorySnapshot === 'string' ? parsed.memorySnapshot : parsed.memory === 'own-key' ? await ownKey : undefined;
  return {
    memorySnapshot,
    activeSkills: Array.isArray(parsed.activeSkills) ? parsed.activeSkills.filter((s): s is string => typeof s === 'string') : [],
    turnCount: Number.isInteger(parsed.turnCount) ? (parsed.turnCount as number) : 0,
    ...(typeof parsed.learningMessage === 'string' ? { learningMessage: parsed.learningMessage } : {}),
    ...(parsed.memory === 'own-key' ? { memoryStored: true } : {}),
    ...(parseTurnProvenance(parsed.untrusted) ? { untrusted: parseTurnProvenance(parsed.untrusted) } : {}),
  };
}

/**
 * Store the frozen memory snapshot of a session under its own key, once (it never changes within the session):
 * each turn's state row then carries a marker instead of rewriting the snapshot (kilobytes per turn).
 */
export async function saveSessionMemory(storage: Storage, sessionId: string, snapshot: string): Promise<void> {
  await storage.meta.set(memoryKey(sessionId), snapshot);
}

/**
 * Save the per-turn state. With `memoryStored` (the snapshot is under its own key, see {@link saveSessionMemory})
 * the row only marks it; otherwise a snapshot is kept inline, as rows written before the split were.
 */
export async function saveSessionState(storage: Storage, sessionId: string, state: SessionState): Promise<void> {
  const { memorySnapshot, memoryStored, ...rest } = state;
  const row: StoredState = memorySnapshot === undefined ? rest : memoryStored === true ? { ...rest, memory: 'own-key' } : { ...rest, memorySnapshot };
  await storage.meta.set(key(sessionId), JSON.stringify(row));
}
