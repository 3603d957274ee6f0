import { z } from 'zod';
import { ConfigError } from '../errors/subclasses';

/** Risk limits of the finance pack. Every field has a default; preferences can only tighten them. */
export interface FinanceLimits {
  /** Largest single trade in USD (spot notional or perp size). @default 5000 */
  readonly maxTradeUsd: number;
  /** Spot trades up to this size are CONFIRM_ONCE; larger ones ALWAYS_CONFIRM. @default 500 */
  readonly confirmOnceMaxUsd: number;
  /** Once today's realised loss reaches this, new risk-increasing trades are blocked. @default 1000 */
  readonly maxDailyLossUsd: number;
  /** Highest perp leverage. @default 5 */
  readonly maxLeverage: number;
  /** Highest slippage any order may accept, in basis points. @default 100 */
  readonly maxSlippageBps: number;
  /** Largest share of the portfolio one non-stable asset may reach after a trade, in percent. @default 50 */
  readonly maxAssetConcentrationPct: number;
  /** Largest total exposure (non-stable spot value + perp notional) after a trade, in USD. @default 25000 */
  readonly maxTotalExposureUsd: number;
  /** Symbols or contract addresses that may never be traded or received (case-insensitive). @default [] */
  readonly denyList: readonly string[];
  /** Allow tokens whose contract is not verified. @default false */
  readonly allowUnverified: boolean;
}

/** Defaults of {@link FinanceLimits}. */
export const DEFAULT_FINANCE_LIMITS: FinanceLimits = Object.freeze({
  maxTradeUsd: 5_000,
  confirmOnceMaxUsd: 500,
  maxDailyLossUsd: 1_000,
  maxLeverage: 5,
  maxSlippageBps: 100,
  maxAssetConcentrationPct: 50,
  maxTotalExposureUsd: 25_000,
  denyList: Object.freeze([]) as readonly string[],
  allowUnverified: false,
});

const positive = z.number().finite().positive();
const nonNegative = z.number().finite().nonnegative();

/** zod schema of a partial limits object (config or preference); unknown fields are refused. */
export const FinanceLimitsSchema = z
  .object({
    maxTradeUsd: positive,
    confirmOnceMaxUsd: nonNegative,
    maxDailyLossUsd: nonNegative,
    maxLeverage: z.number().finite().min(1),
    maxSlippageBps: nonNegative.max(10_000),
    maxAssetConcentrationPct: positive.max(100),
    maxTotalExposureUsd: nonNegative,
    denyList: z.array(z.string().trim().min(1)),
    allowUnverified: z.boolean(),
  })
  .partial()
  .strict();

/**
 * Validate partial limits; throws `ConfigError` (`CONFIG_INVALID`) naming every bad field.
 *
 * @example
 * ```ts
 * parseFinanceLimits({ maxLeverage: 0 }); // ConfigError: limits.maxLeverage: Too small: expected number to be >=1
 * ```
 */
export function parseFinanceLimits(input: unknown, where = 'limits'): Partial<FinanceLimits> {
  // A few parses per process: zod's compiled fast path (6.6 KB of generated code, never in the compile cache) costs more than it saves.
  const parsed = FinanceLimitsSchema.safeParse(input ?? {}, { jitless: true });
  if (parsed.success) return stripUndefined(parsed.data) as Partial<FinanceLimits>;
  const fields = parsed.error.issues.map((i) => [where, ...i.path.map(String)].join('.') + (i.code === 'unrecognized_keys' ? `.${(i as { keys?: string[] }).keys?.join(',') ?? ''}` : ''));
  const detail = parsed.error.issues
    .map((i) => `${[where, ...i.path.map(String)].join('.')}${i.code === 'unrecognized_keys' ? '' : ':'} ${i.message}`)
    .join('; ');
  throw new ConfigError(`Invalid finance limits: ${detail}`, fields);
}

/** Config limits over the defaults (config may loosen the defaults; it is the operator's choice). */
export function resolveFinanceLimits(config: Partial<FinanceLimits> | undefined): FinanceLimits {
  return Object.freeze({ ...DEFAULT_FINANCE_LIMITS, ...parseFinanceLimits(config ?? {}) });
}

/**
 * Merge a stored preference over the configured limits, field by field, keeping the stricter value:
 * the smaller maximum, the union of deny lists, and `allowUnverified` only when both allow it. A preference
 * can tighten, never loosen. An invalid preference is ignored field by field (it cannot loosen anything).
 */
export function tightenLimits(base: FinanceLimits, preference: Partial<FinanceLimits> | undefined): FinanceLimits {
  if (!preference || typeof preference !== 'object') return base;
  const p = safePartial(preference);
  const min = (a: number, b: number | undefined) => (b === undefined ? a : Math.min(a, b));
  return Object.freeze({
    maxTradeUsd: min(base.maxTradeUsd, p.maxTradeUsd),
    confirmOnceMaxUsd: min(base.confirmOnceMaxUsd, p.confirmOnceMaxUsd),
    maxDailyLossUsd: min(base.maxDailyLossUsd, p.maxDailyLossUsd),
    maxLeverage: min(base.maxLeverage, p.maxLeverage),
    maxSlippageBps: min(base.maxSlippageBps, p.maxSlippageBps),
    maxAssetConcentrationPct: min(base.maxAssetConcentrationPct, p.maxAssetConcentrationPct),
    maxTotalExposureUsd: min(base.maxTotalExposureUsd, p.maxTotalExposureUsd),
    denyList: Object.freeze([...new Set([...base.denyList, ...(p.denyList ?? [])])]),
    allowUnverified: base.allowUnverified && p.allowUnverified !== false,
  });
}

/** Keep only the fields of a preference that validate on their own. */
function safePartial(preference: object): Partial<FinanceLimits> {
  const out: Record<string, unknown> = {};
  const shape = FinanceLimitsSchema.shape as Record<string, z.ZodType>;
  for (const [key, value] of Object.entries(preference)) {
    const field = shape[key];
    if (!field) continue;
    const r = field.safeParse(value);
    if (r.success && r.data !== undefined) out[key] = r.data;
  }
  return out as Partial<FinanceLimits>;
}

function stripUndefined<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = v;
  return out as T;
}

/** Reads `hard_constraint` preferences (for example from the memory store); called before each fund-moving call. */
export type PreferenceReader = () => Promise<Partial<FinanceLimits> | undefined> | Partial<FinanceLimits> | undefined;

/** The limits in force right now: config, tightened by the stored preference. A failing reader fails closed. */
export function createLimitsResolver(config: FinanceLimits, preferences?: PreferenceReader): () => Promise<FinanceLimits> {
  return async () => {
    if (!preferences) return config;
    const pref = await preferences();
    return tightenLimits(config, pref);
  };
}
