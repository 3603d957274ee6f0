import { renderSignalBlock } from '../../skills/signals';
import { inferLifecycleStages, type LifecycleStage } from '../../skills/taxonomy';
import type { SkillSession } from '../../skills/session';
import type { ToolCallContext } from '../../tools/types';
import type { ApprovalRecord } from '../../storage/types';
import { buildIdentityText } from '../identity';
import { buildSystemPromptBlocks } from '../prompt-blocks';
import { reasonForModel } from '../../safety/untrusted';
import { labelTurnInput } from './label-input';
import { loadSessionState, saveSessionMemory, saveSessionState, type SessionState } from '../session-state';
import { writeTogether } from '../../storage/write-together';
import { listPendingApprovals } from './open-turn';
import type { RunInput, TurnLearningContext, TurnScope } from '../types';
import { errorText } from './block-codes';
import { renderRouting, routeSkills } from './route-skills';
import { scanTurnInput } from './scan-input';
import { takeReadAhead, type TurnReadAhead, type TurnState } from './state';
import type { Emit, TurnDeps, TurnPrompt } from './types';

/** What {@link prepareTurn} produces. */
export interface PreparedTurn {
  readonly prompt: TurnPrompt;
  readonly state: SessionState;
  readonly skillSession: SkillSession | undefined;
  readonly scope: TurnScope;
  readonly learning: TurnLearningContext | undefined;
  /** The scenario and lifecycle stage of the message the turn decides on (for decision capture). */
  readonly decision: TurnDecisionContext;
}

/**
 * The scenario and lifecycle stage of the message a turn decides on: its own message, or for a run that only
 * carries approval decisions, the message of the turn that proposed the calls.
 */
export interface TurnDecisionContext {
  readonly scenarioId?: string | undefined;
  readonly stage?: LifecycleStage | undefined;
}

/**
 * Stage 2, prepare and route: the session row and state (with the frozen memory snapshot), skills routed, the
 * workspace, notices and learned context read, the system prompt blocks built, the input scanned. Keeps what
 * it produced on the turn's state and returns the prompt.
 */
export async function prepareTurnStage(deps: TurnDeps, turn: TurnState, emit: Emit): Promise<TurnPrompt> {
  const prepared = await prepareTurn(deps, turn.input, turn.ctx, emit, turn.sessionExists, turn.readAhead);
  turn.session = prepared.state;
  turn.skillSession = prepared.skillSession;
  turn.scope = prepared.scope;
  turn.learned = prepared.learning;
  turn.decision = prepared.decision;
  return prepared.prompt;
}

/**
 * Prepare session, skills, memory snapshot and prompt blocks for a turn (no model call). `sessionExists`, when
 * the caller already read the session row, saves reading it again; `readAhead` (a turn's) hands over the session
 * state and the pending approvals the turn read with its session row.
 */
export async function prepareTurn(deps: TurnDeps, input: RunInput, ctx: ToolCallContext, emit: Emit, sessionExists?: boolean, readAhead?: TurnReadAhead): Promise<PreparedTurn> {
  const { options } = deps;
  const scope: TurnScope = { userId: ctx.userId ?? deps.defaultUserId, agentId: ctx.agentId, sessionId: ctx.sessionId };
  const { state, snapshotLoaded } = await openSessionState(deps, input, ctx, scope, sessionExists, readAhead);
  await labelTurnInput(deps, input, ctx, state, emit);
  const { skillSession, routed, scenarioPlaybook, scenarioId } = routeSkills(deps, input, ctx, state, emit);
  const decision = decisionContext(deps, input, ctx, state.learningMessage, scenarioId);
  const { ws, hostNotices, learning, livePending } = await loadTurnContext(deps, input, ctx, scope, state, readAhead);

  const blocks = buildSystemPromptBlocks({
    identity: buildIdentityText(ws?.identity, options.identity),
    skillCatalog: options.skills?.buildCatalog(),
    memorySnapshot: state.memorySnapshot,
    workspace: ws?.dynamic,
    bootstrap: ws?.bootstrap,
    notices: [...(ws?.notices.map((n) => n.message) ?? []), ...hostNotices],
    learning: learning?.block,
    scenario: scenarioPlaybook,
    activeSkills: skillSession?.promptBlock(),
    routing: renderRouting(routed),
    signal: input.signal ? renderSignalBlock(input.signal) : undefined,
    pendingApprovals:
      livePending.length > 0
        ? `## Waiting for the user's confirmation\n${livePending.map((a) => `- ${a.toolName} (approval ${a.id}): ${reasonForModel(a.reason)}`).join('\n')}\nDo not call these again; the user answers them.`
        : undefined,
  });

  // The frozen snapshot is scanned when it is loaded (it cannot change within the session).
  await scanTurnInput(deps, ctx, { message: input.message, memory: snapshotLoaded ? state.memorySnapshot : undefined, workspace: ws?.dynamic }, emit);

  const allowed = ctx.allowedToolSets;
  const toolNames = skillSession
    ? skillSession.visibleToolNames({ allowedToolSets: allowed })
    : options.tools.list(allowed ? { toolSets: allowed } : {}).map((t) => t.name).sort();
  return { prompt: { blocks, toolNames }, state, skillSession, scope, learning, decision };
}

