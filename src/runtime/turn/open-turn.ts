import { asksToRemember, USER_ASKED_TO_REMEMBER } from '../../memory/remember-intent';
import { MinaraError } from '../../errors/minara-error';
import { isAutonomousSource } from '../../safety/permission-tier';
import { turnProvenance } from '../../safety/untrusted';
import { inferLifecycleStages } from '../../skills/taxonomy';
import { createAuditBatch } from '../../tools/audit-batch';
import { createToolCallContext } from '../../tools/context';
import type { TurnStage } from '../../tools/types';
import { createCallJournal } from '../call-journal';
import { type AgentEvent, addUsage, TURN_EMIT_KEY, ZERO_USAGE } from '../events';
import type { ResolvedRuntimeOptions, RunInput } from '../types';
import type { TurnState } from './state';
import type { Emit, TurnDeps } from './types';

/**
 * Refuse a run on a session that another user created (`SESSION_FORBIDDEN`). A session with no recorded
 * owner (created before owners were kept) is left as it is. Returns whether the session exists (the turn's
 * prepare stage then need not read it again).
 */
export async function assertSessionOwner(storage: ResolvedRuntimeOptions['storage'], sessionId: string, userId: string): Promise<boolean> {
  const session = await storage.conversations.getSession(sessionId);
  if (session?.userId !== undefined && session.userId !== userId) {
    throw new MinaraError('SESSION_FORBIDDEN', `Session "${sessionId}" belongs to another user; nothing was run.`);
  }
  return Boolean(session);
}

/**
 * The lifecycle stages of an autonomous turn, carried into its call context for the gate: the signal's
 * `suggested_stages` when it gives any (the schedule or webhook says what the run is for), else the stages the
 * message triggers (the router's classifier).
 */
export function turnStages(input: RunInput): readonly TurnStage[] {
  const suggested = input.signal?.suggested_stages;
  if (suggested !== undefined && suggested.length > 0) return [...suggested];
  return inferLifecycleStages(input.message ?? '');
}

/**
 * Stage 1, own the session: check the session's owner, lower the limits, run the `onTurnStart` hooks, build
 * the call context, announce `turn-start`, and return the turn's state. Throws only `SESSION_FORBIDDEN`.
 */
export async function openTurn(deps: TurnDeps, input: RunInput, turnId: string, emit: Emit): Promise<TurnState> {
  const { options, now } = deps;
  const source = input.source ?? 'user';
  // A session belongs to the user who created it: nothing runs on another user's session (not even approvals).
  const sessionExists = await assertSessionOwner(options.storage, input.sessionId, input.userId ?? deps.defaultUserId);
  // A run may only lower the runtime's limits (a delegated child gets its own, smaller budget).
  const maxSteps = Math.min(deps.maxSteps, input.maxSteps ?? Number.POSITIVE_INFINITY);
  const turnTokenBudget = Math.min(deps.turnTokenBudget, input.turnTokenBudget ?? Number.POSITIVE_INFINITY);
  for (const hook of options.onTurnStart ?? []) {
    try {
      await hook({ turnId, sessionId: input.sessionId, source, userId: input.userId ?? deps.defaultUserId });
    } catch (error) {
      deps.logger.warn('onTurnStart hook failed', { turnId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  const ctx = createToolCallContext({
    sessionId: input.sessionId,
    source,
    traceId: input.signal?.trace_id ?? deps.generateId('trc'),
    turnId,
    userId: input.userId ?? deps.defaultUserId,
    ...(input.agentId ? { agentId: input.agentId } : {}),
    ...(input.allowedToolSets ? { allowedToolSets: input.allowedToolSets } : source === 'cron' || source === 'heartbeat' ? { allowedToolSets: deps.cronAllowedToolSets } : {}),
    operatorAuthored: input.operatorAuthored ?? !isAutonomousSource(source),
    ...(isAutonomousSource(source) ? { lifecycleStages: turnStages(input) } : {}),
  });
  // The person's own words decide a memory's `user_explicit` source (memory.md), never the model.
  if (ctx.operatorAuthored === true && !isAutonomousSource(source) && typeof input.message === 'string' && asksToRemember(input.message)) {
    ctx.state.set(USER_ASKED_TO_REMEMBER, true);
  }
  emit({ type: 'turn-start', turnId, sessionId: ctx.sessionId, traceId: ctx.traceId, source, at: now().toISOString() });

  const turn: TurnState = {
    turnId, input, source, ctx, maxSteps, turnTokenBudget, sessionExists,
    auditBatch: options.sideEffectFreeAuditRows === 'per-call' ? undefined : createAuditBatch({ storage: options.storage, logger: deps.logger }),
    journal: createCallJournal(options.storage, ctx.sessionId, turnId, deps.logger, { sideEffectFree: (name) => options.tools.get(name)?.sideEffects === false, provenance: () => turnProvenance(ctx) }),
    text: '', stopReason: 'finished', usage: ZERO_USAGE, delegatedUsage: ZERO_USAGE, stepCount: 0, answeredBy: undefined, askedUser: false,
    pendingApprovals: [], toolCalls: [], outcomes: new Map(),
    session: { activeSkills: [], turnCount: 0 }, skillSession: undefined,
    scope: { userId: ctx.userId ?? deps.defaultUserId, sessionId: ctx.sessionId }, learned: undefined, decision: {},
    history: [], responseMessages: [],
  };
  // Delegated sub-agent turns: their events are nested in this stream, and their tokens count as this turn's.
  ctx.state.set(TURN_EMIT_KEY, (e: AgentEvent) => {
    if (e.type === 'subagent' && e.event.type === 'turn-end' && e.event.sessionId !== ctx.sessionId) {
      turn.usage = addUsage(turn.usage, e.event.usage);
      turn.delegatedUsage = addUsage(turn.delegatedUsage, e.event.usage);
    }
    emit(e);
  });
  return turn;
}
