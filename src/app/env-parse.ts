/**
 * Parsers for the app's duration and hour-range environment variables; a bad value is a ConfigError naming
 * the variable.
 */
import { ConfigError } from '../errors/subclasses';

/** `30m`, `6h`, `90s`, `1d` or `0` → ms; anything else is a ConfigError naming the variable. */
export function parseDuration(value: string, name: string): number {
  const m = /^\s*(\d+)\s*(ms|s|m|h|d)?\s*$/i.exec(value);
  if (!m) throw new ConfigError(`${name}: expected a duration like 30m, 6h or 0 (off), got ${JSON.stringify(value)}`, [name]);
  const n = Number(m[1]);
  const unit = (m[2] ?? 'ms').toLowerCase();
  const ms = n * ({ ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as Record<string, number>)[unit]!;
  if (ms !== 0 && ms < 60_000) throw new ConfigError(`${name}: the shortest interval is 1m (or 0 for off), got ${JSON.stringify(value)}`, [name]);
  return ms;
}

/** `08:00-22:00` → `{ start, end }` (UTC). */
export function parseHours(value: string, name: string): { start: string; end: string } {
  const m = /^\s*((?:[01]?\d|2[0-3]):[0-5]\d)\s*-\s*((?:[01]?\d|2[0-3]):[0-5]\d)\s*$/.exec(value);
  if (!m) throw new ConfigError(`${name}: expected HH:MM-HH:MM (UTC), e.g. 08:00-22:00, got ${JSON.stringify(value)}`, [name]);
  return { start: m[1]!, end: m[2]! };
}
