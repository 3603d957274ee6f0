/**
 * Validation and alignment of bars: every symbol's rows are checked (order, duplicates, prices, high/low,
 * calendar, gaps) and then laid on one shared clock as typed-array columns. Bad data gets a
 * `BACKTEST_DATA_INVALID` error naming the source and row, or, only with an explicit `repair`, a fix that is
 * recorded in the data source's `repairs` (nothing is ever dropped silently).
 */
import { createHash } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import { checkCalendar, DAY_MS, inSession } from './calendar';
import type { Bar, BarSet, Calendar, DataSource } from './types';

/** Which problems {@link createBarSet} may fix instead of throwing. Each fix is listed in `DataSource.repairs`. */
export interface BarRepairOptions {
  /** Sort out-of-order rows by time. */
  readonly sort?: boolean;
  /** Keep the last of several rows with the same symbol and time. */
  readonly dedupe?: boolean;
  /** Insert a flat bar (open = high = low = close = previous close, volume 0) in each gap. */
  readonly fillGaps?: boolean;
  /** Drop rows with a zero, negative or non-finite price. */
  readonly dropBadPrices?: boolean;
  /** Widen high and low to contain open and close (and swap a high below the low). */
  readonly fixHighLow?: boolean;
  /** Drop rows outside the calendar's trading time (an equity bar on a Saturday). */
  readonly dropOffSession?: boolean;
}

/** Options of {@link createBarSet}. */
export interface CreateBarSetOptions {
  /** @default { kind: 'crypto' } */
  readonly calendar?: Calendar;
  /** Bar interval (ms); inferred as the smallest step between a symbol's rows when absent. */
  readonly intervalMs?: number;
  /** `true` turns on every repair. @default none (errors) */
  readonly repair?: boolean | BarRepairOptions;
  /** Where the rows came from (one per file); a `memory` source with the rows' hash is made when absent. */
  readonly sources?: readonly DataSource[];
  /** Name used in error messages. @default 'bars' */
  readonly label?: string;
  /** Row numbers for error messages (e.g. the file line of each bar), parallel to the input. */
  readonly rowNumbers?: readonly number[];
  /** Where each bar came from (a file name) for error messages, parallel to the input. @default the label */
  readonly rowSources?: readonly string[];
}

const ALL_REPAIRS: Required<BarRepairOptions> = { sort: true, dedupe: true, fillGaps: true, dropBadPrices: true, fixHighLow: true, dropOffSession: true };

const bad = (message: string) => new MinaraError('BACKTEST_DATA_INVALID', message);
const iso = (t: number) => (Number.isFinite(t) ? new Date(t).toISOString() : String(t));

interface Row { bar: Bar; row: number; src: string }

/** Validate (or, with `repair`, fix) the bars and align every symbol on one clock. */
export function createBarSet(bars: readonly Bar[], options: CreateBarSetOptions = {}): BarSet {
  const calendar = checkCalendar(options.calendar ?? { kind: 'crypto' });
  const repair: BarRepairOptions = options.repair === true ? ALL_REPAIRS : options.repair || {};
  const label = options.label ?? 'bars';
  if (bars.length === 0) throw bad(`${label}: no bars`);
  const repairs: string[] = [];
  const bySymbol = new Map<string, Row[]>();
  bars.forEach((bar, i) => {
    const row = options.rowNumbers?.[i] ?? i + 1;
    const src = options.rowSources?.[i] ?? label;
    if (typeof bar.symbol !== 'string' || bar.symbol.trim() === '') throw bad(`${src} row ${row}: symbol: expected a non-empty string`);
    if (!Number.isFinite(bar.time)) throw bad(`${src} row ${row}: time: expected a timestamp, got ${String(bar.time)}`);
    let list = bySymbol.get(bar.symbol);
    if (!list) bySymbol.set(bar.symbol, (list = []));
    list.push({ bar, row, src });
  });
  const symbols = [...bySymbol.keys()].sort();
  for (const symbol of symbols) bySymbol.set(symbol, checkRows(bySymbol.get(symbol) ?? [], symbol, label, repair, repairs));
  const intervalMs = options.intervalMs ?? inferInterval(bySymbol);
  if (!(intervalMs > 0)) throw bad(`${label}: cannot infer the bar interval (each symbol needs at least two rows, or pass intervalMs)`);
  for (const symbol of symbols) bySymbol.set(symbol, checkGaps(bySymbol.get(symbol) ?? [], symbol, label, calendar, intervalMs, repair, repairs));
  const sources = options.sources ?? [{ kind: 'memory' as const, sha256: hashBars(bars), rows: bars.length }];
  const withRepairs = repairs.length === 0 ? sources : sources.map((s, i) => (i === 0 ? { ...s, repairs: [...(s.repairs ?? []), ...repairs] } : s));
  return alignBars(symbols, bySymbol, intervalMs, calendar, withRepairs, label);
}

