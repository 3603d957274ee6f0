import type { ModelMessage } from 'ai';
import { toNewMessages } from '../conversation';
import type { TurnState } from './state';
import type { TurnDeps } from './types';

/**
 * Stage 5, append the user message: stored, then added to the history. Attachments become reference parts
 * (`minara-file:<key>`): the bytes never enter the sessions table. A run without a message appends nothing.
 */
export async function appendUserMessage(deps: TurnDeps, turn: TurnState): Promise<void> {
  const { options, now } = deps;
  const { input, ctx, turnId } = turn;
  const userMessage: ModelMessage | undefined = input.message === undefined
    ? undefined
    : input.attachments && input.attachments.length > 0 && options.messageTranslator
      ? await options.messageTranslator.toStoredUserMessage({ text: input.message, attachments: input.attachments, userId: turn.scope.userId })
      : { role: 'user', content: input.message };
  if (userMessage) {
    await options.storage.conversations.appendMessages(ctx.sessionId, toNewMessages([userMessage], turnId, now()));
    turn.history = [...turn.history, userMessage];
  }
}
