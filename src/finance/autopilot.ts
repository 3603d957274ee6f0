/**
 * Autopilot strategies: DCA (buy a fixed USD amount every interval) and grid (buy a level's amount when the price
 * steps down a level, sell it when it steps back up), within a budget and an end date.
 *
 * The tools store a plan; they never trade. Orders are placed by the background job `finance:autopilot`, each one
 * through the registry's dispatch as a `cron` call of `buy_token` / `sell_token` with `confirm: true` — so every order
 * meets the tier gate and the whole finance safety stack (intent, token safety, exposure, slippage, risk caps, the
 * emergency stop) like any other trade. What lets those autonomous calls pass the gate is a stored grant that
 * `autopilot_start` creates once the user approved it (ALWAYS_CONFIRM): limited to the strategy's symbol, side,
 * per-order size and exact intent text, expiring at the strategy's end, revoked by `autopilot_stop`.
 */
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import type { Storage } from '../storage/types';
import { createToolCallContext } from '../tools/context';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolRegistry } from '../tools/types';
import { generateId } from '../util/ids';
import type { Logger } from '../util/logger';
import type { FinanceDeps } from './context';
import type { MarketDataProvider } from './types';

/** One order an autopilot placed (or tried to). */
export interface AutopilotOrder {
  readonly at: string;
  readonly side: 'buy' | 'sell';
  readonly amountUsd: number;
  readonly ok: boolean;
  readonly price?: number | undefined;
  readonly orderId?: string | undefined;
  readonly error?: string | undefined;
}

/** A stored strategy. */
export interface AutopilotStrategy {
  readonly id: string;
  readonly userId: string;
  readonly kind: 'dca' | 'grid';
  readonly symbol: string;
  readonly status: 'active' | 'paused' | 'stopped' | 'completed';
  /** USD per order. */
  readonly amountUsd: number;
  /** DCA: time between buys. */
  readonly everyMs?: number | undefined;
  /** Grid: price range and number of levels. */
  readonly lower?: number | undefined;
  readonly upper?: number | undefined;
  readonly levels?: number | undefined;
  /** USD the strategy may spend on buys in total. */
  readonly maxTotalUsd: number;
  readonly spentUsd: number;
  readonly orders: number;
  readonly createdAt: string;
  readonly endsAt: string;
  /** DCA: the next buy. */
  readonly nextRunAt?: string | undefined;
  /** Grid: the level the price was last seen at. */
  readonly lastLevel?: number | undefined;
  readonly grantIds: readonly string[];
  readonly failures: number;
  readonly lastError?: string | undefined;
  readonly statusReason?: string | undefined;
  /** The last 20 orders, newest last. */
  readonly history: readonly AutopilotOrder[];
}

/** Options of {@link createAutopilot}. */
export interface AutopilotOptions {
  readonly deps: FinanceDeps;
  readonly storage: Storage;
  /** The registry orders are dispatched through (set by the finance pack's `attach`). */
  readonly registry: () => ToolRegistry | undefined;
  /** How often the job looks for due work. @default 60000 */
  readonly tickMs?: number | undefined;
  /** Failed orders in a row before a strategy is paused. @default 3 */
  readonly maxFailures?: number | undefined;
  readonly logger?: Logger | undefined;
}

/** A job for the background runner (`createBackgroundRunner({ jobs })`, or `app.background` through createApp). */
export interface AutopilotJob {
  readonly id: string;
  readonly description: string;
  readonly every: number;
  readonly run: (context: { readonly signal: AbortSignal }) => Promise<string | { readonly skipped: string }>;
}

/** The autopilot: its tools and its background job. */
export interface Autopilot {
  readonly tools: readonly ToolEntry[];
  readonly job: AutopilotJob;
  /** The stored strategies (every user's), newest first. */
  list(): Promise<AutopilotStrategy[]>;
  /** Run due work now (the job does this every tick). */
  tick(signal?: AbortSignal): Promise<{ readonly orders: number; readonly failed: number }>;
}

