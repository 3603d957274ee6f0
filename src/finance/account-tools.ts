import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import { clientOrderId, type FinanceDeps, usd } from './context';
import { intentSchema } from './schemas';
import { executed } from './trade-tools';

const sweepInput = z.object({
  subAccountId: z.string().trim().min(1).max(64).describe('The sub-account to empty (from list_perps_sub_accounts)'),
  asset: z.string().trim().min(1).max(20).nullish().describe('Asset to move (default USDC)'),
  amount: z.number().finite().positive().nullish().describe('Units to move; everything of the asset when absent'),
  intent: intentSchema,
});

/**
 * Account tools of the finance pack:
 *
 * - `get_account_info` (read, READ_ONLY): the account (id, provider, base currency, simulated or live), its value
 *   and exposure, the limits in force, the emergency-stop state and the perps sub-accounts.
 * - `list_perps_sub_accounts` (read, READ_ONLY; when the provider has sub-accounts): each sub-wallet's balances
 *   and USD value, the main one marked.
 * - `sweep_perps_sub_account` (perps, ALWAYS_CONFIRM, fund-moving; when the provider can sweep): move a
 *   sub-account's funds into the main account. Without `confirm: true` it previews; its facts (`transfer` of the
 *   asset to the main account) go through the safety stack, so it states an intent, meets the risk caps, and never
 *   runs from an autonomous source.
 */
export function createAccountTools(deps: FinanceDeps): ToolEntry[] {
  const { trading } = deps;
  const tools: ToolEntry[] = [
    defineTool({
      name: 'get_account_info',
      toolSet: 'read',
      description: 'The trading account: id, provider, live or simulated, value, exposure, the risk limits in force, the emergency stop, perps sub-accounts',
      inputSchema: z.object({}),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      timeoutMs: 20_000,
      execute: async (_i, ctx) => {
        const signal = { signal: ctx.signal };
        const [account, portfolio, limits, stop, subs] = await Promise.all([
          trading.getAccount(signal),
          trading.getPortfolio(signal),
          deps.limits(),
          deps.emergencyStop().status(),
          trading.listPerpSubAccounts ? trading.listPerpSubAccounts(signal).catch(() => undefined) : Promise.resolve(undefined),
        ]);
        return {
          accountId: account.accountId, provider: trading.name, baseCurrency: account.baseCurrency, simulated: account.simulated, source: account.source,
          ...(account.createdAt ? { createdAt: account.createdAt } : {}),
          totalValueUsd: usd(portfolio.totalValueUsd), exposureUsd: usd(portfolio.exposureUsd), holdings: portfolio.holdings.length, perpPositions: portfolio.positions.length,
          limits,
          emergencyStop: stop.engaged ? { engaged: true, ...(stop.reason ? { reason: stop.reason } : {}) } : { engaged: false },
          ...(subs ? { perpsSubAccounts: subs.map((s) => ({ id: s.id, ...(s.main ? { main: true } : {}), ...(s.valueUsd !== undefined ? { valueUsd: usd(s.valueUsd) } : {}) })) } : {}),
        };
      },
    }),
  ];
  if (trading.listPerpSubAccounts) {
    const list = trading.listPerpSubAccounts.bind(trading);
    tools.push(
      defineTool({
        name: 'list_perps_sub_accounts',
        toolSet: 'read',
        description: 'Perps sub-accounts (sub-wallets) with their balances and USD value; the main account is marked',
        inputSchema: z.object({}),
        permissionTier: PermissionTier.READ_ONLY,
        sideEffects: false,
        timeoutMs: 20_000,
        execute: async (_i, ctx) => ({
          subAccounts: (await list({ signal: ctx.signal })).map((s) => ({ ...s, ...(s.valueUsd !== undefined ? { valueUsd: usd(s.valueUsd) } : {}) })),
          source: trading.name,
          simulated: trading.simulated,
        }),
      }),
    );
  }
  if (trading.sweepPerpSubAccount && trading.quotePerpSweep) {
    const quote = trading.quotePerpSweep.bind(trading);
    const sweep = trading.sweepPerpSubAccount.bind(trading);
    const request = (i: z.output<typeof sweepInput>) => ({ subAccountId: i.subAccountId, asset: (i.asset ?? 'USDC').toUpperCase(), ...(i.amount != null ? { amount: i.amount } : {}) });
    tools.push(
      defineTool({
        name: 'sweep_perps_sub_account',
        toolSet: 'perps',
        description: 'Move a perps sub-account\'s funds into the main account (preview first; confirm: true executes; intent e.g. "transfer 500 USDC from perps-1 to main")',
        inputSchema: sweepInput,
        permissionTier: PermissionTier.ALWAYS_CONFIRM,
        isFundMoving: true,
        timeoutMs: 30_000,
        orderFacts: async (i) => {
          const q = await quote(request(i));
          return { notionalUsd: q.valueUsd, asset: q.asset, side: 'transfer', destination: `main account ${q.to}`, quantity: q.amount };
        },
        preview: async (i, ctx) => {
          const q = await quote(request(i), { signal: ctx.signal });
          return {
            preview: true, action: 'sweep', from: q.subAccountId, to: q.to, asset: q.asset, amount: q.amount, valueUsd: usd(q.valueUsd), feeUsd: q.feeUsd,
            source: q.source, simulated: q.simulated, note: 'Nothing moved yet. Call again with the same arguments and confirm: true after the user agrees.',
          };
        },
        execute: async (i, ctx) => {
          if (!i.subAccountId) throw new MinaraError('INVALID_ARGUMENT', 'subAccountId: required');
          return executed(await sweep({ ...request(i), clientOrderId: clientOrderId('sweep_perps_sub_account', ctx, i) }, { signal: ctx.signal }));
        },
      }),
    );
  }
  return tools;
}
