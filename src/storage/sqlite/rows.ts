/** Row-mapping helpers: SQLite has NULL where the TypeScript records have absent optional fields. */

/** `{ [key]: value }` when `value` is not null/undefined, else `{}`, so optional fields stay absent. */
export function opt<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** `undefined` → `null` for binding. */
export function nul<V>(value: V | undefined): V | null {
  return value === undefined ? null : value;
}

/** JSON-encode an optional value for a TEXT column (NULL when absent). */
export function jsonOrNull(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/** `?, ?, ?` for an IN list of `n` values. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}
