import { z } from 'zod';
import { defineTool, PermissionTier, type ToolEntry } from '@minara/agent';

/** A small set of tools across every tier, used by the tool-layer tests. */
export function sampleTools(log: string[] = []): ToolEntry[] {
  return [
    defineTool({
      name: 'get_price',
      toolSet: 'read',
      description: 'Spot price',
      inputSchema: z.object({ symbol: z.string().min(1), currency: z.string().optional() }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: ({ symbol, currency }) => {
        log.push(`get_price:${symbol}`);
        return { symbol, currency: currency ?? 'USD', price: 100 };
      },
    }),
    defineTool({
      name: 'analyze_token',
      toolSet: 'analysis',
      description: 'Analysis',
      inputSchema: z.object({ symbol: z.string() }),
      permissionTier: PermissionTier.READ_ONLY,
      isAnalysis: true,
      execute: ({ symbol }) => ({ symbol, verdict: 'hold' }),
    }),
    defineTool({
      name: 'write_note',
      toolSet: 'file',
      description: 'Write a note',
      inputSchema: z.object({ text: z.string() }),
      permissionTier: PermissionTier.CONFIRM_ONCE,
      execute: ({ text }) => {
        log.push(`write_note:${text}`);
        return { written: text.length };
      },
    }),
    defineTool({
      name: 'swap_tokens',
      toolSet: 'trade',
      description: 'Swap',
      inputSchema: z.object({ from: z.string(), to: z.string(), amountUsd: z.number().positive() }),
      permissionTier: PermissionTier.CONFIRM_ONCE,
      isFundMoving: true,
      tierFor: ({ amountUsd }) => (amountUsd > 1000 ? PermissionTier.ALWAYS_CONFIRM : PermissionTier.CONFIRM_ONCE),
      orderFacts: ({ to, amountUsd }) => ({ notionalUsd: amountUsd, asset: to, side: 'swap' }),
      preview: ({ from, to, amountUsd }) => ({ preview: true, from, to, amountUsd, feeUsd: 1 }),
      execute: ({ from, to, amountUsd }) => {
        log.push(`swap:${from}->${to}:${amountUsd}`);
        return { filled: true, from, to, amountUsd };
      },
    }),
    defineTool({
      name: 'open_perps_position',
      toolSet: 'perps',
      description: 'Perps',
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
      execute: ({ address, amount }) => {
        log.push(`withdraw:${address}:${amount}`);
        return { sent: true };
      },
    }),
  ];
}

/** Parse a dispatch result. */
export const parse = (json: string) => JSON.parse(json) as { ok: boolean; data?: unknown; error?: string; code?: string; retryable?: boolean; approval?: { approvalId: string } };
