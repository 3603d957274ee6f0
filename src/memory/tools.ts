/**
 * The memory tools: `memory_write`, `memory_search`, `memory_read`, `memory_profile_set`. Baseline tools of the `memory` tool set,
 * READ_ONLY (they never ask for confirmation); every call goes through the registry's dispatch, which writes
 * one audit row per call. Memories are advisory context: a tool here cannot change a permission tier.
 */
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolExecutionContext } from '../tools/types';
import { PROPOSED_FACT_CATEGORY, PROPOSED_MEMORY_SOURCE } from './held';
import { USER_ASKED_TO_REMEMBER } from './remember-intent';
import type { MemoryStore } from './types';
import { callProvenance } from '../safety/untrusted';

/** Options of {@link createMemoryTools}: one fixed store, or a resolver from the call's tenant. */
export type MemoryToolsOptions = (
  | { readonly store: MemoryStore; readonly resolveStore?: undefined }
  | {
      /** The store of the call's tenant (`ctx.call.userId` / `agentId`); throw or return undefined to refuse. */
      readonly resolveStore: (ctx: ToolExecutionContext) => MemoryStore | undefined | Promise<MemoryStore | undefined>;
      readonly store?: undefined;
    }
) & {
  /** Whether an MCP host (source `mcp`) may call `memory_write` (the untrusted-content policy's `mcpHostLearning`). @default false */
  readonly mcpHostLearning?: boolean | undefined;
};

export { PROPOSED_MEMORY_SOURCE } from './held';

/** Names of the memory tools, in their stable order. */
export const MEMORY_TOOL_NAMES = ['memory_write', 'memory_search', 'memory_read', 'memory_profile_set'] as const;

/** Profile keys the agent may set: lower snake case, no dots (so never a `hard_constraint.*` key). */
const AGENT_PROFILE_KEY = /^[a-z][a-z0-9_]{0,39}$/;

const category = z.string().regex(/^[a-z][a-z0-9_]{0,39}$/, 'lower snake case, 1-40 chars');
const limit = z.number().int().min(1).max(100);

/**
 * Create the memory tools for a registry.
 *
 * @example
 * ```ts
 * const tools = createToolRegistry({ tools: createMemoryTools({ store: memory }), storage });
 * await tools.dispatch('memory_write', { category: 'preference', content: 'always use 0.5% slippage' });
 * ```
 */
