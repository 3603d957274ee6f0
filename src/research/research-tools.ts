/**
 * The tools of the research skills that are not web or sandbox tools: `methodology_lens` (the `analysis` skill's
 * lens: the user's graduated methodologies for a token's asset class, beside the market read) and `alert_request`
 * (the `memory.alerts` skill: alert requests kept in memory; there is no real-time alert engine in this build).
 */
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { assetClassOf, normalizeAsset } from '../learning/assets';
import type { LearningStore } from '../learning/types';
import type { MemoryStore } from '../memory/types';
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

/** Options of {@link createAlertRequestTool}. */
export interface AlertRequestToolOptions {
  /** The memory store of the call's tenant. */
  readonly memoryFor: (ctx: ToolExecutionContext) => MemoryStore;
}

/** What the alert request tool tells the model about delivery, in every answer. */
export const ALERT_DELIVERY_NOTE =
  'Stored as an alert request in memory. There is no real-time alert engine in this build: the request is checked when a scheduled or heartbeat turn runs (market.watch reads alert requests), so tell the user it is checked periodically, not instantly.';

/**
 * `alert_request({ op, … })` (tool set `memory`, READ_ONLY: it writes the user's own memory, like `memory_write`): keep
 * the user's price-alert requests as `alert` memories — `add` (asset, `above` / `below` / `move_pct`, threshold,
 * note), `list`, `cancel` (id). Each answer carries {@link ALERT_DELIVERY_NOTE}: nothing fires in real time.
 */
export function createAlertRequestTool(options: AlertRequestToolOptions): ToolEntry {
  if (typeof options?.memoryFor !== 'function') throw new MinaraError('CONFIG_INVALID', 'createAlertRequestTool: pass { memoryFor(ctx) }');
  const list = async (memory: MemoryStore) =>
    (await memory.read({ category: 'alert', limit: 50 }))
      .filter((m) => typeof m.metadata?.alert === 'object')
      .map((m) => ({ id: m.id, ...(m.metadata!.alert as Record<string, unknown>), text: m.content }));
  return defineTool({
    name: 'alert_request',
    toolSet: 'memory',
    description:
      'The user\'s alert requests ("tell me when BTC drops below 60k"): op add (asset, condition above|below|move_pct, threshold, note), list, or cancel (id). ' +
      'Requests are stored in memory and checked on scheduled turns, not in real time: say so.',
    inputSchema: z.object({
      op: z.enum(['add', 'list', 'cancel']),
      asset: z.string().trim().min(1).max(32).nullish(),
      condition: z.enum(['above', 'below', 'move_pct']).nullish(),
      threshold: z.number().finite().positive().nullish().describe('A price in USD, or a percentage for move_pct'),
      note: z.string().trim().max(300).nullish(),
      id: z.number().int().positive().nullish(),
    }),
    permissionTier: PermissionTier.READ_ONLY,
    execute: async (input, ctx) => {
      const memory = options.memoryFor(ctx);
      if (input.op === 'add') {
        if (!input.asset || !input.condition || input.threshold == null) throw new MinaraError('INVALID_ARGUMENT', 'asset, condition and threshold: all three are needed to add an alert request');
        const asset = normalizeAsset(input.asset);
        const what = input.condition === 'move_pct' ? `moves ${input.threshold}%` : `goes ${input.condition} ${input.threshold} USD`;
        const alert = { asset, condition: input.condition, threshold: input.threshold, status: 'requested', ...(input.note ? { note: input.note } : {}) };
        const { id } = await memory.write({ category: 'alert', content: `Alert request: tell the user when ${asset} ${what}${input.note ? ` (${input.note})` : ''}.`, metadata: { alert }, source: 'user_explicit' });
        return { added: { id, ...alert }, alerts: await list(memory), note: ALERT_DELIVERY_NOTE };
      }
      if (input.op === 'cancel') {
        if (input.id == null) throw new MinaraError('INVALID_ARGUMENT', 'id: required to cancel an alert request');
        const current = await list(memory);
        if (!current.some((a) => a.id === input.id)) throw new MinaraError('INVALID_ARGUMENT', `id: no alert request ${input.id} (requests: ${current.map((a) => a.id).join(', ') || 'none'})`);
        await memory.softDelete(input.id);
        return { cancelled: input.id, alerts: await list(memory), note: ALERT_DELIVERY_NOTE };
      }
      return { alerts: await list(memory), note: ALERT_DELIVERY_NOTE };
    },
  });
}