function checkRows(rows: Row[], symbol: string, label: string, repair: BarRepairOptions, repairs: string[]): Row[] {
  // order and duplicates
  for (let i = 1; i < rows.length; i++) {
    const prev = rows[i - 1] as Row;
    const cur = rows[i] as Row;
    if (cur.bar.time < prev.bar.time) {
      if (!repair.sort) throw bad(`${cur.src} row ${cur.row}: ${symbol} at ${iso(cur.bar.time)} is out of order (${prev.src} row ${prev.row} is at ${iso(prev.bar.time)}); sort the file or pass repair: { sort: true }`);
      repairs.push(`sorted ${symbol} by time`);
      rows = [...rows].sort((a, b) => a.bar.time - b.bar.time || a.row - b.row);
      break;
    }
  }
  const out: Row[] = [];
  for (const r of rows) {
    const last = out[out.length - 1];
    if (last && last.bar.time === r.bar.time) {
      if (!repair.dedupe) throw bad(`${r.src} row ${r.row}: duplicate ${symbol} bar at ${iso(r.bar.time)} (also ${last.src} row ${last.row}); pass repair: { dedupe: true } to keep the last`);
      repairs.push(`${last.src} row ${last.row}: dropped duplicate ${symbol} at ${iso(r.bar.time)} (kept ${r.src} row ${r.row})`);
      out[out.length - 1] = r;
      continue;
    }
    out.push(r);
  }
  const kept: Row[] = [];
  for (const r of out) {
    const fixed = checkPrices(r, symbol, label, repair, repairs);
    if (fixed) kept.push(fixed);
  }
  if (kept.length === 0) throw bad(`${label}: ${symbol} has no valid bars left`);
  return kept;
}

function checkPrices(r: Row, symbol: string, label: string, repair: BarRepairOptions, repairs: string[]): Row | undefined {
  const { open, high, low, close, volume } = r.bar;
  for (const [field, v] of [['open', open], ['high', high], ['low', low], ['close', close]] as const) {
    if (!(v > 0) || !Number.isFinite(v)) {
      if (!repair.dropBadPrices) throw bad(`${r.src} row ${r.row}: ${symbol} ${field} must be a positive number, got ${String(v)}; pass repair: { dropBadPrices: true } to drop the row`);
      repairs.push(`${r.src} row ${r.row}: dropped ${symbol} bar at ${iso(r.bar.time)} (${field} ${String(v)})`);
      return undefined;
    }
  }
  if (!(volume >= 0) || !Number.isFinite(volume)) throw bad(`${r.src} row ${r.row}: ${symbol} volume must be a non-negative number, got ${String(volume)}`);
  const hi = Math.max(open, close);
  const lo = Math.min(open, close);
  if (high < low || high < hi || low > lo) {
    if (!repair.fixHighLow) throw bad(`${r.src} row ${r.row}: ${symbol} high ${high} / low ${low} do not contain open ${open} and close ${close}${high < low ? ' (high < low)' : ''}; pass repair: { fixHighLow: true }`);
    repairs.push(`${r.src} row ${r.row}: widened ${symbol} high/low at ${iso(r.bar.time)}`);
    return { row: r.row, src: r.src, bar: { ...r.bar, high: Math.max(high, low, hi), low: Math.min(high, low, lo) } };
  }
  return r;
}

function inferInterval(bySymbol: Map<string, Row[]>): number {
  let best = Number.POSITIVE_INFINITY;
  for (const rows of bySymbol.values()) for (let i = 1; i < rows.length; i++) best = Math.min(best, (rows[i] as Row).bar.time - (rows[i - 1] as Row).bar.time);
  return Number.isFinite(best) ? best : 0;
}

