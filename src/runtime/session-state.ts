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
}

const key = (sessionId: string) => `runtime:session:${sessionId}`;

export async function loadSessionState(storage: Storage, sessionId: string): Promise<SessionState | undefined> {
  const raw = await storage.meta.get(key(sessionId));
  if (raw === undefined) return undefined;
  try {
    const parsed = JSON.parse(raw) as Partial<SessionState>;
    return {
      memorySnapshot: typeof parsed.memorySnapshot === 'string' ? parsed.memorySnapshot : undefined,
      activeSkills: Array.isArray(parsed.activeSkills) ? parsed.activeSkills.filter((s): s is string => typeof s === 'string') : [],
      turnCount: Number.isInteger(parsed.turnCount) ? (parsed.turnCount as number) : 0,
      ...(typeof parsed.learningMessage === 'string' ? { learningMessage: parsed.learningMessage } : {}),
      ...(parseTurnProvenance(parsed.untrusted) ? { untrusted: parseTurnProvenance(parsed.untrusted) } : {}),
    };
  } catch {
    return undefined;
  }
}

export async function saveSessionState(storage: Storage, sessionId: string, state: SessionState): Promise<void> {
  await storage.meta.set(key(sessionId), JSON.stringify(state));
}
