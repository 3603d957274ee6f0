/**
 * Price alerts: "tell me when ETH drops below 3,000". The `alert_request` tool (the `memory.alerts` skill) stores the
 * condition per user in the `alerts` storage domain; the `alerts:check` job compares every active alert with the
 * market adapter and fires each at most once, across every process on the storage (a compare-and-set from `active`
 * to `fired`), writing the alert's own session (the web app's Updates bell) and handing it to the delivery (the
 * signed webhook, the host's hook, the REPL line).
 */
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import type { AlertCondition, AlertRecord } from '../storage/automation-types';
import type { Storage } from '../storage/types';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import { type Logger, silentLogger } from '../util/logger';
import type { MarketDataProvider } from './types';

/** The most active alerts one user may hold. */
export const MAX_ACTIVE_ALERTS = 50;
/** How long an alert lives unless told otherwise, and at most. */
const DEFAULT_EXPIRY_DAYS = 30;
const MAX_EXPIRY_DAYS = 365;
const DAY_MS = 86_400_000;

/** Options of {@link createAlertTool}. */
export interface AlertToolOptions {
  readonly storage: Pick<Storage, 'alerts'>;
  /** Where the price an alert is set against comes from (and whether the symbol exists). */
  readonly market: MarketDataProvider;
  /** The tenant when a call's context names none. @default 'default' */
  readonly defaultUserId?: string | undefined;
  /** How often the checker runs, for the tool's note to the user. @default 60000 */
  readonly checkEveryMs?: number | undefined;
  readonly now?: (() => Date) | undefined;
}

const normalize = (symbol: string): string => symbol.trim().replace(/^\$/, '').toUpperCase();

const usd = (n: number): string => (n >= 1000 ? n.toLocaleString('en-US', { maximumFractionDigits: 2 }) : n >= 1 ? String(Number(n.toFixed(4))) : String(Number(n.toPrecision(4))));

/** What an alert waits for, in words: `goes below 3,000 USD`, `moves 5% from 60,000 USD`. */
export function describeAlertCondition(a: Pick<AlertRecord, 'condition' | 'threshold' | 'basePrice'>): string {
  if (a.condition === 'move_pct') return `moves ${a.threshold}% either way from ${usd(a.basePrice ?? 0)} USD`;
  return `goes ${a.condition} ${usd(a.threshold)} USD`;
}

/** Whether `price` meets the alert's condition. */
export function alertHolds(a: Pick<AlertRecord, 'condition' | 'threshold' | 'basePrice'>, price: number): boolean {
  if (!(Number.isFinite(price) && price > 0)) return false;
  if (a.condition === 'above') return price >= a.threshold;
  if (a.condition === 'below') return price <= a.threshold;
  const base = a.basePrice ?? 0;
  return base > 0 && (Math.abs(price - base) / base) * 100 >= a.threshold;
}

const view = (a: AlertRecord) => ({
  id: a.id, asset: a.asset, condition: a.condition, threshold: a.threshold, ...(a.basePrice !== undefined ? { basePrice: a.basePrice } : {}),
  status: a.status, when: describeAlertCondition(a), expiresAt: a.expiresAt, ...(a.note ? { note: a.note } : {}),
  ...(a.status === 'fired' ? { firedAt: a.endedAt, firedPrice: a.firedPrice } : {}),
});

/**
 * `alert_request({ op, … })` (tool set `memory`, READ_ONLY: it keeps the user's own alert, like a memory; it never
 * places an order): `add` (asset, `above` / `below` a USD price, or `move_pct` from the current price; `expiresInDays`,
 * default 30, at most 365; a note), `list` (active and recently fired), `cancel` (id). The alert is checked against the
 * market every `checkEveryMs` and fires once: the user gets a message (the Updates bell, the REPL, the delivery
 * webhook), and it is then off.
 */
