import { MinaraError } from '../errors/minara-error';
import type { OrderFactsContext, OrderSide, ToolCallContext, ToolOrderFacts } from '../tools/types';
import type { FinanceDeps } from './context';
import type { BuyInput, PerpCloseInput, PerpOpenInput, SellInput, SwapInput, TransferInput, WithdrawInput } from './schemas';
import type { PerpQuote, SpotQuote, SpotOrderRequest, TransferQuote } from './types';

/** A token a call refers to, as the model gave it. */
export interface TokenRef {
  readonly symbol: string;
  readonly address?: string | undefined;
  readonly chain?: string | undefined;
  /** The call acquires this token (buy side / receive side). */
  readonly acquired: boolean;
}

/** What a fund-moving call would do, computed once per call and shared by the safety hooks. */
export interface OrderFacts {
  readonly tool: string;
  readonly kind: 'spot' | 'perp_open' | 'perp_close' | 'transfer' | 'withdraw';
  readonly side: OrderSide;
  /** The asset the call is about (the non-stable leg, the perp market, the asset sent). */
  readonly asset: string;
  /** Every token referenced. */
  readonly tokens: readonly TokenRef[];
  /** Notional in USD. */
  readonly sizeUsd: number;
  /** Units of `asset` involved, when known. */
  readonly quantity?: number | undefined;
  /** True when the call adds market exposure (buying a non-stable asset, opening a perp). */
  readonly increasesExposure: boolean;
  readonly leverage?: number | undefined;
  /** Expected slippage of the order, bps. */
  readonly expectedSlippageBps?: number | undefined;
  /** Slippage cap the call asked for, bps. */
  readonly requestedSlippageBps?: number | undefined;
  /** External destination (transfers, withdrawals). */
  readonly destination?: string | undefined;
  /** The provider's quote (the pack's own tools; absent for a host tool, which states its facts itself). */
  readonly quote?: SpotQuote | PerpQuote | TransferQuote | undefined;
}

/** Tools of the pack that move funds, and how to describe each. */
export const FUND_MOVING_TOOLS = ['swap_tokens', 'buy_token', 'sell_token', 'open_perps_position', 'close_perps_position', 'transfer_token', 'withdraw_funds'] as const;
export type FundMovingToolName = (typeof FUND_MOVING_TOOLS)[number];

/** True for a fund-moving tool of this pack. */
export function isPackFundMoving(name: string): name is FundMovingToolName {
  return (FUND_MOVING_TOOLS as readonly string[]).includes(name);
}

const up = (s: string) => s.trim().toUpperCase();
const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** The spot order a swap/buy/sell call places. */
export async function spotOrderFor(deps: FinanceDeps, tool: string, input: unknown): Promise<SpotOrderRequest> {
  if (tool === 'buy_token') {
    const i = input as BuyInput;
    return { from: up(i.payWith ?? 'USDC'), to: up(i.symbol), amountUsd: i.amountUsd, ...slip(i.slippageBps) };
  }
  if (tool === 'sell_token') {
    const i = input as SellInput;
    const symbol = up(i.symbol);
    let amount = opt(i.amount);
    if (amount === undefined && i.fraction != null) {
      const p = await deps.trading.getPortfolio();
      const held = p.holdings.find((h) => h.asset === symbol)?.amount ?? 0;
      if (!(held > 0)) throw new MinaraError('INVALID_ARGUMENT', `You hold no ${symbol} to sell.`);
      amount = held * i.fraction;
    }
    if (amount === undefined && i.amountUsd == null) throw new MinaraError('INVALID_ARGUMENT', 'sell_token needs amount, amountUsd or fraction.');
    return { from: symbol, to: up(i.receive ?? 'USDC'), ...(amount !== undefined ? { amount } : { amountUsd: i.amountUsd! }), ...slip(i.slippageBps) };
  }
  const i = input as SwapInput;
  if (i.amount == null && i.amountUsd == null) throw new MinaraError('INVALID_ARGUMENT', 'swap_tokens needs amount or amountUsd.');
  return { from: up(i.from), to: up(i.to), ...(i.amount != null ? { amount: i.amount } : { amountUsd: i.amountUsd! }), ...slip(i.slippageBps) };
}

const slip = (bps: number | null | undefined) => (bps == null ? {} : { maxSlippageBps: bps });