const INTERVALS = { '1h': 3_600_000, '4h': 14_400_000, '1d': 86_400_000, '1w': 604_800_000 } as const;
const INDEX_KEY = 'autopilot:index';
const key = (id: string) => `autopilot:strategy:${id}`;

/**
 * The exact intent text of a strategy's orders: the grant admits this text and no other. The strategy id is spelled
 * in letters (digits mapped to a–j) so the intent check reads no amount or asset out of it.
 */
export const autopilotIntent = (s: Pick<AutopilotStrategy, 'id' | 'symbol' | 'amountUsd'>, side: 'buy' | 'sell') =>
  `${side} ${s.amountUsd} USD of ${s.symbol} for autopilot ${s.id.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]!).replace(/[^a-z]/gi, '').toLowerCase()}`;

/** Build the autopilot over the finance pack's providers and the registry. */
export function createAutopilot(options: AutopilotOptions): Autopilot {
  const { deps, storage, registry, tickMs = 60_000, maxFailures = 3, logger } = options;
  const now = deps.now;

  const load = async (id: string): Promise<AutopilotStrategy | undefined> => {
    const raw = await storage.meta.get(key(id));
    return raw === undefined ? undefined : (JSON.parse(raw) as AutopilotStrategy);
  };
  const save = async (s: AutopilotStrategy) => storage.meta.set(key(s.id), JSON.stringify(s));
  const index = async (): Promise<string[]> => JSON.parse((await storage.meta.get(INDEX_KEY)) ?? '[]') as string[];
  const list = async () => (await Promise.all((await index()).map(load))).filter((s): s is AutopilotStrategy => s !== undefined).reverse();
  const own = async (id: string, userId: string) => {
    const s = await load(id);
    if (!s || s.userId !== userId) throw new MinaraError('NOT_FOUND', `id: no autopilot strategy "${id}"`);
    return s;
  };
  const tools = () => {
    const r = registry();
    if (!r) throw new MinaraError('CONFIG_INVALID', 'autopilot: the finance pack is not attached to a registry');
    return r;
  };
  /** Stored grants that let the job's cron calls of this strategy through the gate, and nothing else. */
  const grant = async (s: AutopilotStrategy): Promise<string[]> => {
    const sides: Array<'buy' | 'sell'> = s.kind === 'grid' ? ['buy', 'sell'] : ['buy'];
    const ids: string[] = [];
    for (const side of sides) {
      const g = await tools().grants.create({
        toolName: side === 'buy' ? 'buy_token' : 'sell_token',
        sources: ['cron'],
        argLimits: { amountUsd: { max: s.amountUsd * 1.0001 }, asset: { oneOf: [s.symbol] }, side: { oneOf: [side] }, intent: { oneOf: [autopilotIntent(s, side)] } },
        expiresAt: s.endsAt,
        note: `autopilot ${s.id}: ${s.kind} ${side} ${s.amountUsd} USD of ${s.symbol}`,
      });
      ids.push(g.id);
    }
    return ids;
  };
  const revoke = async (s: AutopilotStrategy) => {
    for (const id of s.grantIds) await tools().grants.revoke(id).catch(() => false);
  };
  const check = async (s: Pick<AutopilotStrategy, 'kind' | 'symbol' | 'amountUsd' | 'maxTotalUsd' | 'everyMs' | 'lower' | 'upper' | 'levels'>) => {
    const limits = await deps.limits();
    if (s.amountUsd > limits.maxTradeUsd) throw new MinaraError('INVALID_ARGUMENT', `amountUsd: ${s.amountUsd} USD per order is above the ${limits.maxTradeUsd} USD trade limit`);
    if (s.maxTotalUsd < s.amountUsd) throw new MinaraError('INVALID_ARGUMENT', 'maxTotalUsd: the budget must cover at least one order');
    if (deps.isStable(s.symbol)) throw new MinaraError('INVALID_ARGUMENT', `symbol: ${s.symbol} is a stablecoin; an autopilot buys a non-stable asset`);
    if (s.kind === 'dca' && !s.everyMs) throw new MinaraError('INVALID_ARGUMENT', 'every: a DCA needs an interval (1h, 4h, 1d, 1w)');
    if (s.kind === 'grid') {
      if (s.lower == null || s.upper == null || s.levels == null) throw new MinaraError('INVALID_ARGUMENT', 'lower, upper and levels: a grid needs all three');
      if (!(s.lower > 0 && s.upper > s.lower)) throw new MinaraError('INVALID_ARGUMENT', 'lower and upper: expected 0 < lower < upper');
    }
  };
  const describe = (s: AutopilotStrategy) => ({
    id: s.id, kind: s.kind, symbol: s.symbol, status: s.status, amountUsd: s.amountUsd, maxTotalUsd: s.maxTotalUsd, spentUsd: s.spentUsd, orders: s.orders, endsAt: s.endsAt,
    ...(s.everyMs ? { every: Object.entries(INTERVALS).find(([, ms]) => ms === s.everyMs)?.[0] } : {}),
    ...(s.kind === 'grid' ? { lower: s.lower, upper: s.upper, levels: s.levels } : {}),
    ...(s.nextRunAt ? { nextRunAt: s.nextRunAt } : {}), ...(s.lastError ? { lastError: s.lastError } : {}), ...(s.statusReason ? { statusReason: s.statusReason } : {}),
    recent: s.history.slice(-5),
  });

  const symbol = z.string().trim().min(1).max(20);
  const userOf = (ctx: { call: { userId?: string | undefined } }) => ctx.call.userId ?? 'default';
  const autopilotTools: ToolEntry[] = [
    defineTool({
      name: 'autopilot_start',
      toolSet: 'autopilot',
      description:
        'Start an automated strategy on the account: kind "dca" buys amountUsd of symbol every interval; kind "grid" buys amountUsd each time the price steps down a level between lower and upper and sells it when it steps back up. ' +
        'Spends at most maxTotalUsd on buys and ends after days. Every start needs the user\'s approval; each order is then placed by the background runner through the normal trade checks.',
      inputSchema: z.object({
        kind: z.enum(['dca', 'grid']),
        symbol,
        amountUsd: z.number().finite().positive().describe('USD per order'),
        maxTotalUsd: z.number().finite().positive().describe('Budget for all buys'),
        every: z.enum(['1h', '4h', '1d', '1w']).nullish().describe('DCA: time between buys'),
        lower: z.number().finite().positive().nullish().describe('Grid: bottom of the range (USD)'),
        upper: z.number().finite().positive().nullish().describe('Grid: top of the range (USD)'),
        levels: z.number().int().min(2).max(50).nullish().describe('Grid: number of levels'),
        days: z.number().int().min(1).max(365).nullish().describe('How long it runs (default 30)'),
      }),
      permissionTier: PermissionTier.ALWAYS_CONFIRM,
      execute: async (input, ctx) => {
        const created = now();
        const base = {
          kind: input.kind, symbol: input.symbol.toUpperCase(), amountUsd: input.amountUsd, maxTotalUsd: input.maxTotalUsd,
          ...(input.kind === 'dca' ? { everyMs: INTERVALS[input.every ?? '1d'] } : { lower: input.lower ?? undefined, upper: input.upper ?? undefined, levels: input.levels ?? undefined }),
        } as const;
        await check(base);
        const draft: AutopilotStrategy = {
          ...base, id: generateId('ap'), userId: userOf(ctx), status: 'active', spentUsd: 0, orders: 0, createdAt: created.toISOString(),
          endsAt: new Date(created.getTime() + (input.days ?? 30) * 86_400_000).toISOString(),
          ...(input.kind === 'dca' ? { nextRunAt: created.toISOString() } : {}),
          grantIds: [], failures: 0, history: [],
        };
        const s = { ...draft, grantIds: await grant(draft) };
        await save(s);
        await storage.meta.set(INDEX_KEY, JSON.stringify([...(await index()), s.id]));
        return { started: describe(s), note: 'The background runner places each order as a checked trade (limits, token safety, emergency stop apply). Stop it any time with autopilot_stop.' };
      },
    }),
    defineTool({
      name: 'autopilot_modify',
      toolSet: 'autopilot',
      description: 'Change a running strategy (size, budget, interval, grid range) or pause/resume it. Needs the user\'s approval.',
      inputSchema: z.object({
        id: z.string().min(1).max(64),
        amountUsd: z.number().finite().positive().nullish(),
        maxTotalUsd: z.number().finite().positive().nullish(),
        every: z.enum(['1h', '4h', '1d', '1w']).nullish(),
        lower: z.number().finite().positive().nullish(),
        upper: z.number().finite().positive().nullish(),
        levels: z.number().int().min(2).max(50).nullish(),
        paused: z.boolean().nullish(),
      }),
      permissionTier: PermissionTier.ALWAYS_CONFIRM,
      execute: async (input, ctx) => {
        const s = await own(input.id, userOf(ctx));
        if (s.status === 'stopped' || s.status === 'completed') throw new MinaraError('INVALID_ARGUMENT', `id: strategy ${s.id} is ${s.status}; start a new one`);
        const next: AutopilotStrategy = {
          ...s,
          ...(input.amountUsd != null ? { amountUsd: input.amountUsd } : {}),
          ...(input.maxTotalUsd != null ? { maxTotalUsd: input.maxTotalUsd } : {}),
          ...(input.every != null && s.kind === 'dca' ? { everyMs: INTERVALS[input.every] } : {}),
          ...(s.kind === 'grid' ? { ...(input.lower != null ? { lower: input.lower } : {}), ...(input.upper != null ? { upper: input.upper } : {}), ...(input.levels != null ? { levels: input.levels } : {}) } : {}),
          ...(input.paused != null ? { status: input.paused ? 'paused' : 'active', failures: 0, statusReason: input.paused ? 'paused by the user' : undefined } : {}),
        };
        await check(next);
        // New size or side limits mean new grants; the old ones are revoked first.
        await revoke(s);
        const saved = { ...next, lastLevel: s.kind === 'grid' && (input.lower != null || input.upper != null || input.levels != null) ? undefined : s.lastLevel, grantIds: await grant(next) };
        await save(saved);
        return { modified: describe(saved) };
      },
    }),
    defineTool({
      name: 'autopilot_stop',
      toolSet: 'autopilot',
      // Stopping only takes risk away, so it needs no confirmation (and an alert turn can stop a strategy).
      description: 'Stop a strategy now: no further orders; its grants are revoked. Holdings it bought stay.',
      inputSchema: z.object({ id: z.string().min(1).max(64), reason: z.string().max(300).nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async ({ id, reason }, ctx) => {
        const s = await own(id, userOf(ctx));
        await revoke(s);
        const stopped: AutopilotStrategy = { ...s, status: 'stopped', statusReason: reason ?? `stopped from a ${ctx.call.source} turn` };
        await save(stopped);
        return { stopped: describe(stopped) };
      },
    }),
    defineTool({
      name: 'autopilot_list',
      toolSet: 'autopilot',
      description: 'The user\'s automated strategies: status, spent, orders, next run, last error.',
      inputSchema: z.object({ includeStopped: z.boolean().nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      execute: async ({ includeStopped }, ctx) => ({
        strategies: (await list()).filter((s) => s.userId === userOf(ctx) && (includeStopped === true || s.status === 'active' || s.status === 'paused')).map(describe),
      }),
    }),
  ];

  /** One order of a strategy, through dispatch as a cron call. */
  const place = async (s: AutopilotStrategy, side: 'buy' | 'sell', signal: AbortSignal): Promise<AutopilotOrder> => {
    const r = tools();
    const context = createToolCallContext({ sessionId: `autopilot:${s.id}`, source: 'cron', userId: s.userId, allowedToolSets: ['trade'] });
    const input = { symbol: s.symbol, amountUsd: s.amountUsd, intent: autopilotIntent(s, side), confirm: true };
    const outcome = await r.dispatchDetailed(side === 'buy' ? 'buy_token' : 'sell_token', input, { context, signal, toolCallId: `${s.id}:${s.orders + 1}:${now().toISOString()}` });
    const at = now().toISOString();
    if (!outcome.envelope.ok) return { at, side, amountUsd: s.amountUsd, ok: false, error: `${outcome.envelope.code}: ${outcome.envelope.error}` };
    const data = outcome.envelope.data as { orderId?: string; fill?: { price?: number } };
    return { at, side, amountUsd: s.amountUsd, ok: true, ...(data.orderId ? { orderId: data.orderId } : {}), ...(data.fill?.price !== undefined ? { price: data.fill.price } : {}) };
  };

  const levelOf = (s: AutopilotStrategy, price: number) => {
    const step = (s.upper! - s.lower!) / (s.levels! - 1);
    return Math.max(0, Math.min(s.levels! - 1, Math.floor((price - s.lower!) / step + 1e-9)));
  };

  const tick = async (signal: AbortSignal = new AbortController().signal) => {
    let orders = 0;
    let failed = 0;
    const at = now();
    for (const id of await index()) {
      if (signal.aborted) break;
      let s = await load(id);
      if (!s || s.status !== 'active') continue;
      if (at.getTime() >= Date.parse(s.endsAt)) {
        await revoke(s);
        await save({ ...s, status: 'completed', statusReason: 'its end date passed' });
        continue;
      }
      let side: 'buy' | 'sell' | undefined;
      let level: number | undefined;
      if (s.kind === 'dca') {
        if (s.nextRunAt && at.getTime() < Date.parse(s.nextRunAt)) continue;
        side = 'buy';
      } else {
        const price = (await (deps.market as MarketDataProvider).getPrice(s.symbol, { signal })).priceUsd;
        level = levelOf(s, price);
        if (s.lastLevel === undefined) {
          await save({ ...s, lastLevel: level });
          continue;
        }
        // One level per tick: a gap of several levels is walked over the next ticks, so no order is larger than amountUsd.
        if (level < s.lastLevel) side = 'buy';
        else if (level > s.lastLevel && s.history.some((o) => o.ok && o.side === 'buy')) side = 'sell';
        else if (level !== s.lastLevel) {
          await save({ ...s, lastLevel: level });
          continue;
        }
        if (!side) continue;
      }
      if (side === 'buy' && s.spentUsd + s.amountUsd > s.maxTotalUsd + 1e-9) {
        await revoke(s);
        await save({ ...s, status: 'completed', statusReason: 'its budget is spent' });
        continue;
      }
      const order = await place(s, side, signal);
      // Re-read: the user may have stopped or changed it while the order was placed.
      s = (await load(id)) ?? s;
      orders++;
      if (!order.ok) failed++;
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
        ...(failures >= maxFailures && s.status === 'active' ? { status: 'paused' as const, statusReason: `paused after ${failures} failed orders in a row: ${order.error ?? ''}` } : {}),
      };
      await save(next);
      if (!order.ok) logger?.warn('autopilot order failed', { strategy: s.id, error: order.error });
    }
    return { orders, failed };
  };

  return {
    tools: autopilotTools,
    list,
    tick,
    job: {
      id: 'finance:autopilot',
      description: 'Place due orders of autopilot strategies (DCA, grid) through the trade checks',
      every: tickMs,
      run: async ({ signal }) => {
        const r = await tick(signal);
        return r.orders === 0 ? { skipped: 'no order due' } : `${r.orders} orders (${r.failed} failed)`;
      },
    },
  };
}