export function createAlertTool(options: AlertToolOptions): ToolEntry {
  if (!options?.storage?.alerts || !options.market) throw new MinaraError('CONFIG_INVALID', 'createAlertTool: pass { storage, market }');
  const { storage, market, defaultUserId = 'default', checkEveryMs = 60_000, now = () => new Date() } = options;
  const every = checkEveryMs >= 60_000 ? `${Math.round(checkEveryMs / 60_000)} min` : `${Math.round(checkEveryMs / 1000)} s`;
  const note = `Checked against ${market.simulated ? 'the simulated market' : market.name} every ${every}; an alert fires once (a message in the Updates bell, the terminal and any delivery webhook), then it is off. Alerts never place orders.`;
  const list = async (userId: string) => ({
    active: (await storage.alerts.list({ userId, status: 'active', limit: MAX_ACTIVE_ALERTS })).map(view),
    recent: (await storage.alerts.list({ userId, status: ['fired', 'expired'], limit: 5 })).map(view),
  });
  return defineTool({
    name: 'alert_request',
    toolSet: 'memory',
    description:
      'The user\'s price alerts ("tell me when ETH drops below 3,000"): op add (asset, condition above|below|move_pct, threshold: a USD price or a percent move, ' +
      'expiresInDays, note), list, or cancel (id). Checked against the market about every minute; each fires once with a message to the user.',
    inputSchema: z.object({
      op: z.enum(['add', 'list', 'cancel']),
      asset: z.string().trim().min(1).max(32).nullish().describe('BTC, ETH, SOL'),
      condition: z.enum(['above', 'below', 'move_pct']).nullish().describe('above/below a USD price, or move_pct: a move of threshold % from the price now'),
      threshold: z.number().finite().positive().nullish().describe('A price in USD, or a percentage for move_pct'),
      expiresInDays: z.number().finite().positive().max(MAX_EXPIRY_DAYS).nullish().describe(`Days until the alert lapses (default ${DEFAULT_EXPIRY_DAYS})`),
      note: z.string().trim().max(300).nullish(),
      id: z.number().int().positive().nullish(),
    }),
    permissionTier: PermissionTier.READ_ONLY,
    execute: async (input, ctx) => {
      const userId = ctx.call.userId ?? defaultUserId;
      if (input.op === 'add') {
        if (!input.asset || !input.condition || input.threshold == null) throw new MinaraError('INVALID_ARGUMENT', 'asset, condition and threshold: all three are needed to add an alert');
        if (input.condition === 'move_pct' && input.threshold > 1000) throw new MinaraError('INVALID_ARGUMENT', `threshold: a move_pct alert takes a percentage (e.g. 5), got ${input.threshold}`);
        if ((await storage.alerts.countActive(userId)) >= MAX_ACTIVE_ALERTS) {
          throw new MinaraError('INVALID_ARGUMENT', `the user already has ${MAX_ACTIVE_ALERTS} active alerts: cancel one first (alert_request op list, then op cancel)`);
        }
        const asset = normalize(input.asset);
        // The price now: the symbol must exist, and it is the reference of a move_pct alert.
        const quote = await market.getPrice(asset, { signal: ctx.signal });
        const at = now();
        const condition: AlertCondition = input.condition;
        const alert = await storage.alerts.create({
          userId, asset: quote.symbol, condition, threshold: input.threshold, basePrice: quote.priceUsd,
          createdAt: at.toISOString(), expiresAt: new Date(at.getTime() + (input.expiresInDays ?? DEFAULT_EXPIRY_DAYS) * DAY_MS).toISOString(),
          sessionId: ctx.call.sessionId, ...(input.note ? { note: input.note } : {}),
        });
        const already = alertHolds(alert, quote.priceUsd);
        return {
          added: view(alert),
          priceNow: quote.priceUsd,
          ...(already ? { warning: `${alert.asset} is at ${usd(quote.priceUsd)} USD, so this alert already holds: it fires at the next check. Ask whether the user meant the other direction.` } : {}),
          note,
        };
      }
      if (input.op === 'cancel') {
        if (input.id == null) throw new MinaraError('INVALID_ARGUMENT', 'id: required to cancel an alert (alert_request op list shows the ids)');
        const cancelled = await storage.alerts.transition(userId, input.id, 'cancelled', { endedAt: now().toISOString() });
        if (!cancelled) {
          const existing = await storage.alerts.get(userId, input.id);
          throw new MinaraError('INVALID_ARGUMENT', existing ? `id: alert ${input.id} is already ${existing.status}` : `id: no alert ${input.id} (active: ${(await list(userId)).active.map((a) => a.id).join(', ') || 'none'})`);
        }
        return { cancelled: view(cancelled), ...(await list(userId)), note };
      }
      return { ...(await list(userId)), note };
    },
  });
}

