import type { GrantArgLimit } from '../storage/types';

/** True when every limited field is present in `input` and within its limit. */
export function withinLimits(limits: Readonly<Record<string, GrantArgLimit>> | undefined, input: unknown): boolean {
  if (limits === undefined) return true;
  if (input === null || typeof input !== 'object') return Object.keys(limits).length === 0;
  const values = input as Record<string, unknown>;
  for (const [field, limit] of Object.entries(limits)) {
    const value = values[field];
    if (limit.max !== undefined || limit.min !== undefined) {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
      if (!Number.isFinite(n)) return false;
      if (limit.max !== undefined && n > limit.max) return false;
      if (limit.min !== undefined && n < limit.min) return false;
    }
    if (limit.oneOf !== undefined && !limit.oneOf.some((allowed) => allowed === value)) return false;
  }
  return true;
}
