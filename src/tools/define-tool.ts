import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { isPermissionTier, PermissionTier } from '../safety/permission-tier';
import type { ToolDefinition, ToolEntry } from './types';

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
/** A tool-set name, optionally namespaced (`mcp:github`): lowercase letters, digits, `_` and `-`. */
const TOOL_SET = /^[a-z][a-z0-9_-]{0,39}(?::[a-z0-9][a-z0-9_-]{0,47})?$/;

/** Default handler timeout in milliseconds. */
export const DEFAULT_TOOL_TIMEOUT_MS = 30_000;

/**
 * Define a tool. The handler's input type is inferred from `inputSchema`; the result is a type-erased
 * {@link ToolEntry}, so a registry of many tools stays cheap for the type checker.
 *
 * Fund-moving tools (`isFundMoving: true`) must give a `preview` and `orderFacts`; their schema gains an
 * optional `confirm` boolean, and without `confirm: true` the registry runs `preview` instead of `execute`.
 * `orderFacts` states what a call does (notional USD, asset, side, destination); the registry computes it
 * once per call and every check (grants, the finance safety stack, previews) judges those same facts.
 *
 * @throws MinaraError `TOOL_DEFINITION_INVALID` naming the bad field.
 * @example
 * ```ts
 * const getPrice = defineTool({
 *   name: 'get_price',
 *   toolSet: 'read',
 *   description: 'Spot price of a token in USD',
 *   inputSchema: z.object({ symbol: z.string().min(1) }),
 *   permissionTier: PermissionTier.READ_ONLY,
 *   execute: async ({ symbol }) => ({ symbol, priceUsd: 97_000 }),
 * });
 * ```
 */
export function defineTool<TSchema extends z.ZodType>(definition: ToolDefinition<TSchema>): ToolEntry {
  const d = definition as ToolDefinition;
  const fail = (field: string, expected: string): never => {
    const label = typeof d?.name === 'string' ? `tool "${d.name}"` : 'tool';
    throw new MinaraError('TOOL_DEFINITION_INVALID', `Invalid ${label}: field "${field}" ${expected}.`);
  };
  if (typeof d !== 'object' || d === null) fail('(definition)', 'must be an object');
  if (typeof d.name !== 'string' || !NAME.test(d.name)) fail('name', 'must be snake_case: a lowercase letter, then letters, digits or _ (≤ 64 chars)');
  if (typeof d.toolSet !== 'string' || !TOOL_SET.test(d.toolSet)) fail('toolSet', 'must be a lowercase tool-set name such as "read" or "trade"');
  if (typeof d.description !== 'string' || d.description.trim() === '') fail('description', 'must be a non-empty string');
  if (!(d.inputSchema instanceof z.ZodType)) fail('inputSchema', 'must be a zod schema');
  if (!isPermissionTier(d.permissionTier)) fail('permissionTier', 'must be one of PermissionTier.READ_ONLY (1), CONFIRM_ONCE (2), ALWAYS_CONFIRM (3), MANUAL_ONLY (4)');
  if (typeof d.execute !== 'function') fail('execute', 'must be a function');
  if (d.timeoutMs !== undefined && !(Number.isFinite(d.timeoutMs) && d.timeoutMs > 0)) fail('timeoutMs', 'must be a positive number of milliseconds');
  if (d.checkFn !== undefined && typeof d.checkFn !== 'function') fail('checkFn', 'must be a function');
  if (d.tierFor !== undefined && typeof d.tierFor !== 'function') fail('tierFor', 'must be a function');
  if (d.sideEffects !== undefined && typeof d.sideEffects !== 'boolean') fail('sideEffects', 'must be a boolean (false declares the tool side-effect free)');
  if (d.sideEffects === false && (d.isFundMoving || d.permissionTier !== PermissionTier.READ_ONLY)) fail('sideEffects', 'can be false only on a READ_ONLY tool that moves no funds');
  if (d.trust !== undefined && d.trust !== 'trusted' && d.trust !== 'untrusted') fail('trust', 'must be "trusted" or "untrusted"');
  if (d.source !== undefined && typeof d.source !== 'function') fail('source', 'must be a function (input, result) => string | string[]');

  let inputSchema: z.ZodType = d.inputSchema;
  if (d.isFundMoving) {
    if (typeof d.preview !== 'function') fail('preview', 'is required for a fund-moving tool (without confirm: true it returns a preview and moves nothing)');
    if (typeof d.orderFacts !== 'function') fail('orderFacts', 'is required for a fund-moving tool: a function returning { notionalUsd, asset, side, destination? } that grants and safety checks judge');
    if (!(inputSchema instanceof z.ZodObject)) fail('inputSchema', 'must be a z.object(...) for a fund-moving tool (it carries the confirm flag)');
    const obj = inputSchema as z.ZodObject;
    if (!('confirm' in obj.shape)) inputSchema = obj.extend({ confirm: z.boolean().nullish() });
  }

  return Object.freeze({
    name: d.name,
    toolSet: d.toolSet,
    description: d.description,
    inputSchema,
    permissionTier: d.permissionTier,
    isFundMoving: d.isFundMoving === true,
    isAnalysis: d.isAnalysis === true,
    ...(d.sideEffects === false ? { sideEffects: false } : {}),
    emergencyStopControl: d.emergencyStopControl === true,
    checkFn: d.checkFn,
    timeoutMs: d.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    tierFor: d.tierFor as ToolEntry['tierFor'],
    preview: d.preview as ToolEntry['preview'],
    orderFacts: d.orderFacts as ToolEntry['orderFacts'],
    execute: d.execute as ToolEntry['execute'],
    trust: d.trust ?? 'trusted',
    ...(d.source !== undefined ? { source: d.source as ToolEntry['source'] } : {}),
  });
}

/** A tool factory: given the environment, the tools it can offer (none when its keys are missing). */
export type ToolFactory = (env: Readonly<Record<string, string | undefined>>) => ToolEntry[];

/**
 * Wrap a tool factory so a missing env key yields `[]` and a throwing factory never breaks boot.
 *
 * @example
 * ```ts
 * const minaraTools = defineToolFactory({
 *   requiresEnv: ['MINARA_API_KEY'],
 *   create: (env) => [makeQuoteTool(env.MINARA_API_KEY!)],
 * });
 * registry.register(minaraTools(process.env));
 * ```
 */
export function defineToolFactory(options: {
  requiresEnv?: readonly string[];
  create: ToolFactory;
  onError?: (error: unknown) => void;
}): ToolFactory {
  const { requiresEnv = [], create, onError } = options;
  return (env) => {
    if (requiresEnv.some((key) => !env[key])) return [];
    try {
      return create(env);
    } catch (error) {
      onError?.(error);
      return [];
    }
  };
}
