import type { FinanceLimits } from '../finance/limits';
import type { MemoryStore } from '../memory/types';

const NUMERIC: ReadonlyArray<keyof FinanceLimits> = [
  'maxTradeUsd', 'confirmOnceMaxUsd', 'maxDailyLossUsd', 'maxLeverage', 'maxSlippageBps', 'maxAssetConcentrationPct', 'maxTotalExposureUsd',
];

/** The profile key prefix of a user's hard constraints, e.g. `hard_constraint.maxTradeUsd = 250`. */
export const HARD_CONSTRAINT_PREFIX = 'hard_constraint.';

/**
 * Read a user's `hard_constraint.*` profile entries as finance limits. The finance pack merges them
 * field by field with the configured limits and keeps the stricter value, so a stored preference can
 * tighten a limit and never loosen one. Unknown keys and unparsable values are ignored.
 */
export async function readHardConstraints(memory: MemoryStore): Promise<Partial<FinanceLimits>> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of await memory.profile.list()) {
    if (!key.startsWith(HARD_CONSTRAINT_PREFIX)) continue;
    const field = key.slice(HARD_CONSTRAINT_PREFIX.length) as keyof FinanceLimits;
    if ((NUMERIC as readonly string[]).includes(field)) {
      const n = Number(value);
      if (Number.isFinite(n) && n >= 0) out[field] = n;
    } else if (field === 'denyList') {
      out.denyList = value.split(',').map((s) => s.trim().toUpperCase()).filter(Boolean);
    } else if (field === 'allowUnverified' && (value === 'false' || value === 'true')) {
      out.allowUnverified = value === 'true';
    }
  }
  return out as Partial<FinanceLimits>;
}
