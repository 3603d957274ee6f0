import { redactValue } from '../../safety/secret-patterns';
import type { AuditOutcome } from '../../storage/audit-types';
import type { AuditDecision } from '../../storage/types';
import type { CallProvenance } from '../../safety/untrusted';
import type { ToolCallContext } from '../types';
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
 * outcome stands; a `strict` row (the one written before a fund-moving handler runs) throws instead.
 */
export async function writeAudit(env: DispatchEnv, row: AuditRow, strict = false): Promise<void> {
  if (!env.auditEnabled) return;
  try {
    await env.storage.audit.append({
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
    });
  } catch (error) {
    // The audit failure is logged loudly; the call's outcome is already decided (a strict row is not: it throws).
    env.logger.error('audit append failed', { tool: row.toolName, error: error instanceof Error ? error.message : String(error) });
    if (strict) throw error;
  }
}