/**
 * The session row (a read first: only a new session costs a write) and its state, with the memory snapshot. A
 * new session's row, snapshot and state are one transaction where the storage batches writes.
 */
async function openSessionState(deps: TurnDeps, input: RunInput, ctx: ToolCallContext, scope: TurnScope, known?: boolean, readAhead?: TurnReadAhead): Promise<{ state: SessionState; snapshotLoaded: boolean }> {
  const { options, now } = deps;
  const { storage } = options;
  const memory = deps.memoryFor(scope);
  const exists = known ?? Boolean(await storage.conversations.getSession(ctx.sessionId));
  // The memory snapshot is frozen for the whole session: loaded once, persisted, never rebuilt mid-session.
  let state: SessionState = (await (takeReadAhead(readAhead, 'state') ?? loadSessionState(storage, ctx.sessionId))) ?? { activeSkills: [], turnCount: 0 };
  let snapshot: string | undefined;
  if (state.memorySnapshot === undefined && memory) {
    snapshot = (await memory.loadSnapshot()).text;
    state = { ...state, memorySnapshot: snapshot, memoryStored: true };
  }
  const ensure = () => storage.conversations.ensureSession({ id: ctx.sessionId, userId: scope.userId, now: now().toISOString(), metadata: { surface: input.surface ?? options.surface ?? 'sdk' } });
  const writes = [...(exists ? [] : [ensure]), ...(snapshot !== undefined ? [() => saveSessionMemory(storage, ctx.sessionId, snapshot), () => saveSessionState(storage, ctx.sessionId, state)] : [])];
  if (writes.length === 0) return { state, snapshotLoaded: false };
  const settled = writes.length > 1 ? await writeTogether(storage, writes) : undefined;
  const failed = settled?.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  if (!settled) for (const write of writes) await write();
  return { state, snapshotLoaded: snapshot !== undefined };
}

/** The workspace's prompt blocks, the host's notices, the learned context and the approvals still pending (read ahead by a turn). */
async function loadTurnContext(deps: TurnDeps, input: RunInput, ctx: ToolCallContext, scope: TurnScope, state: SessionState, readAhead?: TurnReadAhead) {
  const { options, now } = deps;
  const source = ctx.source;
  const workspace = deps.workspaceFor(scope);
  const ws = workspace ? await workspace.loadPromptBlocks({ source, sessionId: ctx.sessionId }) : undefined;
  let hostNotices: readonly string[] = [];
  if (options.notices) {
    try {
      hostNotices = await options.notices({ turnId: ctx.turnId ?? '', sessionId: ctx.sessionId, source, userId: scope.userId });
    } catch (error) {
      deps.logger.warn('notices provider failed', { sessionId: ctx.sessionId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  // The learning loop: preference graduation before the model is called, then its block for the dynamic tail.
  let learning: TurnLearningContext | undefined;
  if (options.learning) {
    try {
      // A run with only approval decisions is judged in the context of the turn that proposed the calls.
      const message = input.message ?? state.learningMessage;
      learning = await options.learning.prepareTurn({ scope, source, ...(message !== undefined ? { message } : {}) });
    } catch (error) {
      deps.logger.warn('learning: prepareTurn failed; the turn goes on without learned context', { sessionId: ctx.sessionId, error: errorText(error) });
    }
  }
  const pending = await (takeReadAhead(readAhead, 'pending') ?? listPendingApprovals(options.storage, ctx.sessionId));
  const livePending: ApprovalRecord[] = pending.filter((a) => Date.parse(a.expiresAt) > now().getTime());
  return { ws, hostNotices, learning, livePending };
}

/** The scenario and first lifecycle stage of the message the turn decides on (see {@link TurnDecisionContext}). */
function decisionContext(deps: TurnDeps, input: RunInput, ctx: ToolCallContext, proposedBy: string | undefined, routedScenario: string | undefined): TurnDecisionContext {
  const message = input.message ?? proposedBy;
  if (message === undefined || message.trim() === '') return {};
  const scenarioId = routedScenario ?? (input.message === undefined ? deps.options.scenarios?.classify(message, { source: ctx.source })?.id : undefined);
  const stage = inferLifecycleStages(message)[0]; // the stages alone: no entity extraction (the router did it)
  return { ...(scenarioId !== undefined ? { scenarioId } : {}), ...(stage !== undefined ? { stage } : {}) };
}
