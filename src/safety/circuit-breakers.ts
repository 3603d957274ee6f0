/**
 * Circuit breakers, per user, kept in storage so every process sharing the database honours a trip: a tripped
 * breaker halts that user's autonomous fund-moving calls at dispatch (one place: `src/tools/dispatch/breakers.ts`)
 * until a person resets it. A trip is claimed once across processes (the `jobs` domain's unique run per slot),
 * then written as an audit row, the state flag and a notification delivered like an autonomous answer (the web
 * app's Updates bell and the REPL read it).
 */
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';
import { type Logger, silentLogger } from '../util/logger';
import {
  type BreakerLimits, type BreakerMetrics, type BreakerRule, checkBreakerLimits, DEFAULT_BREAKER_LIMITS, judgeBreaker, measureBreakerRows,
} from './breaker-rules';

/** One user's breaker as stored and shown. */
export interface BreakerStatus {
  readonly userId: string;
  /** True while autonomous fund-moving calls are halted. */
  readonly tripped: boolean;
  readonly rule?: BreakerRule | undefined;
  readonly reason?: string | undefined;
  /** When it tripped. */
  readonly since?: string | undefined;
  /** When a person last reset it (metrics count from here). */
  readonly resetAt?: string | undefined;
  readonly resetBy?: string | undefined;
  readonly limits: BreakerLimits;
  /** What the rules measured at the last check (present from `check` and `status({ measure: true })`). */
  readonly metrics?: BreakerMetrics | undefined;
}

/** A trip, as the notifier receives it. */
export interface BreakerTrip {
  readonly userId: string;
  readonly rule: BreakerRule;
  readonly reason: string;
  readonly at: string;
  readonly metrics: BreakerMetrics;
}

/** Options of {@link createCircuitBreakers}. */
export interface CircuitBreakersOptions {
  readonly storage: Storage;
  /** Limits over {@link DEFAULT_BREAKER_LIMITS} for every user (validated; a bad field throws naming it). */
  readonly limits?: Partial<BreakerLimits> | undefined;
  /**
   * The user's account equity in USD, for the drawdown rule (the finance pack's portfolio value). Without it the
   * drawdown rule is not measured. A throwing source is logged and skipped for that check.
   */
  readonly equity?: ((userId: string) => Promise<number | undefined>) | undefined;
  /**
   * Told once per trip (across processes). @default a delivery in storage: a `breaker-<user>-<time>` session
   * (surface `background`, kind `breaker`) holding the notice, which `listDeliveries` returns to the web app and REPL
   */
  readonly notify?: ((trip: BreakerTrip) => Promise<void>) | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
}

/** The breakers of every user. */
export interface CircuitBreakers {
  /** Measure the rules for `userId` and trip the breaker when one is broken; returns the status after. */
  check(userId: string): Promise<BreakerStatus>;
  /** The stored status (no new measurement unless `measure`). */
  status(userId: string, options?: { readonly measure?: boolean | undefined }): Promise<BreakerStatus>;
  /** Every user with a breaker row in the audit trail or per-user limits, tripped first. */
  list(): Promise<BreakerStatus[]>;
  /** A person resets `userId`'s breaker: calls run again, metrics count from now. Written as an audit row. */
  reset(userId: string, by: { readonly by: string; readonly reason?: string | undefined }): Promise<BreakerStatus>;
  /** Set per-user limits over the defaults (validated; `{}` clears them). Written as an audit row. */
  configure(userId: string, limits: Partial<BreakerLimits>, by?: string): Promise<BreakerLimits>;
  /** The limits in force for `userId`. */
  limits(userId: string): Promise<BreakerLimits>;
}

const stateKey = (userId: string) => `breaker:${userId}`;
const limitsKey = (userId: string) => `breaker_limits:${userId}`;

interface StoredState {
  tripped: boolean;
  rule?: BreakerRule;
  reason?: string;
  since?: string;
  resetAt?: string;
  resetBy?: string;
  peakEquityUsd?: number;
}

function checkUser(where: string, userId: unknown): string {
  if (typeof userId !== 'string' || userId.trim() === '' || userId.length > 128) throw new MinaraError('INVALID_ARGUMENT', `${where}: userId must be a non-empty string of at most 128 characters`);
  return userId;
}

/**
 * Create the breakers over `storage`.
 *
 * @example
 * ```ts
 * const breakers = createCircuitBreakers({ storage, limits: { maxConsecutiveLosses: 5 }, equity: async () => (await trading.getPortfolio()).totalValueUsd });
 * const tools = createToolRegistry({ tools, storage, breakers });   // enforced at dispatch for autonomous fund-moving calls
 * await breakers.reset('alice', { by: 'ops@example.com' });
 * ```
 */
