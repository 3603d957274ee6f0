/**
 * The tools of the research skills that are not web or sandbox tools: `methodology_lens` (the `analysis` skill's
 * lens: the user's graduated methodologies for a token's asset class, beside the market read). The `memory.alerts`
 * skill's `alert_request` is the finance pack's alert engine (`createAlertTool` in `@minara/agent/finance`).
 */
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { assetClassOf, normalizeAsset } from '../learning/assets';
import type { LearningStore } from '../learning/types';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolExecutionContext, ToolRegistry } from '../tools/types';

/** Options of {@link createMethodologyLensTool}. */
export interface MethodologyLensOptions {
  /** The learning store of the call's tenant; undefined refuses the call. */
  readonly learningFor: (ctx: ToolExecutionContext) => LearningStore | undefined;
  /** The registry `analyze_token` is read through, when it exists (the market side of the lens). */
  readonly registry?: (() => ToolRegistry | undefined) | undefined;
}

/**
 * `methodology_lens({ symbol })` (tool set `analysis`, READ_ONLY, counts as analysis): the methodologies the user's
 * outcomes graduated for this token's asset class (and `any`), each with its record (uses, win rate, Wilson lower
 * bound), the number of untested candidates, and the current technical read (`analyze_token`, through the registry,
 * when the finance pack provides it). The `analysis` skill applies each graduated methodology to that read.
 */
export function createMethodologyLensTool(options: MethodologyLensOptions): ToolEntry {
  if (typeof options?.learningFor !== 'function') throw new MinaraError('CONFIG_INVALID', 'createMethodologyLensTool: pass { learningFor(ctx) }');
  return defineTool({
    name: 'methodology_lens',
    toolSet: 'analysis',
    description:
      "The user's graduated methodologies (trading rules their own outcomes proved) for a token's asset class, with their track record, plus the current technical read. " +
      'Apply each methodology to the read: do its conditions hold now, and what does it imply?',
    inputSchema: z.object({ symbol: z.string().trim().min(1).max(32).describe('BTC, ETH, SOL, EUR/USD') }),
    permissionTier: PermissionTier.READ_ONLY,
    sideEffects: false,
    isAnalysis: true,
    timeoutMs: 30_000,
    execute: async ({ symbol }, ctx) => {
      const store = options.learningFor(ctx);
      if (!store) throw new MinaraError('LEARNING_INVALID', 'methodology_lens: learning is off for this app, so there are no methodologies to apply');
      const asset = normalizeAsset(symbol);
      const assetClass = assetClassOf(asset) ?? 'any';
      const classes = assetClass === 'any' ? ['any'] : [assetClass, 'any'];
      const [graduated, candidates] = await Promise.all([
        store.listMethodologies({ states: ['graduated'], assetClasses: classes, limit: 20 }),
        store.listMethodologies({ states: ['candidate'], assetClasses: classes, limit: 100 }),
      ]);
      let market: unknown;
      const registry = options.registry?.();
      if (registry?.has('analyze_token')) {
        const outcome = await registry.dispatchDetailed('analyze_token', { symbol: asset }, { context: ctx.call, signal: ctx.signal });
        market = outcome.envelope.ok ? outcome.envelope.data : { unavailable: outcome.envelope.error };
      }
      return {
        symbol: asset,
        assetClass,
        methodologies: graduated.map((m) => ({
          id: m.id, text: m.text, assetClass: m.assetClass, uses: m.uses, winRate: m.uses > 0 ? Number((m.wins / m.uses).toFixed(3)) : null, confidence: Number(m.confidence.toFixed(3)),
        })),
        untestedCandidates: candidates.length,
        ...(market !== undefined ? { market } : {}),
        note:
          graduated.length === 0
            ? `No graduated methodology for ${assetClass} yet (${candidates.length} candidates are still being scored): analyse from the market read alone and say so.`
            : 'Apply each methodology to the market read in turn; name the ones whose conditions hold and the ones that do not. These are the user\'s own proven rules, not advice.',
      };
    },
  });
}
