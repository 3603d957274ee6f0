import { restoreProvenance } from '../../safety/untrusted';
import { restoreJournaledCalls } from '../call-journal';
import { loadMessages, repairOrphanedToolCalls, toNewMessages } from '../conversation';
import { takeReadAhead, type TurnState } from './state';
import type { TurnDeps } from './types';

/** What {@link loadHistory} learned about the conversation. */
export interface LoadedHistory {
  /**
   * Whether the model is asked at all: an approvals-only run on a session with no conversation has nothing to
   * ask the model; the decisions are applied and recorded, and the turn ends without a model call.
   */
  readonly askModel: boolean;
  /** Orphaned tool calls were repaired: the stored history must be rewritten. */
  readonly dirty: boolean;
}

/**
 * Stage 3, load and repair history: load the conversation, restore calls a process that died mid-turn ran
 * and journaled (before anything else reads history) with what that turn had read from outside, and repair
 * orphaned tool calls. Sets `turn.history`.
 */
export async function loadHistory(deps: TurnDeps, turn: TurnState): Promise<LoadedHistory> {
  const { options, now } = deps;
  const { ctx, turnId, input } = turn;
  const journal = takeReadAhead(turn.readAhead, 'journal');
  let history = await (takeReadAhead(turn.readAhead, 'history') ?? loadMessages(options.storage, ctx.sessionId));
  const restored = await restoreJournaledCalls(options.storage, ctx.sessionId, history, now(), journal);
  // What the dead turn had read from outside labels this turn too (and the session, when this turn ends).
  restoreProvenance(ctx, restored.provenance);
  if (restored.messages.length > 0) {
    await options.storage.conversations.appendMessages(ctx.sessionId, toNewMessages(restored.messages, turnId, now()));
    history = [...history, ...restored.messages];
    deps.logger.warn('restored tool calls a turn ran before its process died', { sessionId: ctx.sessionId, toolCallIds: restored.restored });
  }
  const askModel = history.length > 0 || input.message !== undefined;
  const repaired = repairOrphanedToolCalls(history);
  turn.history = repaired.messages;
  return { askModel, dirty: repaired.repaired.length > 0 };
}
