import { MinaraError } from '../errors/minara-error';

interface CronField {
  readonly values: ReadonlySet<number>;
  readonly any: boolean;
}

/** A parsed five-field cron expression (minute hour day-of-month month day-of-week), evaluated in UTC. */
export interface CronSchedule {
  readonly expression: string;
  /** The first time strictly after `from` that matches. */
  next(from: Date): Date;
  matches(at: Date): boolean;
}

const FIELDS: ReadonlyArray<{ name: string; min: number; max: number }> = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 7 },
];

function parseField(text: string, spec: { name: string; min: number; max: number }, expression: string): CronField {
  const values = new Set<number>();
  const bad = (why: string) => new MinaraError('INVALID_ARGUMENT', `Cron "${expression}": ${spec.name} "${text}" ${why} (allowed ${spec.min}–${spec.max}).`);
  for (const part of text.split(',')) {
    const m = /^(\*|\d+(?:-\d+)?)(?:\/(\d+))?$/.exec(part);
    if (!m) throw bad('is not a number, range, list, * or step');
    const step = m[2] === undefined ? 1 : Number(m[2]);
    if (step < 1) throw bad('has a step below 1');
    let lo = spec.min;
    let hi = spec.max;
    if (m[1] !== '*') {
      const [a, b] = m[1]!.split('-').map(Number) as [number, number | undefined];
      lo = a;
      hi = b ?? (m[2] === undefined ? a : spec.max);
    }
    if (lo < spec.min || hi > spec.max || lo > hi) throw bad('is out of range');
    for (let v = lo; v <= hi; v += step) values.add(spec.name === 'day-of-week' && v === 7 ? 0 : v);
  }
  return { values, any: text === '*' };
}

/**
 * Parse a five-field cron expression (`*`, numbers, ranges `a-b`, lists `a,b`, steps `*\/n`), in UTC.
 * Day-of-month and day-of-week follow cron's rule: when both are restricted, either may match.
 *
 * @example
 * ```ts
 * parseCron('*\/15 * * * *').next(new Date('2026-01-01T00:07:00Z')); // 00:15
 * ```
 */
export function parseCron(expression: string): CronSchedule {
  if (typeof expression !== 'string') throw new MinaraError('INVALID_ARGUMENT', 'Cron expression must be a string.');
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new MinaraError('INVALID_ARGUMENT', `Cron "${expression}": expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}.`);
  const [minute, hour, dom, month, dow] = parts.map((p, i) => parseField(p, FIELDS[i]!, expression)) as [CronField, CronField, CronField, CronField, CronField];
  const matches = (at: Date): boolean => {
    if (!minute.values.has(at.getUTCMinutes()) || !hour.values.has(at.getUTCHours()) || !month.values.has(at.getUTCMonth() + 1)) return false;
    const domOk = dom.values.has(at.getUTCDate());
    const dowOk = dow.values.has(at.getUTCDay());
    if (dom.any && dow.any) return true;
    if (dom.any) return dowOk;
    if (dow.any) return domOk;
    return domOk || dowOk;
  };
  return {
    expression,
    matches,
    next(from) {
      const t = new Date(from.getTime());
      t.setUTCSeconds(0, 0);
      t.setUTCMinutes(t.getUTCMinutes() + 1);
      // At most ~4 years of minutes; cron expressions that never match (Feb 31) stop with an error.
      for (let i = 0; i < 60 * 24 * 366 * 4; i++) {
        if (matches(t)) return t;
        t.setUTCMinutes(t.getUTCMinutes() + 1);
      }
      throw new MinaraError('INVALID_ARGUMENT', `Cron "${expression}" never matches.`);
    },
  };
}
