import type { AppView } from '../../events/bus';
import { turnProvenance } from '../../safety/untrusted';
import { executedCalls } from '../../tools/context';
import { ZERO_USAGE } from '../events';
import { toTurnExecution } from '../executions';
import type { PostTurnRecord } from '../types';
import { errorText } from './block-codes';
import type { TurnState } from './state';
import type { Emit, TurnDeps } from './types';

/**
 * Stage 10, post-turn learning and events: the post_turn record goes on the event stream (just before
 * `turn-end`), then `turn:ended` on the app bus, the workspace's turn-end hook, decision capture and the
 * `onTurnEnd` hooks (the usage row was recorded with the turn's other writes, stage 9). Failures of the hooks are logged, never thrown.
 */
export async function finishTurn(deps: TurnDeps, turn: TurnState, turnCount: number, emit: Emit): Promise<void> {
  const { options } = deps;
  const { ctx, input, turnId, source, text, stopReason, pendingApprovals } = turn;
  const summary = buildPostTurnRecord(deps, turn, turnCount);
  emit({ type: 'post-turn', record: summary });
  emit({
    type: 'turn-end', turnId, sessionId: ctx.sessionId, text, stopReason, steps: turn.stepCount, usage: turn.usage, ...(turn.delegatedUsage !== ZERO_USAGE ? { delegatedUsage: turn.delegatedUsage } : {}),
    toolsUsed: [...ctx.usedTools], pendingApprovals, ...(turn.answeredBy ? { modelId: turn.answeredBy } : {}),
    ...(summary.untrustedSources ? { untrustedSources: summary.untrustedSources } : {}),
  });
  options.bus?.emit('turn:ended', { sessionId: ctx.sessionId, turnId, source, text, toolsUsed: [...ctx.usedTools] });
  // Cache invalidation for the person's open views (agent-loop §5): what this turn changed.
  const views = changedViews(turn);
  if (views.length > 0) options.bus?.emit('views:invalidated', { userId: turn.scope.userId, views, reason: `turn ${turnId}` });
  const workspace = deps.workspaceFor(turn.scope);
  if (workspace) {
    try {
      await workspace.onTurnEnd({
        sessionId: ctx.sessionId, surface: input.surface ?? options.surface ?? 'sdk', turnCount, source, replyText: text,
        ...(input.message !== undefined ? { userText: input.message } : {}),
        openLoops: pendingApprovals.map((p) => `confirm ${p.toolName} (approval ${p.approvalId})`),
      });
    } catch (error) {
      deps.logger.error('workspace turn-end hook failed', { error: errorText(error) });
    }
  }
  if (options.learning) {
    try {
      await options.learning.captureTurn(summary);
    } catch (error) {
      deps.logger.error('learning: decision capture failed', { sessionId: ctx.sessionId, turnId, error: errorText(error) });
    }
  }
  for (const hook of options.onTurnEnd ?? []) {
    try {
      await hook(summary);
    } catch (error) {
      deps.logger.error('turn-end hook failed', { error: errorText(error) });
    }
  }
}

/** Tools whose calls change the memory view. */
const MEMORY_WRITERS = new Set(['memory_write', 'memory_learn', 'memory_profile_set']);

/** The views a turn changed: fills move the portfolio, memory writes the memory page, a pending approval the queue, any tool call the audit trail. */
export function changedViews(turn: TurnState): AppView[] {
  const views: AppView[] = [];
  if (executedCalls(turn.ctx).length > 0) views.push('portfolio');
  if ([...turn.ctx.usedTools].some((t) => MEMORY_WRITERS.has(t))) views.push('memory');
  if (turn.pendingApprovals.length > 0) views.push('approvals');
  if (turn.ctx.usedTools.size > 0 || turn.toolCalls.length > 0) views.push('audit');
  return views;
}

/** The post_turn record of a finished turn: what was said and done, by whom, under which skills. */
function buildPostTurnRecord(deps: TurnDeps, turn: TurnState, turnCount: number): PostTurnRecord {
  const { options } = deps;
  const { ctx, input, turnId, source, learned, delegatedUsage, answeredBy } = turn;
  const activeSkills = turn.skillSession?.activeIds() ?? turn.session.activeSkills;
  const roleFor = (toolName: string): string =>
    ctx.agentId ?? activeSkills.find((id) => options.skills?.get(id)?.toolNames.includes(toolName)) ?? 'agent';
  return {
    sessionId: ctx.sessionId, turnId, traceId: ctx.traceId, source, userId: turn.scope.userId, userText: input.message, text: turn.text, stopReason: turn.stopReason,
    steps: turn.stepCount, usage: turn.usage, ...(delegatedUsage !== ZERO_USAGE ? { delegatedUsage } : {}), toolCalls: turn.toolCalls, pendingApprovals: turn.pendingApprovals, turnCount, ...(answeredBy ? { modelId: answeredBy } : {}),
    ...(ctx.agentId ? { agentId: ctx.agentId } : {}), activeSkills, methodologyIds: learned?.methodologyIds ?? [], preferenceIds: learned?.preferenceIds ?? [],
    ...(turn.decision.scenarioId !== undefined ? { scenarioId: turn.decision.scenarioId } : {}), ...(turn.decision.stage !== undefined ? { stage: turn.decision.stage } : {}),
    executions: executedCalls(ctx).map((c) => toTurnExecution(c, roleFor(c.toolName))),
    ...untrustedOf(turn),
  };
}

/** The turn's untrusted-content labels for its record: the sources read, and whether the message was one. */
function untrustedOf(turn: TurnState): { untrustedSources?: readonly string[]; messageUntrusted?: boolean } {
  const p = turnProvenance(turn.ctx);
  if (!p) return {};
  const messageUntrusted = turn.input.message !== undefined && p.sources.some((s) => s.kind !== 'tool' && s.kind !== 'upload');
  return { untrustedSources: [...new Set(p.sources.map((s) => s.source))], ...(messageUntrusted ? { messageUntrusted } : {}) };
}