export function createMemoryTools(options: MemoryToolsOptions): ToolEntry[] {
  if (typeof options !== 'object' || options === null || (options.store === undefined && typeof options.resolveStore !== 'function')) {
    throw new MinaraError('CONFIG_INVALID', 'createMemoryTools: pass { store } or { resolveStore(ctx) }');
  }
  const storeFor = async (ctx: ToolExecutionContext): Promise<MemoryStore> => {
    if (options.store !== undefined) return options.store;
    const store = await options.resolveStore(ctx);
    if (store === undefined) {
      throw new MinaraError('MEMORY_INVALID', 'No memory store for this call: the call context has no tenant (userId)');
    }
    return store;
  };
  const brief = (h: { id: number; category: string; content: string; score: number; updatedAt: string; source?: string | undefined }) => ({
    id: h.id,
    category: h.category,
    content: h.content,
    score: Math.round(h.score * 1e6) / 1e6,
    updatedAt: h.updatedAt,
    ...(h.source === undefined ? {} : { source: h.source }),
  });

  // What waits for review (written after untrusted content) never comes back to the model.
  const notHeld = (h: { source?: string | undefined }) => h.source !== PROPOSED_MEMORY_SOURCE;

  return [
    defineTool({
      name: 'memory_write',
      toolSet: 'memory',
      description:
        'Save a durable memory about the user for future sessions (preference, observation, trade_outcome, lesson, alert, reference). ' +
        'Use category "fact" for a durable fact about the user; it is deduplicated in the background. Written memories appear in the next session, not this one.',
      inputSchema: z.object({
        category,
        content: z.string().min(1).max(8000),
        metadata: z.record(z.string(), z.unknown()).nullish(),
      }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) => {
        if (ctx.call.source === 'mcp' && options.mcpHostLearning !== true) {
          throw new MinaraError('UNTRUSTED_CONTENT', 'memory_write: an MCP host cannot write memories that shape future prompts (the operator allows it with untrustedContent.mcpHostLearning)', { retryable: false });
        }
        const store = await storeFor(ctx);
        // The runtime decides the source, never the model (memory.md): `user_explicit` when the person's own words in
        // this turn asked to remember, else `agent_recorded`; a `source` the model put in metadata is dropped.
        const { source: _claimed, ...metadata } = input.metadata ?? {};
        // Written after reading untrusted content: kept out of every prompt (and out of memory_search / memory_read)
        // until an operator accepts it. A fact is held under its own category so the fact layer never consolidates it.
        const provenance = callProvenance(ctx.call);
        if (provenance) {
          const category = input.category === 'fact' ? PROPOSED_FACT_CATEGORY : input.category;
          const held = { ...metadata, review: 'proposed', untrustedSources: provenance.untrustedSources, ...(category !== input.category ? { proposedCategory: input.category } : {}) };
          const { id } = await store.write({ category, content: input.content, metadata: held, source: PROPOSED_MEMORY_SOURCE });
          return { id, category: input.category, routedTo: 'review', note: `Proposed (${provenance.summary}); it reaches no prompt until an operator accepts it.` };
        }
        const source = ctx.call.state.get(USER_ASKED_TO_REMEMBER) === true ? 'user_explicit' : 'agent_recorded';
        const { id } = await store.write({ category: input.category, content: input.content, source, ...(Object.keys(metadata).length === 0 ? {} : { metadata }) });
        return { id, category: input.category, routedTo: input.category === 'fact' ? 'fact_layer' : 'memories' };
      },
    }),
    defineTool({
      name: 'memory_search',
      toolSet: 'memory',
      description:
        'Search saved memories, best match first. Syntax: words (all must match), "exact phrase", a OR b, category:preference, prefix slip*. Malformed queries are handled.',
      inputSchema: z.object({ query: z.string().max(1000), limit: limit.nullish(), category: category.nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      execute: async (input, ctx) => {
        const store = await storeFor(ctx);
        const info = await store.searchWithInfo(input.query, { limit: input.limit ?? 5, ...(input.category == null ? {} : { category: input.category }) });
        return { results: info.hits.filter(notHeld).map(brief), path: info.path };
      },
    }),
    defineTool({
      name: 'memory_read',
      toolSet: 'memory',
      description: 'List saved memories newest first, optionally of one category (for "everything about my preferences").',
      inputSchema: z.object({ category: category.nullish(), limit: limit.nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      execute: async (input, ctx) => {
        const store = await storeFor(ctx);
        const hits = await store.read({ limit: input.limit ?? 20, ...(input.category == null ? {} : { category: input.category }) });
        return { results: hits.filter(notHeld).map(brief) };
      },
    }),
    defineTool({
      name: 'memory_profile_set',
      toolSet: 'memory',
      description:
        'Record a stable fact about the user as a profile key (risk_tolerance, preferred_chains, language, base_currency, …) that every later prompt shows. ' +
        'A value the user set themselves is never replaced: the result says so (applied: false).',
      inputSchema: z.object({
        key: z.string().regex(AGENT_PROFILE_KEY, 'lower snake case, 1-40 chars, e.g. risk_tolerance'),
        value: z.string().min(1).max(500),
      }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) => {
        // Profile keys reach every later prompt: not from an MCP host (unless the operator allows it), and not after the
        // conversation read untrusted content (there is no review queue for a key; the agent can record it in a clean turn).
        if (ctx.call.source === 'mcp' && options.mcpHostLearning !== true) {
          throw new MinaraError('UNTRUSTED_CONTENT', 'memory_profile_set: an MCP host cannot write profile keys that shape future prompts (the operator allows it with untrustedContent.mcpHostLearning)', { retryable: false });
        }
        const provenance = callProvenance(ctx.call);
        if (provenance) {
          return { key: input.key, applied: false, reason: `Not recorded: the conversation read untrusted content (${provenance.summary}); a profile key reaches every later prompt, so ask the user to set it.` };
        }
        const store = await storeFor(ctx);
        const entry = await store.profile.set(input.key, input.value, { setBy: 'agent' });
        const applied = entry.setBy === 'agent' && entry.value === input.value.trim();
        return applied
          ? { key: entry.key, value: entry.value, applied: true }
          : { key: entry.key, value: entry.value, applied: false, reason: 'The user set this key themselves; their value stays.' };
      },
    }),
  ];
}
