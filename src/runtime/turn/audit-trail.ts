import { isAutonomousSource } from '../../safety/permission-tier';
import { redactSecrets, redactValue } from '../../safety/secret-patterns';
import type { AuditBatch } from '../../tools/audit-batch';
import type { ToolCallContext } from '../../tools/types';
import type { AuditEntryInput } from '../../storage/types';
import type { AgentEvent } from '../events';
import type { RunInput } from '../types';
import type { Emit, TurnDeps } from './types';

/** What {@link auditTrailEmitter} returns: the emitter to use for the turn, and a wait for its rows. */
export interface TurnAuditTrail {
  readonly emit: Emit;
  /** Resolves once every row the turn's events produced is written (failures are logged, never thrown). */
  flush(): Promise<void>;
}

/**
 * The turn's own rows in the audit trail, beside each call's: the **signal** that started an autonomous turn
 * (its source, signal id, asset and the message), every **skill activation** (the skills, how: signal, scenario,
 * model, session), and the **turn** row of an autonomous turn (stop reason, steps, tools used). They carry the
 * turn's trace id, so `minara audit trace <id>` answers "what did the 14:03 alert do" in order. Written in event
 * order on a promise chain; the turn waits for it before it ends.
 */
export function auditTrailEmitter(deps: TurnDeps, input: RunInput, emit: Emit): TurnAuditTrail {
  const storage = deps.options.storage;
  const source = input.source ?? 'user';
  const userId = input.userId ?? deps.defaultUserId;
  const traced = isAutonomousSource(source) || input.signal !== undefined;
  let chain: Promise<void> = Promise.resolve();
  let trace: { traceId: string; sessionId: string } | undefined;
  const write = (row: Omit<AuditEntryInput, 'at' | 'source' | 'userId' | 'durationMs' | 'tier' | 'decision'> & Partial<Pick<AuditEntryInput, 'decision'>>) => {
    const at = deps.now().toISOString();
    chain = chain.then(() =>
      storage.audit.append({ at, source, userId, tier: 0, durationMs: 0, decision: 'allowed', ...row }).catch((error: unknown) => {
        deps.logger.error('audit append failed', { kind: row.kind, error: error instanceof Error ? error.message : String(error) });
      }),
    );
  };
  const observe = (e: AgentEvent) => {
    if (e.type === 'turn-start') {
      trace = { traceId: e.traceId, sessionId: e.sessionId };
      if (traced) {
        const s = input.signal;
        write({
          kind: 'signal', toolName: s?.signal_id ?? source, ...trace,
          argsJson: JSON.stringify({ message: (input.message ?? '').slice(0, 500) }),
          detail: { source, ...(s ? { signalId: s.signal_id, ...(s.asset ? { asset: s.asset.symbol } : {}), ...(s.severity ? { severity: s.severity } : {}), ...(s.preload_skills ? { preloadSkills: [...s.preload_skills] } : {}) } : {}), turnId: e.turnId },
        });
      }
    } else if (e.type === 'skill-activated' && trace) {
      write({ kind: 'skill_activation', toolName: e.skillIds.join(',').slice(0, 200) || '(none)', ...trace, argsJson: '{}', detail: { skillIds: [...e.skillIds], via: e.via, shed: [...e.shed] } });
    } else if (e.type === 'turn-end' && trace && traced) {
      write({
        kind: 'turn', toolName: 'turn', ...trace, argsJson: '{}', decision: e.stopReason === 'error' ? 'error' : 'allowed',
        detail: {
          turnId: e.turnId, stopReason: e.stopReason, steps: e.steps, toolsUsed: [...e.toolsUsed], pendingApprovals: e.pendingApprovals.length, answer: e.text.slice(0, 500),
          ...(e.untrustedSources ? { provenance: { untrustedSources: [...e.untrustedSources] } } : {}),
        },
      });
    }
  };
  return {
    emit: (e) => {
      observe(e);
      emit(e);
    },
    flush: () => chain,
  };
}

/**
 * A call the model made that never reached dispatch (a tool this turn does not offer, or input the AI SDK could
 * not parse): still a row of the trail, `blocked` with `TOOL_NOT_OFFERED` (or `error`), so "each call" of a trace
 * includes the ones that were refused before the gate, after the rows the turn's `batch` holds. Failures to write are
 * logged, never thrown.
 */
export async function auditUndispatchedCall(
  deps: TurnDeps,
  ctx: ToolCallContext,
  part: { readonly toolCallId: string; readonly toolName: string; readonly input: unknown; readonly error: unknown },
  batch?: AuditBatch,
): Promise<void> {
  // The rows of the calls before it first, so the log keeps the turn's order.
  await batch?.flush();
  const message = part.error instanceof Error ? part.error.message : String(part.error);
  const notOffered = /NoSuchToolError|unavailable tool/u.test(`${String((part.error as { name?: unknown } | null)?.name ?? '')} ${message}`);
  const code = notOffered ? 'TOOL_NOT_OFFERED' : 'TOOL_EXECUTION_FAILED';
  try {
    await deps.options.storage.audit.append({
      at: deps.now().toISOString(), kind: 'tool_call', toolName: part.toolName.slice(0, 200), tier: 0, source: ctx.source, sessionId: ctx.sessionId, traceId: ctx.traceId,
      toolCallId: part.toolCallId, userId: ctx.userId, decision: notOffered ? 'blocked' : 'error', code, reason: redactSecrets(message).slice(0, 500), durationMs: 0,
      argsJson: JSON.stringify(redactValue(part.input) ?? null), outcome: { status: notOffered ? 'blocked' : 'error', errorCode: code },
    });
  } catch (error) {
    deps.logger.error('audit append failed', { tool: part.toolName, error: error instanceof Error ? error.message : String(error) });
  }
}
