import { z } from 'zod';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import type { ShadowReport } from './shadow-report';

/**
 * `shadow_report` (tool set `read`, READ_ONLY; shadow mode only): the shadow fills marked to the current price and
 * the book against holding, so the model (and the gateway's `GET /v1/finance/shadow`, which runs it through the
 * gate) can say how the agent would have done.
 */
export function createShadowReportTool(report: (o: { readonly since?: string | undefined }) => Promise<ShadowReport>): ToolEntry {
  return defineTool({
    name: 'shadow_report',
    toolSet: 'read',
    description: 'Shadow mode: what the agent would have done (its shadow fills) against what the market did since, and against holding',
    inputSchema: z.object({ since: z.string().trim().min(1).max(40).nullish().describe('ISO time; only fills since then are listed') }),
    permissionTier: PermissionTier.READ_ONLY,
    sideEffects: false,
    timeoutMs: 30_000,
    execute: ({ since }) => report(since ? { since } : {}),
  });
}
