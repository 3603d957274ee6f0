/**
 * The autopilot's job: each tick walks the stored strategies, decides which owe an order (a DCA whose time came, a
 * grid whose price stepped a level), places it through the registry's dispatch as a `cron` call, and records it.
 */
import { createToolCallContext } from '../tools/context';
import {
  type AutopilotOrder, type AutopilotState, type AutopilotStrategy, autopilotIntent, loadStrategy, registryOf, revokeStrategy, saveStrategy, strategyIds,
} from './autopilot-state';
import type { MarketDataProvider } from './types';

/** Run due work now: at most one order per active strategy. */
export async function tickAutopilot(a: AutopilotState, signal: AbortSignal = new AbortController().signal): Promise<{ orders: number; failed: number }> {
  let orders = 0;
  let failed = 0;
  const at = a.now();
  for (const id of await strategyIds(a)) {
    if (signal.aborted) break;
    const s = await loadStrategy(a, id);
    if (!s || s.status !== 'active') continue;
    const side = await dueSide(a, s, at, signal);
    if (!side) continue;
    const order = await placeOrder(a, s, side, signal);
    orders++;
    if (!order.ok) failed++;
    await recordOrder(a, s, side, order, at);
  }
  return { orders, failed };
}

/**
 * The side of the order a strategy owes now, or undefined. A strategy past its end or out of budget is completed
 * (its grants revoked); a grid's first sighting, or a step with nothing to sell, only records the level.
 */
async function dueSide(a: AutopilotState, s: AutopilotStrategy, at: Date, signal: AbortSignal): Promise<'buy' | 'sell' | undefined> {
  if (at.getTime() >= Date.parse(s.endsAt)) {
    await revokeStrategy(a, s);
    await saveStrategy(a, { ...s, status: 'completed', statusReason: 'its end date passed' });
    return undefined;
  }
  let side: 'buy' | 'sell' | undefined;
  if (s.kind === 'dca') {
    if (s.nextRunAt && at.getTime() < Date.parse(s.nextRunAt)) return undefined;
    side = 'buy';
  } else {
    const price = (await (a.deps.market as MarketDataProvider).getPrice(s.symbol, { signal })).priceUsd;
    const level = levelOf(s, price);
    if (s.lastLevel === undefined) {
      await saveStrategy(a, { ...s, lastLevel: level });
      return undefined;
    }
    // One level per tick: a gap of several levels is walked over the next ticks, so no order is larger than amountUsd.
    if (level < s.lastLevel) side = 'buy';
    else if (level > s.lastLevel && s.history.some((o) => o.ok && o.side === 'buy')) side = 'sell';
    else if (level !== s.lastLevel) {
      await saveStrategy(a, { ...s, lastLevel: level });
      return undefined;
    }
    if (!side) return undefined;
  }
  if (side === 'buy' && s.spentUsd + s.amountUsd > s.maxTotalUsd + 1e-9) {
    await revokeStrategy(a, s);
    await saveStrategy(a, { ...s, status: 'completed', statusReason: 'its budget is spent' });
    return undefined;
  }
  return side;
}

/** The grid level a price is at (0 at `lower`, `levels - 1` at `upper`, clamped). */
function levelOf(s: AutopilotStrategy, price: number): number {
  const step = (s.upper! - s.lower!) / (s.levels! - 1);
  return Math.max(0, Math.min(s.levels! - 1, Math.floor((price - s.lower!) / step + 1e-9)));
}

/** One order of a strategy, through dispatch as a cron call. */
async function placeOrder(a: AutopilotState, s: AutopilotStrategy, side: 'buy' | 'sell', signal: AbortSignal): Promise<AutopilotOrder> {
  const r = registryOf(a);
  const context = createToolCallContext({ sessionId: `autopilot:${s.id}`, source: 'cron', userId: s.userId, allowedToolSets: ['trade'] });
  const input = { symbol: s.symbol, amountUsd: s.amountUsd, intent: autopilotIntent(s, side), confirm: true };
  const outcome = await r.dispatchDetailed(side === 'buy' ? 'buy_token' : 'sell_token', input, { context, signal, toolCallId: `${s.id}:${s.orders + 1}:${a.now().toISOString()}` });
  const when = a.now().toISOString();
  if (!outcome.envelope.ok) return { at: when, side, amountUsd: s.amountUsd, ok: false, error: `${outcome.envelope.code}: ${outcome.envelope.error}` };
  const data = outcome.envelope.data as { orderId?: string; fill?: { price?: number } };
  return { at: when, side, amountUsd: s.amountUsd, ok: true, ...(data.orderId ? { orderId: data.orderId } : {}), ...(data.fill?.price !== undefined ? { price: data.fill.price } : {}) };
}

/**
 * Record a placed order on the strategy, re-read first (the user may have stopped or changed it while the order was
 * placed): counters, history, the next DCA time or grid level, and a pause after `maxFailures` failures in a row.
 */
async function recordOrder(a: AutopilotState, placed: AutopilotStrategy, side: 'buy' | 'sell', order: AutopilotOrder, at: Date): Promise<void> {
  const s = (await loadStrategy(a, placed.id)) ?? placed;
  const failures = order.ok ? 0 : s.failures + 1;
  const next: AutopilotStrategy = {
    ...s,
    orders: s.orders + (order.ok ? 1 : 0),
    spentUsd: s.spentUsd + (order.ok && side === 'buy' ? s.amountUsd : 0),
    history: [...s.history, order].slice(-20),
    failures,
    ...(order.ok ? { lastError: undefined } : { lastError: order.error }),
    ...(s.kind === 'dca' ? { nextRunAt: new Date(Math.max(at.getTime(), Date.parse(s.nextRunAt ?? at.toISOString())) + s.everyMs!).toISOString() } : {}),
    ...(s.kind === 'grid' && order.ok ? { lastLevel: s.lastLevel! + (side === 'buy' ? -1 : 1) } : {}),
    ...(failures >= a.maxFailures && s.status === 'active' ? { status: 'paused' as const, statusReason: `paused after ${failures} failed orders in a row: ${order.error ?? ''}` } : {}),
  };
  await saveStrategy(a, next);
  if (!order.ok) a.logger?.warn('autopilot order failed', { strategy: s.id, error: order.error });
}
