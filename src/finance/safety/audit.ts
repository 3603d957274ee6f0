import type { Storage } from '../../storage/types';
import type { ToolHook } from '../../tools/types';
import type { Logger } from '../../util/logger';
import { takeStages } from './stage';

/** Tool name of the audit rows the safety stack writes (one per fund-moving dispatch it checked). */
export const SAFETY_AUDIT_TOOL = 'finance_safety';

/**
 * After-hook that writes one audit row per checked call: every stage's decision (`pass`, `block`,
 * `raise_tier`, `require_approval`) with its reason, under the call's trace id and tool call id.
 * Query with `registry.queryAudit({ toolName: 'finance_safety', traceId })`.
 */
export function createSafetyAuditHook(storage: Storage, now: () => Date, logger?: Logger): ToolHook {
  return {
    name: 'finance.audit',
    async after(call) {
      const stages = takeStages(call.context, call.toolCallId);
      if (stages.length === 0) return;
      const blocked = stages.find((s) => s.outcome === 'block');
      try {
        await storage.audit.append({
          at: now().toISOString(),
          toolName: SAFETY_AUDIT_TOOL,
          tier: call.tier,
          source: call.context.source,
          sessionId: call.context.sessionId,
          traceId: call.context.traceId,
          toolCallId: call.toolCallId,
          userId: call.context.userId,
          decision: call.decision,
          ...(blocked ? { code: 'TOOL_BLOCKED', reason: `${blocked.stage}: ${blocked.detail ?? ''}` } : { reason: stages.map((s) => `${s.stage}:${s.outcome}`).join(', ') }),
          durationMs: call.durationMs,
          argsJson: JSON.stringify({ tool: call.tool.name, mode: call.mode, stages }),
          mode: call.mode,
        });
      } catch (error) {
        logger?.error('finance safety audit failed', { error: error instanceof Error ? error.message : String(error) });
      }
    },
  };
}
