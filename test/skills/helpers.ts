import { z } from 'zod';
import { mulberry32 } from '../../src/util/prng';
import { createToolRegistry, defineTool, PermissionTier, type ToolEntry, type ToolRegistry } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';

/** A READ_ONLY tool that records its calls. */
export function readTool(name: string, toolSet = 'read', log: string[] = []): ToolEntry {
  return defineTool({
    name,
    toolSet,
    description: `${name} (test)`,
    inputSchema: z.object({ symbol: z.string().nullish() }),
    permissionTier: PermissionTier.READ_ONLY,
    execute: ({ symbol }) => {
      log.push(`${name}:${symbol ?? ''}`);
      return { name, symbol: symbol ?? null };
    },
  });
}

/** Tools used across the skill tests; `log` records every handler that actually ran. */
export function financeTools(log: string[] = []): ToolEntry[] {
  return [
    readTool('get_price', 'read', log),
    readTool('search_tokens', 'read', log),
    readTool('get_trending', 'read', log),
    readTool('memory_search', 'memory', log),
    readTool('memory_write', 'memory', log),
    readTool('web_search', 'web', log),
    readTool('research_report', 'analysis', log),
    defineTool({
      name: 'swap_tokens',
      toolSet: 'trade',
      description: 'Swap tokens',
      inputSchema: z.object({ from: z.string(), to: z.string(), amountUsd: z.number().positive() }),
      permissionTier: PermissionTier.CONFIRM_ONCE,
      isFundMoving: true,
      orderFacts: ({ to, amountUsd }) => ({ notionalUsd: amountUsd, asset: to, side: 'swap' }),
      preview: ({ from, to, amountUsd }) => ({ preview: true, from, to, amountUsd }),
      execute: ({ from, to, amountUsd }) => {
        log.push(`swap:${from}->${to}:${amountUsd}`);
        return { filled: true };
      },
    }),
    defineTool({
      name: 'open_perps_position',
      toolSet: 'perps',
      description: 'Open a perps position',
      inputSchema: z.object({ symbol: z.string(), sizeUsd: z.number() }),
      permissionTier: PermissionTier.ALWAYS_CONFIRM,
      execute: ({ symbol, sizeUsd }) => {
        log.push(`perps:${symbol}:${sizeUsd}`);
        return { opened: true };
      },
    }),
    defineTool({
      name: 'withdraw',
      toolSet: 'transfer',
      description: 'Withdraw to an external address',
      inputSchema: z.object({ address: z.string(), amount: z.number() }),
      permissionTier: PermissionTier.MANUAL_ONLY,
      isFundMoving: true,
      orderFacts: ({ address, amount }) => ({ notionalUsd: amount, asset: 'USDC', side: 'withdraw', destination: address }),
      preview: ({ address, amount }) => ({ preview: true, address, amount }),
      execute: ({ address, amount }) => {
        log.push(`withdraw:${address}:${amount}`);
        return { sent: true };
      },
    }),
  ];
}

export function toolRegistry(tools: readonly ToolEntry[] = financeTools()): ToolRegistry {
  return createToolRegistry({ tools, storage: createInMemoryStorage() });
}

/** Deterministic PRNG (mulberry32) for property tests. */
export const rng = mulberry32;

export function shuffle<T>(list: readonly T[], next: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

export function parse(json: string): { ok: boolean; data?: unknown; error?: string; code?: string; retryable?: boolean } {
  return JSON.parse(json) as { ok: boolean; data?: unknown; error?: string; code?: string };
}
