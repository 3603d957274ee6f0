import { asksToRemember, USER_ASKED_TO_REMEMBER } from '../../memory/remember-intent';
import { MinaraError } from '../../errors/minara-error';
import { isAutonomousSource } from '../../safety/permission-tier';
import { turnProvenance } from '../../safety/untrusted';
import { inferLifecycleStages } from '../../skills/taxonomy';
import { createAuditBatch } from '../../tools/audit-batch';
import { createToolCallContext } from '../../tools/context';
import type { TurnStage } from '../../tools/types';
import type { ModelMessage } from 'ai';
import { createCallJournal, readJournal } from '../call-journal';
import { loadMessages } from '../conversation';
import { loadSessionState, type SessionState } from '../session-state';
import { readTogether } from '../../storage/read-together';
import type { ApprovalRecord, SessionRecord, Storage } from '../../storage/types';
import { type AgentEvent, addUsage, TURN_EMIT_KEY, ZERO_USAGE } from '../events';
import type { ResolvedRuntimeOptions, RunInput } from '../types';
import type { TurnReadAhead, TurnState } from './state';
import type { Emit, TurnDeps } from './types';

/**
 * Refuse a run on a session that another user created (`SESSION_FORBIDDEN`). A session with no recorded
 * owner (created before owners were kept) is left as it is. Returns whether the session exists (the turn's
 * prepare stage then need not read it again).
 */
export async function assertSessionOwner(storage: ResolvedRuntimeOptions['storage'], sessionId: string, userId: string): Promise<boolean> {
  return checkSessionOwner(await storage.conversations.getSession(sessionId), sessionId, userId);
}

/**
 * Begin `first` and what the turn's later stages read (the session state, the pending approvals, the history, the
 * call journal) together: where the storage batches reads, one look at the database. The later stages take them from
 * `TurnState.readAhead`; nothing the turn does before they do writes these rows. A read that fails rejects when the
 * stage that needs it awaits it (a refused turn never does).
 */
function readAheadWith<T>(storage: Storage, sessionId: string, first: () => Promise<T>): { readonly first: Promise<T>; readonly ahead: TurnReadAhead } {
  const [head, state, pending, history, journal] = readTogether<[T, SessionState | undefined, ApprovalRecord[], ModelMessage[], string | undefined]>(storage, [
    first,
    () => loadSessionState(storage, sessionId),
    () => listPendingApprovals(storage, sessionId),
    () => loadMessages(storage, sessionId),
    () => readJournal(storage, sessionId),
  ]);
  for (const read of [state, pending, history, journal]) read.catch(() => undefined);
  return { first: head, ahead: { state, pending, history, journal } };
}

/** The session's pending approvals (at most 20, newest first), as the prompt lists them. */
export function listPendingApprovals(storage: Storage, sessionId: string): Promise<ApprovalRecord[]> {
  return storage.approvals.list({ status: 'pending', sessionId, limit: 20 });
}

/** {@link assertSessionOwner} on a session row already read. */
function checkSessionOwner(session: SessionRecord | undefined, sessionId: string, userId: string): boolean {
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
  // What the later stages read is read with the session row, as one look at the database (`readTogether`); after
  // the onTurnStart hooks when there are any (a hook may be where a host serialises turns or changes a session).
  const hooks = options.onTurnStart ?? [];
  const getSession = () => options.storage.conversations.getSession(input.sessionId);
  let readAhead: TurnReadAhead | undefined;
  let session: Promise<SessionRecord | undefined>;
  if (hooks.length === 0) ({ first: session, ahead: readAhead } = readAheadWith(options.storage, input.sessionId, getSession));
  else session = getSession();
  const sessionExists = checkSessionOwner(await session, input.sessionId, input.userId ?? deps.defaultUserId);
  // A run may only lower the runtime's limits (a delegated child gets its own, smaller budget).
  const maxSteps = Math.min(deps.maxSteps, input.maxSteps ?? Number.POSITIVE_INFINITY);
  const turnTokenBudget = Math.min(deps.turnTokenBudget, input.turnTokenBudget ?? Number.POSITIVE_INFINITY);
  for (const hook of hooks) {
    try {
      await hook({ turnId, sessionId: input.sessionId, source, userId: input.userId ?? deps.defaultUserId });
    } catch (error) {
      deps.logger.warn('onTurnStart hook failed', { turnId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  readAhead ??= readAheadWith(options.storage, input.sessionId, () => Promise.resolve(undefined)).ahead;
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
    turnId, input, source, ctx, maxSteps, turnTokenBudget, sessionExists, readAhead,
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
