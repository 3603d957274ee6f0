/** `T` with `undefined` removed from every property's type (what {@link definedOnly} returns). */
export type DefinedOnly<T> = { [K in keyof T]: Exclude<T[K], undefined> };

/**
 * A shallow copy of `value` without the keys whose value is `undefined`, for merging options: `{ ...defaults,
 * ...definedOnly(options) }` lets an option the caller left `undefined` keep the default (or the environment's
 * value) instead of erasing it. (`{ ...defaults, ...options }` would let `{ tradingMode: undefined }` override
 * `MINARA_TRADING_MODE=shadow`.) `undefined` or a non-object gives `{}`.
 *
 * @example
 * ```ts
 * const merged = { mode: 'shadow', ...definedOnly({ mode: undefined, seed: 1 }) }; // { mode: 'shadow', seed: 1 }
 * ```
 */
export function definedOnly<T extends object>(value: T | undefined | null | false): Partial<DefinedOnly<T>> {
  if (typeof value !== 'object' || value === null) return {};
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = v;
  return out as Partial<DefinedOnly<T>>;
}
