/**
 * The circuit breakers' rules, pure: the limits (defaults on), their validation, and what a user's recent audit
 * rows say about them. Losses are read from the fills recorded in the audit trail: each executed order's row
 * carries the provider's realised P&L for that fill (the paper engine's average-cost books, or the live venue's
 * `realizedPnl`), for every source, autopilot and host calls included.
 */
import { MinaraError } from '../errors/minara-error';
import type { AuditEntry } from '../storage/types';

/** The limits of one user's breakers. */
export interface BreakerLimits {
  /** Breakers on for this user. @default true */
  readonly enabled: boolean;
  /** Trip after this many losing closing trades in a row (a sell or close fill that realised a loss). @default 3 */
  readonly maxConsecutiveLosses: number;
  /** Trip once realised losses today (UTC, since the last reset) reach this many USD. @default 500 */
  readonly maxDailyLossUsd: number;
  /** Trip once equity is this many percent below its peak since the last reset. @default 20 */
  readonly maxDrawdownPct: number;
  /** Trip when this share (0–1) of fund-moving executions in the window failed. @default 0.5 */
  readonly maxErrorRate: number;
  /** The error-rate window in minutes. @default 60 */
  readonly errorWindowMinutes: number;
  /** Executions needed in the window before the error rate counts. @default 4 */
  readonly minCallsForErrorRate: number;
}

/** The defaults, documented in docs/operations.md: on for every user. */
export const DEFAULT_BREAKER_LIMITS: BreakerLimits = Object.freeze({
  enabled: true,
  maxConsecutiveLosses: 3,
  maxDailyLossUsd: 500,
  maxDrawdownPct: 20,
  maxErrorRate: 0.5,
  errorWindowMinutes: 60,
  minCallsForErrorRate: 4,
});

/** Which rule tripped. */
export type BreakerRule = 'consecutive_losses' | 'daily_loss' | 'drawdown' | 'error_rate';

const RANGES: Readonly<Record<Exclude<keyof BreakerLimits, 'enabled'>, readonly [number, number, boolean]>> = {
  maxConsecutiveLosses: [1, 1000, true],
  maxDailyLossUsd: [0.01, 1e12, false],
  maxDrawdownPct: [0.1, 100, false],
  maxErrorRate: [0.01, 1, false],
  errorWindowMinutes: [1, 10_080, true],
  minCallsForErrorRate: [1, 10_000, true],
};

/** Check a partial set of limits; throws `INVALID_ARGUMENT` naming the field and what was expected. */
export function checkBreakerLimits(where: string, limits: unknown): Partial<BreakerLimits> {
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) throw new MinaraError('INVALID_ARGUMENT', `${where}: limits must be an object`);
  const out: Record<string, number | boolean> = {};
  for (const [key, value] of Object.entries(limits)) {
    if (value === undefined) continue;
    if (key === 'enabled') {
      if (typeof value !== 'boolean') throw new MinaraError('INVALID_ARGUMENT', `${where}: enabled must be true or false, got ${JSON.stringify(value)}`);
      out[key] = value;
      continue;
    }
    const range = RANGES[key as keyof typeof RANGES];
    if (!range) throw new MinaraError('INVALID_ARGUMENT', `${where}: unknown limit "${key}"; expected one of enabled, ${Object.keys(RANGES).join(', ')}`);
    const [min, max, integer] = range;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
      throw new MinaraError('INVALID_ARGUMENT', `${where}: ${key} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}, got ${JSON.stringify(value)}`);
    }
    out[key] = value;
  }
  return out as Partial<BreakerLimits>;
}

/** What the rules measured for one user. */
export interface BreakerMetrics {
  /** Losing closing trades in a row, newest first, since the last reset. */
  readonly consecutiveLosses: number;
  /** Realised P&L today (UTC) since the last reset, USD (negative: a loss). */
  readonly realizedTodayUsd: number;
  /** Drawdown from the peak equity since the last reset, percent; undefined without an equity source. */
  readonly drawdownPct?: number | undefined;
  readonly equityUsd?: number | undefined;
  readonly peakEquityUsd?: number | undefined;
  /** Failed / all fund-moving executions in the error window. */
  readonly errors: number;
  readonly executions: number;
}

const CLOSING = new Set(['sell', 'close']);
const EXECUTED = new Set(['allowed', 'approved', 'error']);

/** A fund-moving execution's row (its outcome names the order side the registry judged). */
function isExecution(e: AuditEntry): boolean {
  return (e.kind ?? 'tool_call') === 'tool_call' && e.mode === 'execute' && e.outcome?.orderSide !== undefined && EXECUTED.has(e.decision);
}

/**
 * Measure the rules over a user's rows (newest first, since the last reset): consecutive losing closes, today's
 * realised P&L, and failures among the fund-moving executions of the error window.
 */
export function measureBreakerRows(rows: readonly AuditEntry[], at: { readonly dayStart: string; readonly windowStart: string }): Omit<BreakerMetrics, 'drawdownPct' | 'equityUsd' | 'peakEquityUsd'> {
  let consecutiveLosses = 0;
  let streakOpen = true;
  let realizedTodayUsd = 0;
  let errors = 0;
  let executions = 0;
  for (const e of rows) {
    if (!isExecution(e)) continue;
    const pnl = e.outcome?.fill?.realizedPnlUsd;
    if (e.decision !== 'error' && pnl !== undefined) {
      if (e.at >= at.dayStart) realizedTodayUsd += pnl;
      if (streakOpen && CLOSING.has(e.outcome?.orderSide ?? '')) {
        if (pnl < 0) consecutiveLosses++;
        else streakOpen = false;
      }
    }
    if (e.at >= at.windowStart) {
      executions++;
      if (e.decision === 'error') errors++;
    }
  }
  return { consecutiveLosses, realizedTodayUsd, errors, executions };
}

/** The first rule the metrics break, with a sentence for the person; undefined when none does. */
export function judgeBreaker(limits: BreakerLimits, m: BreakerMetrics): { readonly rule: BreakerRule; readonly reason: string } | undefined {
  if (!limits.enabled) return undefined;
  if (m.consecutiveLosses >= limits.maxConsecutiveLosses) {
    return { rule: 'consecutive_losses', reason: `${m.consecutiveLosses} losing trades in a row (limit ${limits.maxConsecutiveLosses})` };
  }
  if (-m.realizedTodayUsd >= limits.maxDailyLossUsd) {
    return { rule: 'daily_loss', reason: `realised loss today $${(-m.realizedTodayUsd).toFixed(2)} (limit $${limits.maxDailyLossUsd.toFixed(2)})` };
  }
  if (m.drawdownPct !== undefined && m.drawdownPct >= limits.maxDrawdownPct) {
    return { rule: 'drawdown', reason: `equity $${(m.equityUsd ?? 0).toFixed(2)} is ${m.drawdownPct.toFixed(1)}% below its peak $${(m.peakEquityUsd ?? 0).toFixed(2)} (limit ${limits.maxDrawdownPct}%)` };
  }
  if (m.executions >= limits.minCallsForErrorRate && m.errors / m.executions >= limits.maxErrorRate) {
    return { rule: 'error_rate', reason: `${m.errors} of ${m.executions} fund-moving calls failed in the last ${limits.errorWindowMinutes} min (limit ${Math.round(limits.maxErrorRate * 100)}%)` };
  }
  return undefined;
}
