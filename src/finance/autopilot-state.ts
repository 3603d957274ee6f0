/**
 * The autopilot's state (`AutopilotState`, built by `createAutopilot`) and its stored strategies: loading and saving
 * them in `storage.meta`, the grants that let a strategy's cron orders through the gate, and the checks a strategy
 * must pass before it is stored.
 */
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';
import type { ToolRegistry } from '../tools/types';
import type { Logger } from '../util/logger';
import type { FinanceDeps } from './context';

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

/** The resolved options of one autopilot. */
export interface AutopilotState {
  readonly deps: FinanceDeps;
  readonly storage: Storage;
  readonly registry: () => ToolRegistry | undefined;
  readonly tickMs: number;
  readonly maxFailures: number;
  readonly logger: Logger | undefined;
  readonly now: () => Date;
}

/** The DCA intervals a strategy may name. */
export const INTERVALS = { '1h': 3_600_000, '4h': 14_400_000, '1d': 86_400_000, '1w': 604_800_000 } as const;
/** The `storage.meta` key of the list of strategy ids, oldest first. */
export const INDEX_KEY = 'autopilot:index';
const key = (id: string) => `autopilot:strategy:${id}`;

/**
 * The exact intent text of a strategy's orders: the grant admits this text and no other. The strategy id is spelled
 * in letters (digits mapped to a–j) so the intent check reads no amount or asset out of it.
 */
export const autopilotIntent = (s: Pick<AutopilotStrategy, 'id' | 'symbol' | 'amountUsd'>, side: 'buy' | 'sell') =>
  `${side} ${s.amountUsd} USD of ${s.symbol} for autopilot ${s.id.replace(/\d/g, (d) => 'abcdefghij'[Number(d)]!).replace(/[^a-z]/gi, '').toLowerCase()}`;

/** A stored strategy, or undefined. */
export async function loadStrategy(a: AutopilotState, id: string): Promise<AutopilotStrategy | undefined> {
  const raw = await a.storage.meta.get(key(id));
  return raw === undefined ? undefined : (JSON.parse(raw) as AutopilotStrategy);
}

/** Store a strategy (its id must already be in the index, or be added by the caller). */
export async function saveStrategy(a: AutopilotState, s: AutopilotStrategy): Promise<void> {
  return a.storage.meta.set(key(s.id), JSON.stringify(s));
}

/** The ids of every stored strategy, oldest first. */
export async function strategyIds(a: AutopilotState): Promise<string[]> {
  return JSON.parse((await a.storage.meta.get(INDEX_KEY)) ?? '[]') as string[];
}

/** Every stored strategy (every user's), newest first. */
export async function listStrategies(a: AutopilotState): Promise<AutopilotStrategy[]> {
  return (await Promise.all((await strategyIds(a)).map((id) => loadStrategy(a, id)))).filter((s): s is AutopilotStrategy => s !== undefined).reverse();
}

/** The user's strategy by id; another user's (or none) is NOT_FOUND. */
export async function ownStrategy(a: AutopilotState, id: string, userId: string): Promise<AutopilotStrategy> {
  const s = await loadStrategy(a, id);
  if (!s || s.userId !== userId) throw new MinaraError('NOT_FOUND', `id: no autopilot strategy "${id}"`);
  return s;
}

/** The registry orders are dispatched through; unattached is a configuration error. */
export function registryOf(a: AutopilotState): ToolRegistry {
  const r = a.registry();
  if (!r) throw new MinaraError('CONFIG_INVALID', 'autopilot: the finance pack is not attached to a registry');
  return r;
}

/** Stored grants that let the job's cron calls of this strategy through the gate, and nothing else. */
export async function grantStrategy(a: AutopilotState, s: AutopilotStrategy): Promise<string[]> {
  const sides: Array<'buy' | 'sell'> = s.kind === 'grid' ? ['buy', 'sell'] : ['buy'];
  const ids: string[] = [];
  for (const side of sides) {
    const g = await registryOf(a).grants.create({
      toolName: side === 'buy' ? 'buy_token' : 'sell_token',
      sources: ['cron'],
      argLimits: { amountUsd: { max: s.amountUsd * 1.0001 }, asset: { oneOf: [s.symbol] }, side: { oneOf: [side] }, intent: { oneOf: [autopilotIntent(s, side)] } },
      expiresAt: s.endsAt,
      note: `autopilot ${s.id}: ${s.kind} ${side} ${s.amountUsd} USD of ${s.symbol}`,
    });
    ids.push(g.id);
  }
  return ids;
}

/** Revoke a strategy's grants (one already gone is fine). */
export async function revokeStrategy(a: AutopilotState, s: AutopilotStrategy): Promise<void> {
  for (const id of s.grantIds) await registryOf(a).grants.revoke(id).catch(() => false);
}

/** Refuse a strategy the trade limit, its budget or its kind's parameters do not allow. */
export async function checkStrategy(
  a: AutopilotState,
  s: Pick<AutopilotStrategy, 'kind' | 'symbol' | 'amountUsd' | 'maxTotalUsd' | 'everyMs' | 'lower' | 'upper' | 'levels'>,
): Promise<void> {
  const limits = await a.deps.limits();
  if (s.amountUsd > limits.maxTradeUsd) throw new MinaraError('INVALID_ARGUMENT', `amountUsd: ${s.amountUsd} USD per order is above the ${limits.maxTradeUsd} USD trade limit`);
  if (s.maxTotalUsd < s.amountUsd) throw new MinaraError('INVALID_ARGUMENT', 'maxTotalUsd: the budget must cover at least one order');
  if (a.deps.isStable(s.symbol)) throw new MinaraError('INVALID_ARGUMENT', `symbol: ${s.symbol} is a stablecoin; an autopilot buys a non-stable asset`);
  if (s.kind === 'dca' && !s.everyMs) throw new MinaraError('INVALID_ARGUMENT', 'every: a DCA needs an interval (1h, 4h, 1d, 1w)');
  if (s.kind === 'grid') {
    if (s.lower == null || s.upper == null || s.levels == null) throw new MinaraError('INVALID_ARGUMENT', 'lower, upper and levels: a grid needs all three');
    if (!(s.lower > 0 && s.upper > s.lower)) throw new MinaraError('INVALID_ARGUMENT', 'lower and upper: expected 0 < lower < upper');
  }
}

/** A strategy as the tools show it. */
export function describeStrategy(s: AutopilotStrategy) {
  return {
    id: s.id, kind: s.kind, symbol: s.symbol, status: s.status, amountUsd: s.amountUsd, maxTotalUsd: s.maxTotalUsd, spentUsd: s.spentUsd, orders: s.orders, endsAt: s.endsAt,
    ...(s.everyMs ? { every: Object.entries(INTERVALS).find(([, ms]) => ms === s.everyMs)?.[0] } : {}),
    ...(s.kind === 'grid' ? { lower: s.lower, upper: s.upper, levels: s.levels } : {}),
    ...(s.nextRunAt ? { nextRunAt: s.nextRunAt } : {}), ...(s.lastError ? { lastError: s.lastError } : {}), ...(s.statusReason ? { statusReason: s.statusReason } : {}),
    recent: s.history.slice(-5),
  };
}