function checkGaps(rows: Row[], symbol: string, label: string, calendar: Calendar, intervalMs: number, repair: BarRepairOptions, repairs: string[]): Row[] {
  const out: Row[] = [];
  for (const r of rows) {
    if (!inSession(calendar, r.bar.time, intervalMs)) {
      if (!repair.dropOffSession) throw bad(`${r.src} row ${r.row}: ${symbol} bar at ${iso(r.bar.time)} falls outside the equity calendar's sessions; pass repair: { dropOffSession: true } or use calendar crypto`);
      repairs.push(`${r.src} row ${r.row}: dropped off-session ${symbol} bar at ${iso(r.bar.time)}`);
      continue;
    }
    const prev = out[out.length - 1];
    if (prev) {
      const missing = missingSteps(prev.bar.time, r.bar.time, calendar, intervalMs);
      if (missing.length > 0) {
        if (!repair.fillGaps)
          throw bad(`${r.src} row ${r.row}: gap in ${symbol}: ${missing.length} bar(s) missing between ${iso(prev.bar.time)} and ${iso(r.bar.time)} (interval ${intervalMs} ms); pass repair: { fillGaps: true } to forward-fill`);
        repairs.push(`${r.src} row ${r.row}: forward-filled ${missing.length} ${symbol} bar(s) from ${iso(missing[0] as number)}`);
        const c = prev.bar.close;
        for (const t of missing) out.push({ row: r.row, src: r.src, bar: { symbol, time: t, open: c, high: c, low: c, close: c, volume: 0 } });
      }
    }
    out.push(r);
  }
  return out;
}

/** The calendar steps strictly between `a` and `b`. Equity daily bars skip weekends; intraday equity gaps count only within a session day. */
function missingSteps(a: number, b: number, calendar: Calendar, intervalMs: number): number[] {
  const out: number[] = [];
  if ((b - a) % intervalMs !== 0 && calendar.kind === 'crypto') return out; // off-grid timestamps: not a gap by this rule
  for (let t = a + intervalMs; t < b && out.length < 1_000_000; t += intervalMs) {
    if (calendar.kind === 'crypto') out.push(t);
    else if (intervalMs >= DAY_MS ? inSession(calendar, t, intervalMs) : inSession(calendar, t, intervalMs) && Math.floor(t / DAY_MS) === Math.floor(a / DAY_MS)) out.push(t);
  }
  return out;
}

function alignBars(symbols: string[], bySymbol: Map<string, Row[]>, intervalMs: number, calendar: Calendar, sources: readonly DataSource[], label: string): BarSet {
  const clock = new Set<number>();
  for (const rows of bySymbol.values()) for (const r of rows) clock.add(r.bar.time);
  const times = Float64Array.from([...clock].sort((x, y) => x - y));
  const n = times.length;
  const index = new Map<number, number>();
  times.forEach((t, i) => index.set(t, i));
  const col = () => symbols.map(() => new Float64Array(n).fill(Number.NaN));
  const open = col(), high = col(), low = col(), close = col(), volume = col();
  symbols.forEach((symbol, s) => {
    const rows = bySymbol.get(symbol) ?? [];
    for (const { bar } of rows) {
      const i = index.get(bar.time) as number;
      (open[s] as Float64Array)[i] = bar.open;
      (high[s] as Float64Array)[i] = bar.high;
      (low[s] as Float64Array)[i] = bar.low;
      (close[s] as Float64Array)[i] = bar.close;
      (volume[s] as Float64Array)[i] = bar.volume;
    }
    // a symbol that lacks a clock step between its first and last bar (another symbol traded then) has a gap
    const first = index.get((rows[0] as Row).bar.time) as number;
    const last = index.get((rows[rows.length - 1] as Row).bar.time) as number;
    for (let i = first; i <= last; i++)
      if (Number.isNaN((close[s] as Float64Array)[i] as number))
        throw bad(`${label}: gap in ${symbol}: no bar at ${iso(times[i] as number)} where other symbols have one; fill it or pass repair: { fillGaps: true }`);
  });
  return { symbols, times, intervalMs, calendar, open, high, low, close, volume, sources };
}

/** sha256 of bars in a canonical text form (for sources built in memory). */
export function hashBars(bars: readonly Bar[]): string {
  const h = createHash('sha256');
  for (const b of bars) h.update(`${b.symbol},${b.time},${b.open},${b.high},${b.low},${b.close},${b.volume}\n`);
  return h.digest('hex');
}

/** The bars of one symbol as objects (the slow, convenient form). */
export function barsOf(set: BarSet, symbol: string, from = 0, to = set.times.length): Bar[] {
  const s = set.symbols.indexOf(symbol);
  if (s < 0) throw new MinaraError('INVALID_ARGUMENT', `symbol: ${JSON.stringify(symbol)} is not in the bar set (${set.symbols.join(', ')})`);
  const out: Bar[] = [];
  const c = set.close[s] as Float64Array;
  for (let i = Math.max(0, from); i < Math.min(to, set.times.length); i++) {
    if (Number.isNaN(c[i] as number)) continue;
    out.push({ symbol, time: set.times[i] as number, open: (set.open[s] as Float64Array)[i] as number, high: (set.high[s] as Float64Array)[i] as number, low: (set.low[s] as Float64Array)[i] as number, close: c[i] as number, volume: (set.volume[s] as Float64Array)[i] as number });
  }
  return out;
}
