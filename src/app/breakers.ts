import { ConfigError } from '../errors/subclasses';
import { type BreakerLimits, checkBreakerLimits } from '../safety/breaker-rules';
import { type CircuitBreakers, createCircuitBreakers } from '../safety/circuit-breakers';
import type { Storage } from '../storage/types';
import type { AppPacks } from './packs';
import type { AppSettings } from './settings';

/** `MINARA_BREAKER_*` variables and the limit each sets. */
const ENV_LIMITS: ReadonlyArray<readonly [string, Exclude<keyof BreakerLimits, 'enabled'>]> = [
  ['MINARA_BREAKER_MAX_LOSSES', 'maxConsecutiveLosses'],
  ['MINARA_BREAKER_MAX_DAILY_LOSS_USD', 'maxDailyLossUsd'],
  ['MINARA_BREAKER_MAX_DRAWDOWN_PCT', 'maxDrawdownPct'],
  ['MINARA_BREAKER_MAX_ERROR_RATE', 'maxErrorRate'],
  ['MINARA_BREAKER_ERROR_WINDOW_MINUTES', 'errorWindowMinutes'],
  ['MINARA_BREAKER_MIN_CALLS', 'minCallsForErrorRate'],
];

/**
 * The circuit-breakers part (before the registry, which enforces them at dispatch): limits from the options over
 * the env's `MINARA_BREAKER_*` over the defaults, and the finance pack's portfolio value as the equity of the
 * drawdown rule. `breakers: false` or `MINARA_BREAKERS=off` gives none. A bad value throws `ConfigError` naming it.
 */
export function resolveBreakers(settings: AppSettings, storage: Storage, packs: AppPacks): CircuitBreakers | false {
  const { options, env, now, logger } = settings;
  if (options.breakers === false || env.MINARA_BREAKERS === 'off') return false;
  const fromEnv: Record<string, number> = {};
  for (const [name, key] of ENV_LIMITS) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const value = Number(raw);
    try {
      Object.assign(fromEnv, checkBreakerLimits(name, { [key]: value }));
    } catch (error) {
      throw new ConfigError(`${name}: ${error instanceof Error ? error.message.replace(/^[^:]+: /u, '') : String(error)}`, [name]);
    }
  }
  let limits: Partial<BreakerLimits>;
  try {
    limits = { ...fromEnv, ...checkBreakerLimits('breakers.limits', options.breakers?.limits ?? {}) };
  } catch (error) {
    throw new ConfigError(error instanceof Error ? error.message : String(error), ['breakers.limits']);
  }
  const trading = packs.finance?.trading;
  const equity = options.breakers?.equity ?? (trading ? async () => (await trading.getPortfolio()).totalValueUsd : undefined);
  return createCircuitBreakers({ storage, limits, ...(equity ? { equity } : {}), now, logger });
}
