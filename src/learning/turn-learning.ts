import type { TurnLearning, TurnScope } from '../runtime/types';
import type { LearningStore } from './types';

/** Options of {@link createTurnLearning}. */
export interface TurnLearningOptions {
  /** The learning store of a turn's tenant (one per user and agent; cache them). Undefined skips learning for it. */
  readonly learningFor: (scope: { readonly userId: string; readonly agentId?: string | undefined }) => LearningStore | undefined;
  /** Run preference graduation before each turn. @default true */
  readonly graduatePreferences?: boolean | undefined;
}

/**
 * The learning loop as `createAgentRuntime({ learning })` takes it: before each turn, preference graduation
 * and the learned block for the dynamic tail; after it, decision capture from the `post_turn` record.
 *
 * @example
 * ```ts
 * const stores = new Map<string, LearningStore>();
 * const learning = createTurnLearning({
 *   learningFor: ({ userId }) => stores.get(userId) ?? stores.set(userId, createLearningStore({ storage, scope: { userId } })).get(userId),
 * });
 * const runtime = createAgentRuntime({ model, tools, storage, learning });
 * ```
 */
export function createTurnLearning(options: TurnLearningOptions): TurnLearning {
  const { learningFor, graduatePreferences = true } = options;
  const storeOf = (scope: Pick<TurnScope, 'userId' | 'agentId'>) => learningFor(scope.agentId ? { userId: scope.userId, agentId: scope.agentId } : { userId: scope.userId });
  return {
    async prepareTurn({ scope, message }) {
      const store = storeOf(scope);
      if (!store) return { methodologyIds: [], preferenceIds: [] };
      if (graduatePreferences) await store.graduatePreferences();
      return store.promptContext(message);
    },
    async captureTurn(record) {
      await storeOf(record)?.captureTurn(record);
    },
  };
}
