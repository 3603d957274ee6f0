import { Cron } from 'croner';
import { MinaraError } from '../errors/minara-error';

/**
 * A parsed five-field cron expression (minute hour day-of-month month day-of-week), evaluated in UTC or in the
 * IANA time zone it was parsed with (wall-clock times, across daylight-saving changes).
 */
export interface CronSchedule {
  readonly expression: string;
  /** The IANA time zone the fields are read in; `UTC` unless one was given. */
  readonly timezone: string;
  /** The first time strictly after `from` that matches. */
  next(from: Date): Date;
  matches(at: Date): boolean;
}

/** Options of {@link parseCron}. */
export interface CronOptions {
  /**
   * An IANA time zone (`America/New_York`) or a city of one (`New York`, `london`): the fields are wall-clock
   * times there, so `0 9 * * 1-5` stays 09:00 local across daylight-saving changes. @default 'UTC'
   */
  readonly timezone?: string | undefined;
}

const FIELD_NAMES = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
const FIELD_RANGES = ['0–59', '0–23', '1–31', '1–12 or JAN–DEC', '0–7 or SUN–SAT'] as const;

const CRON_OPTIONS = { paused: true, mode: '5-part', sloppyRanges: true, legacyMode: true } as const;

let zoneIndex: Map<string, string> | undefined;

/** Lower-cased IANA names and their cities (`new york` → `America/New_York`), built once on first use. */
function zones(): Map<string, string> {
  if (zoneIndex) return zoneIndex;
  const index = new Map<string, string>([['utc', 'UTC'], ['gmt', 'UTC'], ['z', 'UTC']]);
  const all = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  for (const zone of all) {
    index.set(zone.toLowerCase(), zone);
    const city = zone.split('/').at(-1)!.replace(/_/g, ' ').toLowerCase();
    if (!index.has(city)) index.set(city, zone);
  }
  zoneIndex = index;
  return index;
}

/**
 * The IANA time zone a person named: an IANA name in any case (`america/new_york`), its city with spaces or
 * underscores (`New York`, `Los_Angeles`), or `UTC`/`GMT`; undefined when it names none.
 *
 * @example
 * ```ts
 * resolveTimeZone('New York'); // 'America/New_York'
 * resolveTimeZone('Europe/London'); // 'Europe/London'
 * resolveTimeZone('Atlantis'); // undefined
 * ```
 */
export function resolveTimeZone(name: string): string | undefined {
  if (typeof name !== 'string') return undefined;
  const text = name.trim().replace(/\s+/g, ' ');
  if (text === '') return undefined;
  const lower = text.toLowerCase();
  const known = zones().get(lower) ?? zones().get(lower.replace(/ /g, '_')) ?? zones().get(lower.replace(/_/g, ' '));
  if (known) return known;
  try {
    // A valid zone the list does not carry (a link such as `US/Eastern`): Intl accepts it or throws.
    return new Intl.DateTimeFormat('en-US', { timeZone: text }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** Which field of `parts` croner refuses, for an error that names it (only on the error path). */
function badField(parts: readonly string[]): number | undefined {
  for (let i = 0; i < parts.length; i++) {
    const probe = parts.map((p, j) => (j === i ? p : '*')).join(' ');
    try {
      new Cron(probe, CRON_OPTIONS);
    } catch {
      return i;
    }
  }
  return undefined;
}

/**
 * Parse a five-field cron expression (`*`, numbers, ranges `a-b`, lists `a,b`, steps `*\/n` and `a/n`, names
 * `MON`/`JAN`, `L` and `#` as croner reads them), in UTC or in `options.timezone`. Day-of-month and day-of-week
 * follow cron's rule: when both are restricted, either may match. The parsing and the time-zone arithmetic are
 * croner's (a maintained, dependency-free cron library; see docs/runtime.md).
 *
 * @example
 * ```ts
 * parseCron('*\/15 * * * *').next(new Date('2026-01-01T00:07:00Z')); // 00:15
 * parseCron('0 9 * * 1-5', { timezone: 'New York' }).next(new Date('2026-03-09T00:00:00Z')); // 13:00Z (09:00 EDT)
 * ```
 */
export function parseCron(expression: string, options: CronOptions = {}): CronSchedule {
  if (typeof expression !== 'string') throw new MinaraError('INVALID_ARGUMENT', 'Cron expression must be a string.');
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new MinaraError('INVALID_ARGUMENT', `Cron "${expression}": expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}.`);
  let timezone = 'UTC';
  if (options.timezone !== undefined) {
    const zone = resolveTimeZone(options.timezone);
    if (zone === undefined) throw new MinaraError('INVALID_ARGUMENT', `Cron "${expression}": time zone ${JSON.stringify(options.timezone)} is not an IANA time zone or one of its cities (e.g. "America/New_York", "New York", "UTC").`);
    timezone = zone;
  }
  let cron: Cron;
  try {
    cron = new Cron(parts.join(' '), { ...CRON_OPTIONS, timezone });
  } catch (error) {
    const i = badField(parts);
    const why = error instanceof Error ? error.message.replace(/^CronPattern:\s*/, '') : String(error);
    throw new MinaraError(
      'INVALID_ARGUMENT',
      i === undefined ? `Cron "${expression}": ${why}.` : `Cron "${expression}": ${FIELD_NAMES[i]} "${parts[i]}" is not valid (allowed ${FIELD_RANGES[i]}; ${why}).`,
    );
  }
  return {
    expression,
    timezone,
    matches: (at) => cron.match(new Date(Math.floor(at.getTime() / 60_000) * 60_000)), // the minute `at` falls in
    next(from) {
      const t = cron.nextRun(from);
      if (t === null) throw new MinaraError('INVALID_ARGUMENT', `Cron "${expression}" never matches.`);
      return t;
    },
  };
}
