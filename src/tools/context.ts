import { AsyncLocalStorage } from 'node:async_hooks';
import { MinaraError } from '../errors/minara-error';
import { generateId } from '../util/ids';
import { isPermissionTier } from '../safety/permission-tier';
import type { ToolCallContext, ToolCallContextInit } from './types';

const SOURCES = new Set(['user', 'cron', 'webhook', 'workflow', 'subagent']);

/**
 * Make a fresh per-turn {@link ToolCallContext}. One per turn; never share one between turns.
 *
 * @example
 * ```ts
 * const ctx = createToolCallContext({ sessionId: 's1', source: 'cron', allowedToolSets: ['read', 'memory', 'web'] });
 * await registry.runInContext(ctx, () => registry.dispatch('get_price', { symbol: 'BTC' }));
 * ```
 */
export function createToolCallContext(init: ToolCallContextInit): ToolCallContext {
  if (typeof init?.sessionId !== 'string' || init.sessionId.trim() === '') {
    throw new MinaraError('INVALID_ARGUMENT', 'createToolCallContext: "sessionId" must be a non-empty string.');
  }
  const source = init.source ?? 'user';
  if (!SOURCES.has(source)) {
    throw new MinaraError('INVALID_ARGUMENT', `createToolCallContext: "source" must be one of ${[...SOURCES].join(', ')}; got ${JSON.stringify(source)}.`);
  }
  if (init.riskCeiling !== undefined && !isPermissionTier(init.riskCeiling)) {
    throw new MinaraError('INVALID_ARGUMENT', 'createToolCallContext: "riskCeiling" must be a PermissionTier (1–4).');
  }
  return {
    sessionId: init.sessionId,
    source,
    traceId: init.traceId ?? generateId('trc'),
    turnId: init.turnId,
    userId: init.userId,
    agentId: init.agentId,
    allowedToolSets: init.allowedToolSets ? Object.freeze([...init.allowedToolSets]) : undefined,
    riskCeiling: init.riskCeiling,
    operatorAuthored: init.operatorAuthored,
    usedTools: new Set(),
    blockedCalls: new Map(),
    state: new Map(),
  };
}

/** The AsyncLocalStorage that carries the ambient context; one per registry. */
export function createContextCarrier(): {
  run<T>(ctx: ToolCallContext, fn: () => T): T;
  current(): ToolCallContext | undefined;
} {
  const als = new AsyncLocalStorage<ToolCallContext>();
  return { run: (ctx, fn) => als.run(ctx, fn), current: () => als.getStore() };
}