/** Describe a pack fund-moving call (quoting it through the provider). */
export async function describeOrder(deps: FinanceDeps, tool: FundMovingToolName, input: unknown): Promise<OrderFacts> {
  switch (tool) {
    case 'swap_tokens':
    case 'buy_token':
    case 'sell_token': {
      const order = await spotOrderFor(deps, tool, input);
      const q = await deps.trading.quoteSpot(order);
      const fromStable = deps.isStable(q.from);
      const toStable = deps.isStable(q.to);
      const side: OrderSide = tool === 'buy_token' ? 'buy' : tool === 'sell_token' ? 'sell' : 'swap';
      const asset = !toStable ? q.to : q.from;
      const i = input as { address?: string | null; toAddress?: string | null; fromAddress?: string | null; chain?: string | null; slippageBps?: number | null };
      const chain = opt(i.chain);
      const tokens: TokenRef[] =
        tool === 'buy_token'
          ? [{ symbol: q.to, address: opt(i.address), chain, acquired: true }, { symbol: q.from, acquired: false }]
          : tool === 'sell_token'
            ? [{ symbol: q.from, address: opt(i.address), chain, acquired: false }, { symbol: q.to, acquired: true }]
            : [{ symbol: q.from, address: opt(i.fromAddress), chain, acquired: false }, { symbol: q.to, address: opt(i.toAddress), chain, acquired: true }];
      return {
        tool, kind: 'spot', side, asset, tokens, sizeUsd: q.amountInUsd, quantity: toStable ? q.amountIn : q.expectedAmountOut,
        increasesExposure: !toStable && (fromStable || tool !== 'sell_token'), expectedSlippageBps: q.slippageBps,
        requestedSlippageBps: opt(i.slippageBps), quote: q,
      };
    }
    case 'open_perps_position': {
      const i = input as PerpOpenInput;
      const q = await deps.trading.quotePerpOpen({ symbol: up(i.symbol), side: i.side, sizeUsd: i.sizeUsd, leverage: i.leverage, ...slip(i.slippageBps) });
      return {
        tool, kind: 'perp_open', side: i.side, asset: q.symbol, tokens: [{ symbol: q.symbol, acquired: true }], sizeUsd: i.sizeUsd, quantity: q.size,
        increasesExposure: true, leverage: i.leverage, expectedSlippageBps: q.slippageBps, requestedSlippageBps: opt(i.slippageBps), quote: q,
      };
    }
    case 'close_perps_position': {
      const i = input as PerpCloseInput;
      const q = await deps.trading.quotePerpClose({ symbol: up(i.symbol), ...(i.fraction != null ? { fraction: i.fraction } : {}) });
      return {
        tool, kind: 'perp_close', side: 'close', asset: q.symbol, tokens: [{ symbol: q.symbol, acquired: false }], sizeUsd: q.sizeUsd, quantity: q.size,
        increasesExposure: false, leverage: q.leverage, expectedSlippageBps: q.slippageBps, quote: q,
      };
    }
    case 'transfer_token':
    case 'withdraw_funds': {
      const i = input as TransferInput & WithdrawInput;
      const to = tool === 'transfer_token' ? i.to : i.destination;
      const kind = tool === 'transfer_token' ? 'transfer' : 'withdraw';
      const q = await deps.trading.quoteTransfer({ asset: up(i.asset), amount: i.amount, to, kind, ...(i.chain ? { chain: i.chain } : {}) });
      return {
        tool, kind, side: kind, asset: up(i.asset), tokens: [{ symbol: up(i.asset), chain: opt(i.chain), acquired: false }], sizeUsd: q.valueUsd,
        quantity: i.amount, increasesExposure: false, destination: to, quote: q,
      };
    }
  }
}

/**
 * The facts of this call, computed once per tool call id and kept in the turn state so every hook and
 * the preview see the same quote.
 */
export async function orderFacts(deps: FinanceDeps, ctx: ToolCallContext, toolCallId: string, tool: FundMovingToolName, input: unknown): Promise<OrderFacts> {
  const key = `finance:facts:${toolCallId}:${tool}`;
  const cached = ctx.state.get(key) as { input: unknown; facts: Promise<OrderFacts> } | undefined;
  if (cached && cached.input === input) return cached.facts;
  const facts = describeOrder(deps, tool, input);
  ctx.state.set(key, { input, facts });
  facts.catch(() => ctx.state.delete(key));
  return facts;
}

/** The registry's normalised view of the pack's richer facts. */
export function toToolOrderFacts(f: OrderFacts): ToolOrderFacts {
  return { notionalUsd: f.sizeUsd, asset: f.asset, side: f.side, ...(f.destination !== undefined ? { destination: f.destination } : {}), ...(f.quantity !== undefined ? { quantity: f.quantity } : {}) };
}

/** The `orderFacts` of a pack tool: priced once per call (cached in the turn state) and shared with its stages and preview. */
export function packOrderFacts(deps: FinanceDeps, tool: FundMovingToolName): (input: unknown, ctx: OrderFactsContext) => Promise<ToolOrderFacts> {
  return async (input, ctx) => toToolOrderFacts(await orderFacts(deps, ctx.call, ctx.toolCallId, tool, input));
}

const KIND_OF_SIDE: Readonly<Record<OrderSide, OrderFacts['kind']>> = {
  buy: 'spot', sell: 'spot', swap: 'spot', long: 'perp_open', short: 'perp_open', close: 'perp_close', transfer: 'transfer', withdraw: 'withdraw',
};

/**
 * The stages' view of a host's fund-moving tool, from the facts it stated: the same limits, caps, token
 * checks and confirm rules as the pack's own tools. A call that acquires or opens counts as adding exposure.
 */
export function hostOrderFacts(tool: string, f: ToolOrderFacts): OrderFacts {
  const acquires = f.side === 'buy' || f.side === 'swap' || f.side === 'long' || f.side === 'short';
  return {
    tool, kind: KIND_OF_SIDE[f.side], side: f.side, asset: f.asset, tokens: [{ symbol: f.asset, acquired: acquires }], sizeUsd: f.notionalUsd,
    quantity: f.quantity, increasesExposure: acquires, destination: f.destination,
  };
}
