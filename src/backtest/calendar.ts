/**
 * Market calendars: `crypto` trades 24/7 (every interval step is a bar); `equity` trades on weekdays inside a
 * session (default 09:30–16:00 America/New_York). Exchange holidays are not listed: a weekday every symbol
 * lacks is taken as a holiday, a weekday only some symbols lack is a gap (see {@link createBarSet}).
 */
import type { Calendar } from './types';

export const DAY_MS = 86_400_000;

/** Parse an interval (`1m`, `5m`, `1h`, `4h`, `1d`, `1w`, or ms) to milliseconds. */
export function parseInterval(interval: string | number): number {
  if (typeof interval === 'number') {
    if (!(interval > 0) || !Number.isFinite(interval)) throw new TypeError(`interval: expected a positive number of ms, got ${interval}`);
    return interval;
  }
  const m = /^(\d+)\s*(m|h|d|w)$/.exec(interval.trim());
  if (!m) throw new TypeError(`interval: expected 1m, 5m, 15m, 1h, 4h, 1d or 1w (or ms), got ${JSON.stringify(interval)}`);
  const unit = { m: 60_000, h: 3_600_000, d: DAY_MS, w: 7 * DAY_MS }[m[2] as 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}

interface Session { readonly tz: string; readonly openMin: number; readonly closeMin: number }

function session(cal: Calendar & { kind: 'equity' }): Session {
  const hm = (s: string, field: string) => {
    const m = /^(\d{1,2}):(\d{2})$/.exec(s);
    if (!m) throw new TypeError(`calendar.${field}: expected HH:MM, got ${JSON.stringify(s)}`);
    return Number(m[1]) * 60 + Number(m[2]);
  };
  return { tz: cal.timezone ?? 'America/New_York', openMin: hm(cal.open ?? '09:30', 'open'), closeMin: hm(cal.close ?? '16:00', 'close') };
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function localParts(time: number, tz: string): { weekday: number; minutes: number } {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', weekday: 'short', hour: '2-digit', minute: '2-digit' });
    formatters.set(tz, f);
  }
  let weekday = 0;
  let hour = 0;
  let minute = 0;
  for (const p of f.formatToParts(time)) {
    if (p.type === 'weekday') weekday = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(p.value);
    else if (p.type === 'hour') hour = Number(p.value);
    else if (p.type === 'minute') minute = Number(p.value);
  }
  return { weekday, minutes: hour * 60 + minute };
}

/**
 * True when a bar opening at `time` lies in the calendar's trading time. Daily (or longer) equity bars need
 * only a weekday (of the UTC date, as daily files stamp them); intraday bars must open inside the session.
 */
export function inSession(calendar: Calendar, time: number, intervalMs: number): boolean {
  if (calendar.kind === 'crypto') return true;
  if (intervalMs >= DAY_MS) {
    const wd = new Date(time).getUTCDay();
    return wd !== 0 && wd !== 6;
  }
  const s = session(calendar);
  const { weekday, minutes } = localParts(time, s.tz);
  return weekday !== 0 && weekday !== 6 && minutes >= s.openMin && minutes + intervalMs / 60_000 <= s.closeMin;
}

/** Validate a calendar's fields (throws naming the field). */
export function checkCalendar(calendar: Calendar): Calendar {
  if (calendar.kind === 'crypto') return calendar;
  if (calendar.kind !== 'equity') throw new TypeError(`calendar.kind: expected 'crypto' or 'equity', got ${JSON.stringify((calendar as { kind: unknown }).kind)}`);
  const s = session(calendar);
  if (s.closeMin <= s.openMin) throw new TypeError('calendar.close: must be after calendar.open');
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: s.tz });
  } catch {
    throw new TypeError(`calendar.timezone: unknown time zone ${JSON.stringify(s.tz)}`);
  }
  return calendar;
}

/** The next trading-time bar open after `time` on the calendar (used to find gaps and to generate synthetic bars). */
export function nextSessionTime(calendar: Calendar, time: number, intervalMs: number): number {
  let t = time + intervalMs;
  if (calendar.kind === 'crypto') return t;
  for (let guard = 0; guard < 100_000; guard++, t += intervalMs) if (inSession(calendar, t, intervalMs)) return t;
  throw new RangeError('calendar: no session time found after ' + new Date(time).toISOString());
}

/** Periods per year for annualisation: calendar days for crypto (365 × bars a day); 252 sessions for equities. */
export function periodsPerYear(calendar: Calendar, intervalMs: number): number {
  if (calendar.kind === 'crypto') return (365 * DAY_MS) / intervalMs;
  if (intervalMs >= DAY_MS) return (252 * DAY_MS) / intervalMs;
  const s = session(calendar);
  return 252 * Math.max(1, Math.floor(((s.closeMin - s.openMin) * 60_000) / intervalMs));
}
