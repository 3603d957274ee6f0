import { inSpan } from '../util/tracing';
import type { AgentEvent } from './events';
import type { RunInput } from './types';
import { applyApprovalDecisions } from './turn/apply-approvals';
import { auditTrailEmitter } from './turn/audit-trail';
import { appendUserMessage } from './turn/append-user-message';
import { compactHistory } from './turn/compact-history';
import { finishTurn } from './turn/finish-turn';
import { loadHistory } from './turn/load-history';
import { openTurn } from './turn/open-turn';
import { persistTurn } from './turn/persist-turn';
import { prepareTurnStage } from './turn/prepare-turn';
import { failTurn, settleStopReason } from './turn/resolve-turn';
import { streamModel } from './turn/stream-model';
import type { TurnDeps } from './turn/types';

export { assertSessionOwner } from './turn/open-turn';
export { prepareTurn } from './turn/prepare-turn';
export type { TurnDeps, TurnPrompt } from './turn/types';

/** Run one turn end to end, pushing events; never throws (failures become an `error` event). */
export function executeTurn(deps: TurnDeps, input: RunInput, turnId: string, emit: (e: AgentEvent) => void): Promise<void> {
  // One OpenTelemetry span per turn (`minara.turn`): ids, source, stop reason, steps, tokens, the model that answered.
  return inSpan('minara.turn', { 'minara.turn.id': turnId, 'minara.session.id': input.sessionId, 'minara.turn.source': input.source ?? 'user' }, (span) =>
    executeTurnUntraced(deps, input, turnId, (e) => {
      if (e.type === 'turn-end') {
        span.setAttributes({
          'minara.turn.stop_reason': e.stopReason, 'minara.turn.steps': e.steps, 'gen_ai.usage.input_tokens': e.usage.inputTokens, 'gen_ai.usage.output_tokens': e.usage.outputTokens,
          ...(e.modelId ? { 'gen_ai.response.model': e.modelId } : {}),
        });
      }
      emit(e);
    }),
  );
}

/**
 * The turn, stage by stage. Each stage is one file under src/runtime/turn/ and works on the one turn state
 * `openTurn` returns. A stage that throws between prepare and the model ends the turn as `error` (or
 * `aborted`); persisting and the post-turn stage run whatever happened before them.
 */
async function executeTurnUntraced(deps: TurnDeps, input: RunInput, turnId: string, streamEmit: (e: AgentEvent) => void): Promise<void> {
  // 0. The turn's rows in the audit trail (signal, skill activations, the autonomous turn's end), by trace id.
  const trail = auditTrailEmitter(deps, input, streamEmit);
  const emit = trail.emit;
  // 1. Own the session: its owner, the run's limits, onTurnStart hooks, the call context, turn-start.
  const turn = await openTurn(deps, input, turnId, emit);
  try {
    // 2. Prepare and route: session state and snapshot, skills, workspace, learned context, prompt blocks, input scan.
    const prompt = await prepareTurnStage(deps, turn, emit);
    // 3. Load and repair history (journaled calls of a dead process, orphaned calls).
    const { askModel, dirty } = await loadHistory(deps, turn);
    // 4. Apply the run's approval decisions.
    await applyApprovalDecisions(deps, turn, dirty, emit);
    // 5. Append the user message.
    await appendUserMessage(deps, turn);
    // 6. Compact.
    const compaction = await compactHistory(deps, turn, emit);
    // 7. and 8. Assemble the prompt, stream the model and dispatch its calls (an approvals-only run on an empty session asks nothing).
    if (askModel) await streamModel(deps, turn, prompt, compaction, emit);
    settleStopReason(turn, emit);
  } catch (error) {
    failTurn(deps, turn, error, emit);
  }
  // 9. Persist, whatever happened above.
  const turnCount = await persistTurn(deps, turn);
  // Rows a call held after the persist stage took the batch's (none in a turn that ended as it should).
  await turn.auditBatch?.flush();
  // 10. Post-turn learning and events.
  await finishTurn(deps, turn, turnCount, emit);
  await trail.flush();
}
