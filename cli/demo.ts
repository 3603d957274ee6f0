import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { createToolCallContext, createToolRegistry, defineTool, PermissionTier, type ToolEnvelope } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';

/**
 * An offline walk through the tool layer on a throwaway SQLite file: a price read, a trade preview,
 * a confirmation request that a "second process" approves, the execution, a replay refused, a cron
 * withdrawal refused, and the audit trail.
 */
export async function runDemo(io: { write: (s: string) => void }): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-demo-'));
  const dbPath = path.join(dir, 'minara.db');
  const prices: Record<string, number> = { BTC: 97_250, ETH: 3_410, USDC: 1 };
  const fills: string[] = [];

  const tools = [
    defineTool({
      name: 'get_price',
      toolSet: 'read',
      description: 'Spot price of a token in USD (simulated)',
      inputSchema: z.object({ symbol: z.string().min(1) }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: ({ symbol }) => ({ symbol, priceUsd: prices[symbol.toUpperCase()] ?? null, simulated: true }),
    }),
    defineTool({
      name: 'buy_token',
      toolSet: 'trade',
      description: 'Buy a token with USDC (paper)',
      inputSchema: z.object({ symbol: z.string(), amountUsd: z.number().positive() }),
      permissionTier: PermissionTier.CONFIRM_ONCE,
      isFundMoving: true,
      tierFor: ({ amountUsd }) => (amountUsd > 1_000 ? PermissionTier.ALWAYS_CONFIRM : PermissionTier.CONFIRM_ONCE),
      preview: ({ symbol, amountUsd }) => ({ preview: true, symbol, amountUsd, expectedQty: amountUsd / (prices[symbol] ?? 1), feeUsd: 0.3, simulated: true }),
      execute: ({ symbol, amountUsd }) => {
        fills.push(`${symbol}:${amountUsd}`);
        return { filled: true, symbol, qty: amountUsd / (prices[symbol] ?? 1), simulated: true };
      },
    }),
    defineTool({
      name: 'transfer_token',
      toolSet: 'transfer',
      description: 'Send tokens to an external address',
      inputSchema: z.object({ symbol: z.string(), amount: z.number().positive(), to: z.string() }),
      permissionTier: PermissionTier.MANUAL_ONLY,
      execute: () => ({ sent: true }),
    }),
  ];

  const show = (label: string, e: ToolEnvelope) => {
    io.write(`  ${label}\n    → ${JSON.stringify(e)}\n`);
  };

  try {
    io.write(`minara demo — offline, on a throwaway database (${dbPath})\n\n`);
    const storage = createSqliteStorage({ path: dbPath });
    const registry = createToolRegistry({ tools, storage });
    const session = createToolCallContext({ sessionId: 'demo-session', source: 'user' });
    const call = async (name: string, args: unknown, approvalId?: string) =>
      (await registry.dispatchDetailed(name, args, { context: session, ...(approvalId ? { approvalId } : {}) })).envelope;

    io.write('1. A read-only tool runs at once:\n');
    show('get_price { symbol: "BTC" }', await call('get_price', { symbol: 'BTC' }));

    io.write('\n2. A fund-moving tool without confirm: true only previews:\n');
    show('buy_token { symbol: "ETH", amountUsd: 250 }', await call('buy_token', { symbol: 'ETH', amountUsd: 250 }));

    io.write('\n3. With confirm: true it stops for a persisted, signed approval:\n');
    const request = await call('buy_token', { symbol: 'ETH', amountUsd: 250, confirm: true });
    show('buy_token { …, confirm: true }', request);
    const approvalId = !request.ok && request.approval ? request.approval.approvalId : undefined;
    if (!approvalId) throw new Error('expected an approval request');
    await storage.close();

    io.write('\n4. After a restart (a fresh connection to the same file), the approval is decided and the call executes once:\n');
    const storage2 = createSqliteStorage({ path: dbPath });
    const registry2 = createToolRegistry({ tools, storage: storage2 });
    await registry2.approvals.decide(approvalId, { approved: true, reason: 'demo operator' });
    const resumed = createToolCallContext({ sessionId: 'demo-session' });
    show(`approve ${approvalId} and execute`, (await registry2.dispatchDetailed('buy_token', { symbol: 'ETH', amountUsd: 250, confirm: true }, { context: resumed, approvalId })).envelope);
    show('replay the same approval', (await registry2.dispatchDetailed('buy_token', { symbol: 'ETH', amountUsd: 250, confirm: true }, { context: resumed, approvalId })).envelope);

    io.write('\n5. A cron turn cannot send funds out, whatever it is told:\n');
    const cron = createToolCallContext({ sessionId: 'cron-btc-alert', source: 'cron', allowedToolSets: ['read', 'memory', 'web', 'transfer'] });
    show('transfer_token from cron', (await registry2.dispatchDetailed('transfer_token', { symbol: 'USDC', amount: 100, to: '0x000000000000000000000000000000000000dEaD' }, { context: cron })).envelope);

    io.write('\n6. The audit log has one row per dispatch:\n');
    for (const row of (await registry2.queryAudit({ limit: 20 })).reverse()) {
      io.write(`    ${row.toolName.padEnd(15)} ${row.decision.padEnd(18)} tier ${row.tier}  ${row.source.padEnd(5)} ${row.code ?? ''}\n`);
    }
    await storage2.close();
    io.write(`\nFilled orders: ${fills.join(', ') || 'none'} (exactly one, although the approval was presented twice).\n`);
    return fills.length === 1 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
