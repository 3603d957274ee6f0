import { randomBytes } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';
import type { GatewayQuota } from './auth';
import type { Logger } from '../util/logger';
import { jsonError } from './http-error';

/** The sources of a user's own turns (what user quotas count); autonomous turns have their own daily budget. */
export const USER_TURN_SOURCES: readonly string[] = ['user', 'subagent', 'mcp'];

/** Where a user stands against one limit. */
export interface QuotaStanding {
  readonly userId: string;
  readonly requestsPerMinute: { readonly limit: number | null; readonly used: number; readonly resetsAt: string; readonly from: QuotaOrigin };
  readonly usdPerDay: { readonly limit: number | null; readonly spentUsd: number; readonly leftUsd: number | null; readonly resetsAt: string; readonly from: QuotaOrigin };
}

/** Which setting a limit came from: the user's stored setting, the token's claim, the gateway default, or none. */
export type QuotaOrigin = 'user' | 'token' | 'default' | 'none';

/** A refused turn: the reason, and when to try again. */
export interface QuotaRefusal {
  readonly reason: string;
  readonly retryAfterSeconds: number;
  readonly standing: QuotaStanding;
}

/**
 * An admitted (or refused) turn. When admitted under a USD limit, the turn's estimated cost is reserved in storage
 * until `guard`'s events end or `release` is called (the ledger then holds its real cost); a reservation whose
 * process died lapses after its lease.
 */
export interface QuotaAdmission {
  /** Why the turn may not run; undefined when it may. */
  readonly refusal?: QuotaRefusal | undefined;
  /** The turn's events, passed through; the reservation is renewed while they run and released when they end or fail. */
  guard<T>(events: AsyncIterable<T>): AsyncIterable<T>;
  /** Release the reservation now (a turn that did not start, or ended). */
  release(): Promise<void>;
}

/** The gateway's quota checks (one per gateway; state in storage, so a fleet shares the counts). */
export interface QuotaGate {
  /**
   * Admit one user turn and reserve its estimated cost, or say why not (USD per day spent or reserved by turns still
   * running, or the minute's requests used).
   */
  admit(userId: string, token?: GatewayQuota): Promise<QuotaAdmission>;
  /** Where the user stands now. */
  standing(userId: string, token?: GatewayQuota): Promise<QuotaStanding>;
  /** The gateway defaults (a stored setting or a token claim overrides them per user). */
  readonly defaults: GatewayQuota;
}

/** Check quota defaults: integers ≥ 0 for requests per minute, USD ≥ 0. */
export function checkQuotaDefaults(quota: GatewayQuota | undefined, where: string): GatewayQuota {
  if (quota === undefined) return {};
  if (typeof quota !== 'object' || quota === null) throw new MinaraError('CONFIG_INVALID', `${where}: expected { requestsPerMinute?, usdPerDay? }.`);
  const { requestsPerMinute, usdPerDay } = quota;
  if (requestsPerMinute !== undefined && (!Number.isSafeInteger(requestsPerMinute) || requestsPerMinute < 0)) {
    throw new MinaraError('CONFIG_INVALID', `${where}.requestsPerMinute: expected an integer ≥ 0, got ${String(requestsPerMinute)}.`);
  }
  if (usdPerDay !== undefined && (typeof usdPerDay !== 'number' || !Number.isFinite(usdPerDay) || usdPerDay < 0)) {
    throw new MinaraError('CONFIG_INVALID', `${where}.usdPerDay: expected a number of USD ≥ 0, got ${String(usdPerDay)}.`);
  }
  return { ...(requestsPerMinute !== undefined ? { requestsPerMinute } : {}), ...(usdPerDay !== undefined ? { usdPerDay } : {}) };
}

/**
 * Per-user quotas on user turns: requests per minute (a fixed UTC-minute window counted atomically in storage) and
 * USD of model spend per UTC day (the usage ledger). A limit comes from the user's stored setting
 * (`storage.controls.setQuota`; `null` there means unlimited), else the token's `minara_quota` claim, else the
 * gateway's default; none of the three means no limit.
 */
