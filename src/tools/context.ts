import { isRiskTier, permissionTierForRisk, RISK_TIERS } from '../safety/risk-tier';
import { AsyncLocalStorage } from 'node:async_hooks';
import { MinaraError } from '../errors/minara-error';
import { generateId } from '../util/ids';
import { isAutonomousSource, isPermissionTier, minTier } from '../safety/permission-tier';
import type { ToolCallContext, ToolCallContextInit, ToolOrderFacts } from './types';

const SOURCES = new Set(['user', 'cron', 'webhook', 'workflow', 'subagent', 'mcp', 'heartbeat']);

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
  if (init.riskCeiling !== undefined && !isPermissionTier(init.riskCeiling) && !isRiskTier(init.riskCeiling)) {
    throw new MinaraError('INVALID_ARGUMENT', `createToolCallContext: "riskCeiling" must be a RiskTier (${RISK_TIERS.join(', ')}) or a PermissionTier (1–4); got ${JSON.stringify(init.riskCeiling)}.`);
  }
  const riskCeiling = init.riskCeiling === undefined ? undefined : isRiskTier(init.riskCeiling) ? permissionTierForRisk(init.riskCeiling) : init.riskCeiling;
  return {
    sessionId: init.sessionId,
    source,
    traceId: init.traceId ?? generateId('trc'),
    turnId: init.turnId,
    userId: init.userId,
    agentId: init.agentId,
    allowedToolSets: init.allowedToolSets ? Object.freeze([...init.allowedToolSets]) : undefined,
    riskCeiling,
    operatorAuthored: init.operatorAuthored,
    ...(init.sideEffectFree === true ? { sideEffectFree: true } : {}),
    ...(init.lifecycleStages !== undefined ? { lifecycleStages: Object.freeze([...init.lifecycleStages]) } : {}),
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

/**
 * The context of a call made inside another call (a handler that dispatches, or code under
 * `runInContext`) that passed a context of its own: it may narrow the ambient one, never widen it. The
 * session, trace, turn, user and agent stay the caller's; an autonomous source stays autonomous (a user
 * turn may narrow to an autonomous source); allowed tool sets intersect; the lower risk ceiling wins; a
 * side-effect-free context stays side-effect free; the
 * call is operator-authored only if both say so. The turn's bookkeeping (used tools, blocked calls, state)
 * is shared, so the analysis → trade boundary sees nested calls.
 */
export function narrowContext(parent: ToolCallContext, child: ToolCallContext, expand: (names: readonly string[]) => ReadonlySet<string>): ToolCallContext {
  if (child === parent) return parent;
  const source = isAutonomousSource(parent.source) ? parent.source : child.source;
  let allowedToolSets: readonly string[] | undefined;
  if (parent.allowedToolSets === undefined) allowedToolSets = child.allowedToolSets;
  else if (child.allowedToolSets === undefined) allowedToolSets = parent.allowedToolSets;
  else {
    const childSets = expand(child.allowedToolSets);
    allowedToolSets = Object.freeze([...expand(parent.allowedToolSets)].filter((s) => childSets.has(s)).sort());
  }
  const riskCeiling = parent.riskCeiling === undefined ? child.riskCeiling : child.riskCeiling === undefined ? parent.riskCeiling : minTier(parent.riskCeiling, child.riskCeiling);
  return {
    ...parent,
    source,
    allowedToolSets,
    riskCeiling,
    operatorAuthored: parent.operatorAuthored === true && child.operatorAuthored === true,
    // Once side-effect free, every nested call stays so.
    ...(parent.sideEffectFree === true || child.sideEffectFree === true ? { sideEffectFree: true } : {}),
    // The caller's classification stands; a nested call may add one only where the caller had none.
    lifecycleStages: parent.lifecycleStages ?? child.lifecycleStages,
  };
}

/** A fund-moving call that executed and succeeded, as the registry notes it in the turn's context `state`. */
export interface ExecutedCall {
  readonly toolCallId: string;
  readonly toolName: string;
  /** The validated input. */
  readonly input: unknown;
  readonly orderFacts: ToolOrderFacts;
  /** The handler's result data (`envelope.data`). */
  readonly data: unknown;
  readonly at: string;
}

const EXECUTED_CALLS_KEY = 'minara.executedCalls';

/** Note an executed fund-moving call in the context (the registry does this on every path that runs one). */
export function noteExecutedCall(ctx: ToolCallContext, call: ExecutedCall): void {
  const list = ctx.state.get(EXECUTED_CALLS_KEY) as ExecutedCall[] | undefined;
  if (list) list.push(call);
  else ctx.state.set(EXECUTED_CALLS_KEY, [call]);
}

/** The fund-moving calls executed so far in this context's turn, in order (decision capture reads these). */
export function executedCalls(ctx: ToolCallContext): readonly ExecutedCall[] {
  return (ctx.state.get(EXECUTED_CALLS_KEY) as ExecutedCall[] | undefined) ?? [];
}
