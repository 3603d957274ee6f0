import type { Logger } from '../util/logger';
import { STATE_FILES } from './files';
import type { WorkspaceNotice } from './prompt-blocks';
import { atomicWriteConfined, readConfined } from './safe-fs';

/** `.soul-state.json`: the SOUL.md hash the operator was last told about. */
export interface SoulState {
  readonly sha256: string;
  readonly updated_at: string;
}

/** Detects SOUL.md edits between sessions and re-baselines after announcing one. */
export interface SoulChangeDetector {
  /**
   * Compare the current SOUL.md hash with `.soul-state.json`. The first sighting only records a baseline;
   * a changed hash yields a one-time notice and is persisted at once, so the change is announced once.
   */
  check(currentSha256: string): Promise<Extract<WorkspaceNotice, { kind: 'soul-changed' }> | undefined>;
}

/** Read `.soul-state.json`, or `undefined` when absent or unreadable. */
export async function readSoulState(root: string): Promise<SoulState | undefined> {
  try {
    const read = await readConfined(root, STATE_FILES.soulState, 64 * 1024);
    if (!read) return undefined;
    const v = JSON.parse(read.content) as Partial<SoulState>;
    return typeof v.sha256 === 'string' ? { sha256: v.sha256, updated_at: String(v.updated_at ?? '') } : undefined;
  } catch {
    return undefined;
  }
}

/** Create the SOUL.md change detector for a workspace root. */
export function createSoulChangeDetector(root: string, now: () => Date, logger: Logger): SoulChangeDetector {
  let known: string | undefined;
  const persist = (sha256: string) =>
    atomicWriteConfined(root, STATE_FILES.soulState, `${JSON.stringify({ sha256, updated_at: now().toISOString() }, null, 2)}\n`);
  return {
    async check(currentSha256) {
      if (known === currentSha256) return undefined;
      const state = await readSoulState(root);
      known = currentSha256;
      if (state?.sha256 === currentSha256) return undefined;
      await persist(currentSha256);
      if (state === undefined) return undefined;
      logger.info('soul_changed', { module: 'workspace/soul-state', previous: state.sha256, current: currentSha256 });
      return {
        kind: 'soul-changed',
        previousSha256: state.sha256,
        currentSha256,
        message:
          'SOUL.md changed since the last session. In your next reply, briefly tell the operator that your SOUL.md was edited and what that changes about how you work. Mention it only this once.',
      };
    },
  };
}