/** An alert that fired, as handed to the delivery. */
export interface AlertDelivery {
  readonly jobId: 'alerts:check';
  readonly sessionId: string;
  readonly source: 'alert';
  readonly userId: string;
  readonly text: string;
  readonly at: string;
  readonly stopReason: 'finished';
}

/** Options of {@link checkAlerts} and {@link createAlertCheckJob}. */
export interface AlertCheckOptions {
  readonly storage: Pick<Storage, 'alerts' | 'conversations'>;
  readonly market: MarketDataProvider;
  /** Hand a fired alert to the delivery (`app.background.deliver`: the REPL line, the signed webhook, the host's hook). */
  readonly deliver?: ((delivery: AlertDelivery) => void | Promise<void>) | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
  /** Active alerts read per page (a check reads every page). @default 1000 */
  readonly batch?: number | undefined;
  /** The random part of a fired alert's session id (`alert-<id>-<suffix>`). @default 8 random hex characters */
  readonly sessionSuffix?: (() => string) | undefined;
}

/** What one check did. */
export interface AlertCheckResult {
  readonly checked: number;
  /** Alerts this call fired (another process may have fired others). */
  readonly fired: readonly AlertRecord[];
  readonly expired: number;
  /** Assets whose price could not be read (their alerts wait for the next check). */
  readonly unpriced: readonly string[];
}

/** The message of a fired alert. */
export function alertMessage(a: AlertRecord, price: number): string {
  const set = `${a.createdAt.slice(0, 16).replace('T', ' ')} UTC`;
  const head =
    a.condition === 'move_pct'
      ? `${a.asset} moved ${(((price - (a.basePrice ?? price)) / (a.basePrice ?? price)) * 100).toFixed(2)}% from ${usd(a.basePrice ?? price)} to ${usd(price)} USD, past your ${a.threshold}% alert`
      : `${a.asset} is at ${usd(price)} USD, ${a.condition} your alert level of ${usd(a.threshold)} USD`;
  return `${head} (alert #${a.id}, set ${set}${a.note ? `: ${a.note}` : ''}). The alert has fired and is now off; ask me to set a new one if you want to keep watching.`;
}

/**
 * Check every active alert once: expire the lapsed ones, read each asset's price once, and fire the alerts whose
 * condition holds. Firing is a compare-and-set in storage, so with several processes checking at once each alert
 * fires exactly once; the winner writes the alert's session `alert-<id>-<random>` (the user's request and the message, so the
 * Updates bell and `GET /v1/deliveries` show it) and calls `deliver`. A delivery that fails is logged; the alert stays
 * fired (at most once, never twice).
 */
