/** Copy helpers: the in-memory engine never hands out, or keeps, an object a caller holds. */

/** A shallow copy without the keys whose value is `undefined` (optional fields stay absent, as in SQLite). */
export function compact<T extends object>(value: T): T {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = v;
  return out as T;
}

/** A deep copy through JSON, matching what a JSON column would store and return. */
export function jsonCopy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
