import { defineToolFactory, type ToolFactory } from '../../tools/define-tool';
import type { FinanceDeps } from '../context';
import { DEFAULT_FINANCE_LIMITS } from '../limits';
import { isStableLike } from '../paper-accounting';
import { createReadTools } from '../read-tools';
import type { MarketDataProvider, TradingProvider } from '../types';
import { createMinaraMarket, createMinaraTradingProvider } from './minara';

/** Options of {@link createMinaraToolFactory}. */
export interface MinaraToolFactoryOptions {
  /** Extra fetch options (timeouts, retries, a test `fetch`). */
  readonly timeoutMs?: number | undefined;
  readonly maxRetries?: number | undefined;
  readonly fetch?: typeof fetch | undefined;
}

/**
 * The Minara providers from the environment (`MINARA_API_KEY`, `MINARA_API_BASE_URL`), or `{}` when the key is
 * missing, ready to spread into `createFinancePack({ storage, ...minaraProvidersFromEnv(process.env) })`
 * (which then falls back to paper trading on the simulated feed).
 */
export function minaraProvidersFromEnv(env: Readonly<Record<string, string | undefined>>, options: MinaraToolFactoryOptions = {}): { market?: MarketDataProvider; provider?: TradingProvider } {
  const apiKey = env.MINARA_API_KEY;
  if (!apiKey) return {};
  // The Minara API has its own variable: the key must never follow the model endpoint (MINARA_MODEL_BASE_URL).
  const o = { apiKey, ...(env.MINARA_API_BASE_URL ? { baseUrl: env.MINARA_API_BASE_URL } : {}), ...options };
  return { market: createMinaraMarket(o), provider: createMinaraTradingProvider(o) };
}

/**
 * A tool factory of the Minara read-only tools (prices, search, portfolio, P&L). Without
 * `MINARA_API_KEY` it contributes nothing. Fund-moving tools are not offered here: they need the safety
 * hooks, so they come only from `createFinancePack`.
 */
export function createMinaraToolFactory(options: MinaraToolFactoryOptions = {}): ToolFactory {
  return defineToolFactory({
    requiresEnv: ['MINARA_API_KEY'],
    create: (env) => {
      const { market, provider } = minaraProvidersFromEnv(env, options);
      if (!market || !provider) return [];
      const deps: FinanceDeps = {
        market, trading: provider, configLimits: DEFAULT_FINANCE_LIMITS, limits: async () => DEFAULT_FINANCE_LIMITS,
        emergencyStop: () => { throw new Error('no emergency stop in the read-only factory'); }, isStable: isStableLike, requireIntent: true, now: () => new Date(),
      };
      return createReadTools(deps);
    },
  });
}
