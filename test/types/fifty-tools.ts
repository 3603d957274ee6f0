// Type-performance fixture (pitfall: "type instantiation is excessively deep" with many zod tools).
// scripts/check-type-budget.mjs type-checks this file alone and fails above a budget of instantiations.
import { z } from 'zod';
import { createToolRegistry, defineTool, PermissionTier, toAISDKTools, type ToolEntry } from '../../src/index';

const schema = (i: number) =>
  z.object({
    symbol: z.string().min(1),
    amountUsd: z.number().positive().nullish(),
    side: z.enum(['buy', 'sell']).optional(),
    legs: z.array(z.object({ venue: z.string(), weight: z.number().min(0).max(1) })).max(8).nullish(),
    meta: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).optional(),
    index: z.literal(i).optional(),
  });

export const tools: ToolEntry[] = Array.from({ length: 50 }, (_, i) =>
  defineTool({
    name: `tool_${i}`,
    toolSet: i % 2 ? 'read' : 'trade',
    description: `Tool ${i}`,
    inputSchema: schema(i),
    permissionTier: PermissionTier.READ_ONLY,
    execute: ({ symbol, amountUsd, legs }) => ({ symbol, amountUsd: amountUsd ?? 0, legs: legs?.length ?? 0 }),
  }),
);

export const registry = createToolRegistry({ tools, audit: false });
export const aiTools = toAISDKTools(registry, tools.map((t) => t.name));
