/**
 * The learning tools: `memory_learn` (record a methodology to test, a behavioural preference, or a hard
 * constraint for the user to approve — into the learning tables, never into `memories`) and
 * `memory_compiled_page` (READ_ONLY: the compiled page of one asset). Both are in the `memory` tool set and
 * go through the registry's dispatch like every tool.
 */
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolExecutionContext } from '../tools/types';
import type { LearningStore } from './types';
import { callProvenance } from '../safety/untrusted';

/** Options of {@link createLearningTools}: the learning store of the call's tenant. */
export interface LearningToolsOptions {
  /** The store of `ctx.call.userId` / `agentId`; undefined refuses the call. */
  readonly learningFor: (ctx: ToolExecutionContext) => LearningStore | undefined;
  /**
   * Whether an MCP host (source `mcp`) may call `memory_learn` (the untrusted-content policy's `mcpHostLearning`).
   * @default false
   */
  readonly mcpHostLearning?: boolean | undefined;
}

/**
 * Whether a durable, prompt-shaping write made in this call must wait for an operator, and why; or a refusal for an
 * MCP host the operator has not allowed. Every write by the model through a tool lands as `proposed`; the reason
 * names the untrusted sources the turn read, when it read any.
 */
export function learningWriteReview(ctx: ToolExecutionContext, options: { readonly mcpHostLearning?: boolean | undefined; readonly tool: string }): { readonly stateReason: string } {
  if (ctx.call.source === 'mcp' && options.mcpHostLearning !== true) {
    throw new MinaraError('UNTRUSTED_CONTENT', `${options.tool}: an MCP host cannot write learnings that shape future prompts (the operator allows it with untrustedContent.mcpHostLearning)`, { retryable: false });
  }
  const p = callProvenance(ctx.call);
  const by = ctx.call.source === 'mcp' ? 'an MCP host' : `the model (${ctx.call.source} turn)`;
  return { stateReason: `proposed by ${by} through ${options.tool}${p ? `, ${p.summary}` : ''}: waiting for the operator (accept it, or quarantine it)` };
}

/** Names of the learning tools, in their stable order. */
export const LEARNING_TOOL_NAMES = ['memory_learn', 'memory_compiled_page'] as const;

const name = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'lower snake case, 1-40 chars');

/**
 * Create the learning tools for a registry (`createApp` registers them).
 *
 * @example
 * ```ts
 * const tools = createToolRegistry({ storage, tools: createLearningTools({ learningFor: () => learning }) });
 * await tools.dispatch('memory_learn', { kind: 'methodology', text: 'Fade London-open spikes', asset: 'EUR/USD' });
 * await tools.dispatch('memory_compiled_page', { entity: 'EUR/USD' });
 * ```
 */
export function createLearningTools(options: LearningToolsOptions): ToolEntry[] {
  if (typeof options?.learningFor !== 'function') throw new MinaraError('CONFIG_INVALID', 'createLearningTools: pass { learningFor(ctx) }');
  const storeFor = (ctx: ToolExecutionContext): LearningStore => {
    const store = options.learningFor(ctx);
    if (!store) throw new MinaraError('LEARNING_INVALID', 'No learning store for this call: the call context has no tenant, or learning is off');
    return store;
  };
  return [
    defineTool({
      name: 'memory_learn',
      toolSet: 'memory',
      description:
        'Record a learning (not a memory): kind "methodology" is a trading rule to test (proposed: an operator accepts it before it is used; real outcomes then score it), ' +
        '"preference" a behavioural preference of the user (proposed; it activates once behaviour confirms it), ' +
        '"hard_constraint" a risk limit the user stated (proposed; only the user can approve it).',
      inputSchema: z.object({
        kind: z.enum(['methodology', 'preference', 'hard_constraint']),
        text: z.string().trim().min(3).max(1000),
        assetClass: name.nullish().describe('methodology: crypto_major, crypto_alt, crypto_meme, perps, forex, equity, …, or any'),
        asset: z.string().trim().min(1).max(32).nullish().describe('methodology: an asset it is about (BTC, EUR/USD); gives the asset class'),
        dimension: name.nullish().describe('preference / hard_constraint: slippage, leverage, asset_class, position_size, …'),
      }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) => {
        const store = storeFor(ctx);
        const review = learningWriteReview(ctx, { mcpHostLearning: options.mcpHostLearning, tool: 'memory_learn' });
        if (input.kind === 'methodology') {
          if (input.assetClass == null && input.asset == null) throw new MinaraError('LEARNING_INVALID', 'memory_learn: a methodology needs assetClass or asset');
          // A rule the model wrote stays out of every prompt until an operator accepts it (learning accept).
          const { methodology, created } = await store.createMethodology({
            text: input.text, origin: 'memory_learn', ...(input.assetClass != null ? { assetClass: input.assetClass } : {}), ...(input.asset != null ? { asset: input.asset } : {}),
            state: 'proposed', stateReason: review.stateReason,
          });
          return {
            kind: 'methodology', id: methodology.id, created, assetClass: methodology.assetClass, state: methodology.state, uses: methodology.uses,
            note: created ? 'Proposed; an operator reviews it (learning accept) before it is used or scored.' : 'Already known; nothing new was recorded.',
          };
        }
        if (input.dimension == null) throw new MinaraError('LEARNING_INVALID', `memory_learn: a ${input.kind} needs a dimension (slippage, leverage, …)`);
        const { preference, created } = await store.proposePreference({
          dimension: input.dimension, text: input.text, kind: input.kind === 'hard_constraint' ? 'hard_constraint' : 'behavioural', source: 'memory_learn',
        });
        return {
          kind: input.kind, id: preference.id, created, state: preference.state,
          note: input.kind === 'hard_constraint' ? 'Proposed; the user approves hard constraints (/preferences); it is not in force yet.' : 'Proposed; it activates once the user’s behaviour confirms it.',
        };
      },
    }),
    defineTool({
      name: 'memory_compiled_page',
      toolSet: 'memory',
      description:
        'Everything learned about one asset as one page: graduated methodologies, active hard constraints, recent reflected trade cases and trades. ' +
        'Use it for "what do you think about BTC?" instead of several searches.',
      inputSchema: z.object({
        entity: z.string().trim().min(1).max(32).describe('BTC, $eth, EUR/USD'),
        includeHardConstraints: z.boolean().nullish(),
      }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      execute: async (input, ctx) => ({
        entity: input.entity,
        page: await storeFor(ctx).compiledPage(input.entity, input.includeHardConstraints === false ? { includeHardConstraints: false } : {}),
      }),
    }),
  ];
}
