import { redactValue } from '../../safety/secret-patterns';
import type { AuditOutcome } from '../../storage/audit-types';
import type { AuditDecision, AuditEntryInput } from '../../storage/types';
import type { CallProvenance } from '../../safety/untrusted';
import type { ToolCallContext } from '../types';
import { writeTogether } from '../../storage/write-together';
import { type AuditBatch, holdAuditRow } from '../audit-batch';
import type { DispatchEnv } from './types';

/** One audit row of a dispatch. */
export interface AuditRow {
  toolName: string; tier: number; ctx: ToolCallContext; toolCallId: string; decision: AuditDecision;
  code?: string | undefined; reason?: string | undefined; durationMs: number; input: unknown; mode: 'preview' | 'execute'; approvalId?: string | undefined;
  /** What the call did (see `extractAuditOutcome`); absent on the `executing` row. */
  outcome?: AuditOutcome | undefined;
  /** What the turn had read from outside when the call was proposed; kept in the row's `detail.provenance`. */
  provenance?: CallProvenance | undefined;
}

/**
 * The audit step: one row per dispatch (input redacted). A failed append is logged loudly and the call's
 * outcome stands; a `strict` row (the one written before a fund-moving handler runs) throws instead. `alongside`
 * (the caller's `withAuditRow` writes) commit in the row's transaction where the storage batches writes, else
 * after it, one by one. With `batch` (`DispatchOptions.auditBatch`), the row of a side-effect-free call with no
 * `alongside` writes is held in it; any other row commits the held ones first, so the log keeps the calls' order.
 */
export async function writeAudit(env: DispatchEnv, row: AuditRow, strict = false, alongside?: ReadonlyArray<() => Promise<unknown>>, batch?: { readonly batch: AuditBatch; readonly hold: boolean }): Promise<void> {
  if (!env.auditEnabled) return runAlongside(env, row, alongside);
  if (batch !== undefined) {
    if (batch.hold && !strict && (alongside === undefined || alongside.length === 0)) return holdAuditRow(batch.batch, auditEntryOf(env, row));
    await batch.batch.flush();
  }
  const append = () => env.storage.audit.append(auditEntryOf(env, row));
  if (alongside !== undefined && alongside.length > 0) {
    const settled = await writeTogether(env.storage, [append, ...alongside]);
    if (settled !== undefined) {
      settled.forEach((s, i) => {
        if (s.status === 'rejected') env.logger.error(i === 0 ? 'audit append failed' : 'a write committed with the audit row failed', { tool: row.toolName, error: errorText(s.reason) });
      });
      return;
    }
  }
  try {
    await append();
  } catch (error) {
    // The audit failure is logged loudly; the call's outcome is already decided (a strict row is not: it throws).
    env.logger.error('audit append failed', { tool: row.toolName, error: errorText(error) });
    if (strict) throw error;
  }
  await runAlongside(env, row, alongside);
}

/** The `withAuditRow` writes on their own, in order; failures logged. */
async function runAlongside(env: DispatchEnv, row: AuditRow, alongside: ReadonlyArray<() => Promise<unknown>> | undefined): Promise<void> {
  for (const write of alongside ?? []) {
    try {
      await write();
    } catch (error) {
      env.logger.error('a write committed with the audit row failed', { tool: row.toolName, error: errorText(error) });
    }
  }
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function auditEntryOf(env: DispatchEnv, row: AuditRow): AuditEntryInput {
  return {
    at: env.now().toISOString(),
    toolName: row.toolName,
    tier: row.tier,
    source: row.ctx.source,
    sessionId: row.ctx.sessionId,
    traceId: row.ctx.traceId,
    toolCallId: row.toolCallId,
    approvalId: row.approvalId,
    decision: row.decision,
    code: row.code,
    reason: row.reason,
    durationMs: row.durationMs,
    argsJson: JSON.stringify(redactValue(row.input) ?? null),
    mode: row.mode,
    userId: row.ctx.userId,
    kind: 'tool_call',
    outcome: row.outcome,
    ...(row.provenance ? { detail: { provenance: { untrustedSources: row.provenance.untrustedSources, ...(row.provenance.passage ? { passage: row.provenance.passage } : {}) } } } : {}),
  };
}
