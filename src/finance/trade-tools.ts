import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolExecutionContext } from '../tools/types';
import { clientOrderId, type FinanceDeps } from './context';
import { spotOrderFor, packOrderFacts } from './order-facts';
import { buildPreview } from './preview';
import { buyInput, sellInput, swapInput } from './schemas';
import type { OrderResult } from './types';

/** The tier of a spot trade of `sizeUsd`: CONFIRM_ONCE up to `confirmOnceMaxUsd`, ALWAYS_CONFIRM above. */
export function spotTierFor(sizeUsd: number | null | undefined, confirmOnceMaxUsd: number): PermissionTier {
  return sizeUsd != null && sizeUsd > confirmOnceMaxUsd ? PermissionTier.ALWAYS_CONFIRM : PermissionTier.CONFIRM_ONCE;
}

/**
 * What an order returns to the model. A `duplicate` (the provider already had this client order id: the
 * same session, call and arguments were executed before) is reported as such, never as a new execution; a `queued`
 * order says its fill is an estimate.
 */
export function executed(r: OrderResult): Record<string, unknown> {
  const base = { orderId: r.orderId, status: r.status, fill: r.fill, source: r.source, simulated: r.simulated, at: r.at, ...(r.shadow ? { shadow: true } : {}) };
  if (r.status === 'duplicate') {
    return { executed: false, duplicate: true, ...base, note: 'This exact call was already executed earlier; nothing new was placed. The fill shown is the original one.' };
  }
  if (r.status === 'queued') {
    return { executed: true, queued: true, ...base, note: 'The order was accepted and fills later (in a backtest: at the next bar\'s open). The fill shown is an estimate at the current price, not the fill.' };
  }
  return { executed: true, ...base };
}

/**
 * Spot trading tools (tool set `trade`, fund-moving): `swap_tokens`, `buy_token`, `sell_token`.
 * CONFIRM_ONCE up to `limits.confirmOnceMaxUsd`, ALWAYS_CONFIRM above it (from `amountUsd` here; the
 * tier hook raises calls sized in units once they are priced). Without `confirm: true` they preview.
 */
export function createTradeTools(deps: FinanceDeps): ToolEntry[] {
  const cap = deps.configLimits.confirmOnceMaxUsd;
  const execSpot = async (tool: 'swap_tokens' | 'buy_token' | 'sell_token', input: unknown, ctx: ToolExecutionContext) => {
    const order = await spotOrderFor(deps, tool, input);
    return executed(await deps.trading.executeSpot({ ...order, clientOrderId: clientOrderId(tool, ctx, input) }, { signal: ctx.signal }));
  };
  return [
    defineTool({
      name: 'swap_tokens',
      toolSet: 'trade',
      description: 'Swap one token for another (preview first; confirm: true executes)',
      inputSchema: swapInput,
      permissionTier: PermissionTier.CONFIRM_ONCE,
      isFundMoving: true,
      orderFacts: packOrderFacts(deps, 'swap_tokens'),
      timeoutMs: 30_000,
      tierFor: (i) => spotTierFor(i.amountUsd, cap),
      preview: (i, ctx) => buildPreview(deps, 'swap_tokens', i, ctx),
      execute: (i, ctx) => execSpot('swap_tokens', i, ctx),
    }),
    defineTool({
      name: 'buy_token',
      toolSet: 'trade',
      description: 'Buy a token with USDC for a USD amount (preview first; confirm: true executes)',
      inputSchema: buyInput,
      permissionTier: PermissionTier.CONFIRM_ONCE,
      isFundMoving: true,
      orderFacts: packOrderFacts(deps, 'buy_token'),
      timeoutMs: 30_000,
      tierFor: (i) => spotTierFor(i.amountUsd, cap),
      preview: (i, ctx) => buildPreview(deps, 'buy_token', i, ctx),
      execute: (i, ctx) => execSpot('buy_token', i, ctx),
    }),
    defineTool({
      name: 'sell_token',
      toolSet: 'trade',
      description: 'Sell a token for USDC by units, USD amount or fraction (preview first)',
      inputSchema: sellInput,
      permissionTier: PermissionTier.CONFIRM_ONCE,
      isFundMoving: true,
      orderFacts: packOrderFacts(deps, 'sell_token'),
      timeoutMs: 30_000,
      tierFor: (i) => spotTierFor(i.amountUsd, cap),
      preview: (i, ctx) => buildPreview(deps, 'sell_token', i, ctx),
      execute: (i, ctx) => execSpot('sell_token', i, ctx),
    }),
  ];
}
