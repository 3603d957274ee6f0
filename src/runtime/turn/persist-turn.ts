import { loadMessages, toNewMessages } from '../conversation';
import { saveSessionState } from '../session-state';
import { turnProvenance } from '../../safety/untrusted';
import { errorText } from './block-codes';
import type { TurnState } from './state';
import type { TurnDeps } from './types';

/**
 * Stage 9, persist: what the model said is stored (even after an error or abort), plus calls that returned in
 * a step cut short; then the journal is cleared, then the session state saved. Failures are logged, never
 * thrown. Returns the session's new turn count.
 */
export async function persistTurn(deps: TurnDeps, turn: TurnState): Promise<number> {
  const { options, now } = deps;
  const { ctx, input, turnId, journal, session } = turn;
  try {
    let tail = journal.missingFrom(turn.responseMessages);
    if (tail.length > 0) tail = journal.missingFrom([...(await loadMessages(options.storage, ctx.sessionId)), ...turn.responseMessages]);
    const toStore = [...turn.responseMessages, ...tail];
    if (toStore.length > 0) await options.storage.conversations.appendMessages(ctx.sessionId, toNewMessages(toStore, turnId, now()));
    await journal.clear();
  } catch (error) {
    deps.logger.error('could not persist the turn', { sessionId: ctx.sessionId, error: errorText(error) });
  }
  const turnCount = session.turnCount + 1;
  try {
    const learningMessage = input.message !== undefined ? input.message.slice(0, 2000) : session.learningMessage;
    const untrusted = turnProvenance(ctx) ?? session.untrusted;
    await saveSessionState(options.storage, ctx.sessionId, {
      ...session, activeSkills: turn.skillSession?.activeIds() ?? session.activeSkills, turnCount, ...(learningMessage !== undefined ? { learningMessage } : {}), ...(untrusted ? { untrusted } : {}),
    });
  } catch (error) {
    deps.logger.error('could not save session state', { sessionId: ctx.sessionId, error: errorText(error) });
  }
  return turnCount;
}