export function createCircuitBreakers(options: CircuitBreakersOptions): CircuitBreakers {
  const { storage, equity, now = () => new Date(), logger = silentLogger } = options;
  const defaults: BreakerLimits = { ...DEFAULT_BREAKER_LIMITS, ...checkBreakerLimits('createCircuitBreakers', options.limits ?? {}) };
  const notify = options.notify ?? ((trip: BreakerTrip) => deliverNotice(storage, trip));

  async function readState(userId: string): Promise<StoredState> {
    const raw = await storage.meta.get(stateKey(userId));
    if (raw === undefined) return { tripped: false };
    try {
      return JSON.parse(raw) as StoredState;
    } catch {
      // An unreadable flag fails closed.
      return { tripped: true, reason: 'the breaker state is unreadable; reset it' };
    }
  }

  async function limitsOf(userId: string): Promise<BreakerLimits> {
    const raw = await storage.meta.get(limitsKey(userId));
    if (raw === undefined) return defaults;
    try {
      return { ...defaults, ...checkBreakerLimits('breakers', JSON.parse(raw)) };
    } catch {
      logger.warn('breakers: stored limits are unreadable; using the defaults', { userId });
      return defaults;
    }
  }

  const view = (userId: string, s: StoredState, limits: BreakerLimits, metrics?: BreakerMetrics): BreakerStatus => ({
    userId, tripped: s.tripped, ...(s.rule ? { rule: s.rule } : {}), ...(s.reason ? { reason: s.reason } : {}), ...(s.since ? { since: s.since } : {}),
    ...(s.resetAt ? { resetAt: s.resetAt } : {}), ...(s.resetBy ? { resetBy: s.resetBy } : {}), limits, ...(metrics ? { metrics } : {}),
  });

  async function measure(userId: string, s: StoredState, limits: BreakerLimits): Promise<BreakerMetrics> {
    const t = now();
    const dayStart = `${t.toISOString().slice(0, 10)}T00:00:00.000Z`;
    const windowStart = new Date(t.getTime() - limits.errorWindowMinutes * 60_000).toISOString();
    const floor = s.resetAt;
    const rows = await storage.audit.query({ userId, kind: 'tool_call', limit: 2000, ...(floor ? { since: floor } : {}) });
    const measured = measureBreakerRows(rows, { dayStart: floor && floor > dayStart ? floor : dayStart, windowStart: floor && floor > windowStart ? floor : windowStart });
    let equityUsd: number | undefined;
    try {
      equityUsd = equity ? await equity(userId) : undefined;
    } catch (error) {
      logger.warn('breakers: the equity source failed; drawdown not measured this time', { userId, error: error instanceof Error ? error.message : String(error) });
    }
    if (equityUsd === undefined || !Number.isFinite(equityUsd)) return measured;
    const peak = Math.max(s.peakEquityUsd ?? equityUsd, equityUsd);
    if (peak !== s.peakEquityUsd && !s.tripped) await storage.meta.set(stateKey(userId), JSON.stringify({ ...s, peakEquityUsd: peak }));
    return { ...measured, equityUsd, peakEquityUsd: peak, drawdownPct: peak > 0 ? ((peak - equityUsd) / peak) * 100 : 0 };
  }

  async function trip(userId: string, s: StoredState, limits: BreakerLimits, rule: BreakerRule, reason: string, metrics: BreakerMetrics): Promise<StoredState> {
    const at = now().toISOString();
    // One trip per reset epoch across processes: the first to claim the slot writes the row and notifies.
    const claimed = await storage.jobs.claimRun({ jobId: `breaker:${userId}`, slot: s.resetAt ?? 'initial', owner: `breakers:${process.pid}`, now: at, leaseUntil: new Date(Date.parse(at) + 60_000).toISOString() });
    const next: StoredState = { ...s, tripped: true, rule, reason, since: at };
    await storage.meta.set(stateKey(userId), JSON.stringify(next));
    if (!claimed) return next;
    await storage.jobs.finishRun(claimed.id, `breakers:${process.pid}`, { endedAt: at, outcome: 'ok', detail: `${rule}: ${reason}`.slice(0, 500) }).catch(() => undefined);
    await storage.audit.append({
      at, kind: 'breaker', toolName: rule, tier: 0, source: 'breaker', userId, decision: 'blocked', code: 'CIRCUIT_BREAKER_OPEN', reason, durationMs: 0,
      argsJson: '{}', detail: { rule, metrics: { ...metrics }, limits: { ...limits } },
    });
    logger.warn(`circuit breaker tripped for ${userId}: ${reason}`, { userId, rule });
    try {
      await notify({ userId, rule, reason, at, metrics });
    } catch (error) {
      logger.error('breakers: the trip notification failed', { userId, error: error instanceof Error ? error.message : String(error) });
    }
    return next;
  }

  return {
    async check(userId) {
      checkUser('breakers.check', userId);
      const [s, limits] = await Promise.all([readState(userId), limitsOf(userId)]);
      if (s.tripped || !limits.enabled) return view(userId, s, limits);
      const metrics = await measure(userId, s, limits);
      const broken = judgeBreaker(limits, metrics);
      if (!broken) return view(userId, s, limits, metrics);
      return view(userId, await trip(userId, s, limits, broken.rule, broken.reason, metrics), limits, metrics);
    },

    async status(userId, opts = {}) {
      checkUser('breakers.status', userId);
      const [s, limits] = await Promise.all([readState(userId), limitsOf(userId)]);
      return view(userId, s, limits, opts.measure ? await measure(userId, s, limits) : undefined);
    },

    async list() {
      const users = new Set<string>();
      for (const r of await storage.audit.query({ kind: 'breaker', limit: 1000 })) if (r.userId) users.add(r.userId);
      const out = await Promise.all([...users].map(async (u) => view(u, await readState(u), await limitsOf(u))));
      return out.sort((a, b) => Number(b.tripped) - Number(a.tripped) || a.userId.localeCompare(b.userId));
    },

    async reset(userId, by) {
      checkUser('breakers.reset', userId);
      if (typeof by?.by !== 'string' || by.by.trim() === '') throw new MinaraError('INVALID_ARGUMENT', 'breakers.reset: "by" must name the person who resets it');
      const at = now().toISOString();
      const s = await readState(userId);
      // The peak restarts from the equity at reset: a drawdown the person accepted does not trip it again.
      const next: StoredState = { tripped: false, resetAt: at, resetBy: by.by.slice(0, 200) };
      await storage.meta.set(stateKey(userId), JSON.stringify(next));
      await storage.audit.append({
        at, kind: 'breaker', toolName: 'reset', tier: 0, source: 'operator', userId, decision: 'allowed', reason: (by.reason ?? `reset by ${by.by}`).slice(0, 500), durationMs: 0,
        argsJson: '{}', detail: { by: by.by.slice(0, 200), wasTripped: s.tripped, ...(s.rule ? { rule: s.rule } : {}) },
      });
      return view(userId, next, await limitsOf(userId));
    },

    async configure(userId, limits, by = 'sdk') {
      checkUser('breakers.configure', userId);
      const checked = checkBreakerLimits('breakers.configure', limits);
      if (Object.keys(checked).length === 0) await storage.meta.delete(limitsKey(userId));
      else await storage.meta.set(limitsKey(userId), JSON.stringify(checked));
      await storage.audit.append({
        at: now().toISOString(), kind: 'breaker', toolName: 'configure', tier: 0, source: 'operator', userId, decision: 'allowed', reason: `limits set by ${by}`.slice(0, 500), durationMs: 0,
        argsJson: JSON.stringify(checked), detail: { by },
      });
      return { ...defaults, ...checked };
    },

    limits: (userId) => limitsOf(checkUser('breakers.limits', userId)),
  };
}

/**
 * The default notifier: the trip as a delivered notice in storage (a session `breaker-<user>-<time>` of the user,
 * surface `background`, kind `breaker`, one assistant message), so every process's web app and REPL see it.
 */
export async function deliverNotice(storage: Pick<Storage, 'conversations'>, trip: BreakerTrip): Promise<void> {
  const sessionId = `breaker-${trip.userId.replace(/[^A-Za-z0-9._:-]/gu, '_').slice(0, 60)}-${trip.at.replace(/[^0-9]/gu, '').slice(0, 14)}`;
  await storage.conversations.ensureSession({ id: sessionId, userId: trip.userId, title: 'Circuit breaker tripped', metadata: { surface: 'background', kind: 'breaker' }, now: trip.at });
  const text = `Circuit breaker tripped: ${trip.reason}. Autonomous trades are halted until a person resets it (\`minara breakers reset ${trip.userId}\`, or Reset in the web app).`;
  await storage.conversations.appendMessages(sessionId, [{ role: 'assistant', json: JSON.stringify({ role: 'assistant', content: text }), createdAt: trip.at }]);
}