export function createQuotaGate(options: { readonly storage: Storage; readonly defaults: GatewayQuota; readonly now: () => Date; readonly leaseMs?: number | undefined; readonly logger?: Logger | undefined }): QuotaGate {
  const { storage, defaults, now, leaseMs = 60_000, logger } = options;
  const instance = `quota:${process.pid}:${randomBytes(4).toString('hex')}`;
  let seq = 0;

  async function limits(userId: string, token: GatewayQuota | undefined) {
    const stored = await storage.controls.getQuota(userId);
    const pick = (key: 'requestsPerMinute' | 'usdPerDay'): { limit: number | null; from: QuotaOrigin } => {
      if (stored !== undefined && stored[key] !== undefined) return { limit: stored[key] ?? null, from: 'user' };
      if (token?.[key] !== undefined) return { limit: token[key]!, from: 'token' };
      if (defaults[key] !== undefined) return { limit: defaults[key]!, from: 'default' };
      return { limit: null, from: 'none' };
    };
    return { rpm: pick('requestsPerMinute'), usd: pick('usdPerDay') };
  }

  const windowOf = (at: Date) => at.toISOString().slice(0, 16); // the UTC minute
  const nextMinute = (at: Date) => new Date(Math.floor(at.getTime() / 60_000) * 60_000 + 60_000);
  const nextDay = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
  const seconds = (from: Date, to: Date) => Math.max(1, Math.ceil((to.getTime() - from.getTime()) / 1000));

  const refused = (refusal: QuotaRefusal): QuotaAdmission => ({ refusal, guard: (events) => events, release: async () => {} });

  /** An admitted turn holding reservation `id` (none without a USD limit). */
  function admitted(id: string | undefined): QuotaAdmission {
    if (id === undefined) return { guard: (events) => events, release: async () => {} };
    let released = false;
    let timer: NodeJS.Timeout | undefined;
    const release = async () => {
      if (released) return;
      released = true;
      if (timer) clearInterval(timer);
      try {
        await storage.usage.releaseReservation(id);
      } catch (error) {
        logger?.warn('gateway: could not release a quota reservation (it lapses with its lease)', { error: error instanceof Error ? error.message : String(error) });
      }
    };
    return {
      release,
      guard<T>(events: AsyncIterable<T>): AsyncIterable<T> {
        timer = setInterval(() => {
          storage.usage.renewReservation(id, new Date(now().getTime() + leaseMs).toISOString()).catch((error: unknown) =>
            logger?.warn('gateway: could not renew a quota reservation', { error: error instanceof Error ? error.message : String(error) }),
          );
        }, Math.max(1000, Math.floor(leaseMs / 3)));
        timer.unref?.();
        return (async function* () {
          try {
            yield* events;
          } finally {
            await release();
          }
        })();
      },
    };
  }

  async function standingAt(userId: string, token: GatewayQuota | undefined, at: Date): Promise<QuotaStanding> {
    const l = await limits(userId, token);
    const [used, spent] = await Promise.all([
      storage.controls.requestCount(`rpm:${userId}`, windowOf(at)),
      storage.usage.totals({ day: at.toISOString().slice(0, 10), userId, sources: USER_TURN_SOURCES }),
    ]);
    return {
      userId,
      requestsPerMinute: { limit: l.rpm.limit, used, resetsAt: nextMinute(at).toISOString(), from: l.rpm.from },
      usdPerDay: {
        limit: l.usd.limit, spentUsd: spent.costUsd, leftUsd: l.usd.limit === null ? null : Math.max(0, l.usd.limit - spent.costUsd),
        resetsAt: nextDay(at).toISOString(), from: l.usd.from,
      },
    };
  }

  return {
    defaults,
    standing: (userId, token) => standingAt(userId, token, now()),
    async admit(userId, token) {
      const at = now();
      const l = await limits(userId, token);
      if (l.rpm.limit === null && l.usd.limit === null) return admitted(undefined);
      let reservation: string | undefined;
      if (l.usd.limit !== null) {
        const day = at.toISOString().slice(0, 10);
        const id = `${instance}:${++seq}`;
        const r = await storage.usage.reserve({
          id, scope: `user:${userId}`, day, userId, sources: USER_TURN_SOURCES, limitUsd: l.usd.limit,
          now: at.toISOString(), expiresAt: new Date(at.getTime() + leaseMs).toISOString(),
        });
        if (!r.admitted) {
          const running = r.reservedUsd > 0 ? ` and turns still running hold $${r.reservedUsd.toFixed(4)}` : '';
          return refused({
            reason: `${userId} has spent $${r.spentUsd.toFixed(4)}${running} of the $${l.usd.limit.toFixed(2)} per day allowed for chat turns (UTC ${day}); it resets at midnight UTC`,
            retryAfterSeconds: r.reservedUsd > 0 && r.spentUsd < l.usd.limit ? 1 : seconds(at, nextDay(at)),
            standing: await standingAt(userId, token, at),
          });
        }
        reservation = id;
      }
      if (l.rpm.limit !== null) {
        const counted = await storage.controls.countRequest({ key: `rpm:${userId}`, window: windowOf(at), limit: l.rpm.limit });
        if (!counted.allowed) {
          if (reservation !== undefined) await storage.usage.releaseReservation(reservation);
          return refused({
            reason: `${userId} has used ${counted.count} of ${l.rpm.limit} chat turns allowed per minute`,
            retryAfterSeconds: seconds(at, nextMinute(at)),
            standing: await standingAt(userId, token, at),
          });
        }
      }
      return admitted(reservation);
    },
  };
}

/** The 429 a refused turn gets: the reason, where the user stands, and `Retry-After` in seconds. */
export function quotaResponse(refusal: QuotaRefusal): Response {
  return jsonError(429, 'HTTP_TOO_MANY_REQUESTS', `Not now: ${refusal.reason}.`, { quota: refusal.standing, retryAfterSeconds: refusal.retryAfterSeconds }, { 'retry-after': String(refusal.retryAfterSeconds) });
}
