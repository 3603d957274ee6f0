import { recordUntrusted, restoreProvenance, turnProvenance, type FlaggedPassage, type UntrustedSource } from '../../safety/untrusted';
import type { ToolCallContext } from '../../tools/types';
import type { SessionState } from '../session-state';
import type { RunInput } from '../types';
import type { Emit, TurnDeps } from './types';

/** How many of the turn's flagged passages were already shown (`input-flagged`) or carried over from earlier turns. */
export const FLAGGED_KEY = 'minara.untrusted.flagged';

/**
 * Part of stage 2: the turn's untrusted-content labels. Sources read in earlier turns of the session are carried
 * over (the label survives compaction: it lives in the session state, not in the messages); a webhook turn's
 * message is a payload from outside; the host may label the message itself (`RunInput.untrusted`, e.g. another
 * user's shared content); uploaded files are labelled by key. Instruction-like passages become `input-flagged`
 * events and audit rows.
 */
export async function labelTurnInput(deps: TurnDeps, input: RunInput, ctx: ToolCallContext, state: SessionState, emit: Emit): Promise<void> {
  restoreProvenance(ctx, state.untrusted);
  const found: FlaggedPassage[] = [];
  const fromMessage: UntrustedSource[] = [...(input.untrusted ?? [])];
  if (ctx.source === 'webhook') fromMessage.push({ kind: 'webhook', source: `webhook:${input.signal?.signal_id ?? 'payload'}` });
  fromMessage.forEach((s, i) => found.push(...recordUntrusted(ctx, s, i === 0 ? input.message : undefined)));
  for (const key of input.attachments ?? []) recordUntrusted(ctx, { kind: 'upload', source: `upload:${key}` });
  ctx.state.set(FLAGGED_KEY, turnProvenance(ctx)?.passages.length ?? 0);
  await flagPassages(deps, ctx, found, 'message', emit);
}

/** Each instruction-like passage of untrusted content: an `input-flagged` event and an audit row. */
export async function flagPassages(deps: TurnDeps, ctx: ToolCallContext, passages: readonly FlaggedPassage[], target: 'message' | 'tool', emit: Emit): Promise<void> {
  for (const f of passages) {
    const pattern = `instruction:${f.classes.join('+')}`;
    emit({ type: 'input-flagged', target, kind: 'prompt_injection', pattern, excerpt: f.passage, source: f.source });
    try {
      await deps.options.storage.audit.append({
        at: deps.now().toISOString(), toolName: '(input-scanner)', tier: 0, source: ctx.source, sessionId: ctx.sessionId, traceId: ctx.traceId,
        decision: 'allowed', code: 'INPUT_PROMPT_INJECTION', reason: `${target} from ${f.source}: ${pattern}`, durationMs: 0,
        argsJson: JSON.stringify({ target, pattern, source: f.source }), userId: ctx.userId, kind: 'input_flag',
        detail: { provenance: { untrustedSources: [f.source], passage: f.passage } },
      });
    } catch (error) {
      deps.logger.warn('could not audit an input flag', { sessionId: ctx.sessionId, error: error instanceof Error ? error.message : String(error) });
    }
  }
}