export async function checkAlerts(options: AlertCheckOptions): Promise<AlertCheckResult> {
  const { storage, market, deliver, now = () => new Date(), logger = silentLogger, batch = 1000, sessionSuffix = () => randomBytes(4).toString('hex') } = options;
  // Every active alert, page by page (oldest first), so none waits behind a full page.
  const active: AlertRecord[] = [];
  for (let page = await storage.alerts.listActive({ limit: batch }); page.length > 0; page = await storage.alerts.listActive({ afterId: page.at(-1)!.id, limit: batch })) {
    active.push(...page);
    if (page.length < batch) break;
  }
  const at = now();
  let expired = 0;
  const live: AlertRecord[] = [];
  for (const a of active) {
    if (a.expiresAt <= at.toISOString()) {
      if (await storage.alerts.transition(a.userId, a.id, 'expired', { endedAt: at.toISOString() })) expired++;
    } else live.push(a);
  }
  const prices = new Map<string, number>();
  const unpriced: string[] = [];
  for (const asset of new Set(live.map((a) => a.asset))) {
    try {
      prices.set(asset, (await market.getPrice(asset)).priceUsd);
    } catch (error) {
      unpriced.push(asset);
      logger.warn('alerts: no price; its alerts wait for the next check', { module: 'alerts', asset, error: error instanceof Error ? error.message : String(error) });
    }
  }
  const fired: AlertRecord[] = [];
  for (const a of live) {
    const price = prices.get(a.asset);
    if (price === undefined || !alertHolds(a, price)) continue;
    // Unguessable: clients name their own chats, so a predictable id could be claimed by another tenant beforehand.
    const sessionId = `alert-${a.id}-${sessionSuffix()}`;
    const won = await storage.alerts.transition(a.userId, a.id, 'fired', { endedAt: at.toISOString(), firedPrice: price, deliverySessionId: sessionId });
    if (!won) continue; // another process fired (or the user cancelled) it first
    fired.push(won);
    const text = alertMessage(won, price);
    try {
      const session = await storage.conversations.ensureSession({ id: sessionId, userId: won.userId, title: `Alert #${won.id}: ${won.asset}`, metadata: { surface: 'background', delivery: 'alert', alertId: won.id }, now: at.toISOString() });
      // Never write into a session someone else holds (the id was taken before the alert fired).
      if (session.userId !== won.userId) throw new MinaraError('SESSION_FORBIDDEN', `the session ${sessionId} belongs to another user; the alert's message was not written`);
      await storage.conversations.appendMessages(sessionId, [
        { role: 'user', json: JSON.stringify({ role: 'user', content: `[price alert #${won.id}, set ${won.createdAt}] Tell me when ${won.asset} ${describeAlertCondition(won)}.${won.note ? ` (${won.note})` : ''}` }), createdAt: won.createdAt },
        { role: 'assistant', json: JSON.stringify({ role: 'assistant', content: [{ type: 'text', text }] }), createdAt: at.toISOString() },
      ]);
      await deliver?.({ jobId: 'alerts:check', sessionId, source: 'alert', userId: won.userId, text, at: at.toISOString(), stopReason: 'finished' });
    } catch (error) {
      logger.warn('alerts: the alert fired but its delivery failed', { module: 'alerts', alert: won.id, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { checked: live.length, fired, expired, unpriced };
}

/** The `alerts:check` background job (a `BackgroundJob`): {@link checkAlerts} every `every` ms. */
export function createAlertCheckJob(options: AlertCheckOptions & { readonly every?: number | undefined }): {
  readonly id: 'alerts:check';
  readonly description: string;
  readonly every: number;
  readonly run: () => Promise<string | { readonly skipped: string }>;
} {
  const every = options.every ?? 60_000;
  if (!Number.isSafeInteger(every) || every < 1_000) throw new MinaraError('CONFIG_INVALID', `createAlertCheckJob: every must be at least 1000 ms, got ${String(every)}`);
  return {
    id: 'alerts:check',
    description: 'Price alerts: compare active alerts with the market; fire each once',
    every,
    run: async () => {
      const r = await checkAlerts(options);
      if (r.checked === 0 && r.expired === 0) return { skipped: 'no active alerts' };
      return `checked ${r.checked}, fired ${r.fired.length}${r.fired.length ? ` (#${r.fired.map((a) => a.id).join(', #')})` : ''}, expired ${r.expired}${r.unpriced.length ? `, no price for ${r.unpriced.join(', ')}` : ''}`;
    },
  };
}
