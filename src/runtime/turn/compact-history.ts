import { type CompactionOptions, compactMessages } from '../compaction';
import { toNewMessages } from '../conversation';
import type { TurnState } from './state';
import type { Emit, TurnDeps } from './types';

/** The compaction options of one turn: the runtime's, with the summariser, memory re-injection and the query. */
export type TurnCompaction = CompactionOptions & { query: string; signal?: AbortSignal };

/**
 * Stage 6, compact: the compaction ladder runs before a model call is spent; a changed history is stored and
 * announced. Returns the turn's compaction options for the overflow retry ({@link compactOnOverflow}).
 */
export async function compactHistory(deps: TurnDeps, turn: TurnState, emit: Emit): Promise<TurnCompaction> {
  const { options, now } = deps;
  const { input, ctx, turnId } = turn;
  const memory = deps.memoryFor(turn.scope);
  const compactionBase: TurnCompaction = {
    ...options.compaction,
    ...(options.utilityModel ? { summarizer: options.utilityModel } : {}),
    ...(memory ? { reinject: async (q: string, n: number) => (await memory.search(q, { limit: n })).map((h) => `[${h.category}] ${h.content}`) } : {}),
    query: input.message ?? '',
    ...(input.abortSignal ? { signal: input.abortSignal } : {}),
  };
  const compacted = await compactMessages(turn.history, compactionBase);
  if (compacted.changed) {
    turn.history = compacted.messages;
    await options.storage.conversations.replaceMessages(ctx.sessionId, toNewMessages(turn.history, turnId, now()));
    emit({ type: 'compaction', beforeTokens: compacted.beforeTokens, afterTokens: compacted.afterTokens, steps: compacted.steps });
  }
  return compactionBase;
}

/**
 * A step overflowed the context window: keep what the finished steps produced, compact harder (forced, four
 * recent messages kept), store the result and start the next attempt from it.
 */
export async function compactOnOverflow(deps: TurnDeps, turn: TurnState, compaction: TurnCompaction, emit: Emit): Promise<void> {
  const { options, now } = deps;
  const forced = await compactMessages([...turn.history, ...turn.responseMessages], { ...compaction, force: true, keepRecentMessages: 4 });
  emit({ type: 'compaction', beforeTokens: forced.beforeTokens, afterTokens: forced.afterTokens, steps: [...forced.steps, 'overflow-retry'] });
  turn.history = forced.messages;
  turn.responseMessages = [];
  await options.storage.conversations.replaceMessages(turn.ctx.sessionId, toNewMessages(turn.history, turn.turnId, now()));
}
