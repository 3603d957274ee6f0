/**
 * Bar loaders for the formats people already have: a generic header-named CSV, Binance klines (JSON or the
 * headerless CSV of data.binance.vision), CoinGecko `market_chart` JSON and Hyperliquid `candleSnapshot` JSON.
 * Each parser returns plain {@link Bar}s with the row each came from; {@link loadBars} reads files, hashes them
 * (sha256, for run_config.json) and validates through {@link createBarSet}.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseCsv } from 'csv-parse/sync';
import { MinaraError } from '../errors/minara-error';
import { createBarSet, type CreateBarSetOptions } from './bars';
import type { Bar, BarSet, DataSource } from './types';

/** A bar file format. `auto` decides from the extension and the content. */
export type BarFormat = 'csv' | 'binance' | 'coingecko' | 'hyperliquid' | 'auto';

/** Parsed rows: bars with the line (CSV) or array index + 1 (JSON) each came from. */
export interface ParsedBars {
  readonly bars: Bar[];
  readonly rows: number[];
  readonly format: Exclude<BarFormat, 'auto'>;
}

const bad = (message: string) => new MinaraError('BACKTEST_DATA_INVALID', message);

/** Seconds, milliseconds or microseconds since epoch, or an ISO date → ms. */
export function parseTime(value: unknown, where: string): number {
  if (typeof value === 'number' || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value.trim()))) {
    const n = Number(value);
    if (!Number.isFinite(n)) throw bad(`${where}: time: expected a timestamp, got ${JSON.stringify(value)}`);
    if (Math.abs(n) >= 1e14) return Math.floor(n / 1000); // microseconds (Binance spot files since 2025)
    if (Math.abs(n) < 1e11) return n * 1000; // seconds
    return n;
  }
  if (typeof value === 'string') {
    const s = value.trim();
    const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : /[zZ]|[+-]\d{2}:?\d{2}$/.test(s) ? s : `${s.replace(' ', 'T')}Z`);
    if (Number.isFinite(t)) return t;
  }
  throw bad(`${where}: time: expected a timestamp (s, ms or ISO date), got ${JSON.stringify(value)}`);
}

function num(value: unknown, where: string, field: string): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  if (Number.isNaN(n)) throw bad(`${where}: ${field}: expected a number, got ${JSON.stringify(value)}`);
  return n;
}

const TIME_COLUMNS = ['time', 'timestamp', 'date', 'datetime', 'open_time', 'opentime', 't', 'ts'];
const COLUMN_ALIASES: Record<string, readonly string[]> = {
  open: ['open', 'o'],
  high: ['high', 'h'],
  low: ['low', 'l'],
  close: ['close', 'c', 'adj_close_unused'],
  volume: ['volume', 'v', 'vol'],
  symbol: ['symbol', 'ticker', 'asset', 's', 'coin'],
};

/** A CSV with a header row naming time/date, open, high, low, close, volume and optionally symbol (case-insensitive). */
export function parseGenericCsv(text: string, options: { readonly symbol?: string; readonly label?: string } = {}): ParsedBars {
  const label = options.label ?? 'csv';
  const records = splitCsv(text);
  const header = (records[0] ?? []).map((h) => h.toLowerCase().replace(/\s+/g, '_'));
  const find = (names: readonly string[]) => header.findIndex((h) => names.includes(h));
  const cols = {
    time: find(TIME_COLUMNS),
    open: find(COLUMN_ALIASES.open ?? []),
    high: find(COLUMN_ALIASES.high ?? []),
    low: find(COLUMN_ALIASES.low ?? []),
    close: find(COLUMN_ALIASES.close ?? []),
    volume: find(COLUMN_ALIASES.volume ?? []),
    symbol: find(COLUMN_ALIASES.symbol ?? []),
  };
  for (const k of ['time', 'open', 'high', 'low', 'close'] as const)
    if (cols[k] < 0) throw bad(`${label} line 1: header: no ${k} column (expected one of ${(k === 'time' ? TIME_COLUMNS : COLUMN_ALIASES[k] ?? []).join(', ')}); got ${header.join(', ')}`);
  if (cols.symbol < 0 && !options.symbol) throw bad(`${label} line 1: header: no symbol column; pass symbol`);
  const bars: Bar[] = [];
  const rows: number[] = [];
  for (let i = 1; i < records.length; i++) {
    const r = records[i] as string[];
    const where = `${label} line ${i + 1}`;
    bars.push({
      symbol: cols.symbol >= 0 ? (r[cols.symbol] as string) : (options.symbol as string),
      time: parseTime(r[cols.time], where),
      open: num(r[cols.open], where, 'open'),
      high: num(r[cols.high], where, 'high'),
      low: num(r[cols.low], where, 'low'),
      close: num(r[cols.close], where, 'close'),
      volume: cols.volume >= 0 ? num(r[cols.volume], where, 'volume') : 0,
    });
    rows.push(i + 1);
  }
  return { bars, rows, format: 'csv' };
}

/** Rows of a CSV: a plain split when the text has no quotes (the common, fast case), else csv-parse. */
function splitCsv(text: string): string[][] {
  if (text.includes('"')) return parseCsv(text, { bom: true, skip_empty_lines: true, trim: true, relax_column_count: false }) as string[][];
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const out: string[][] = [];
  let width = -1;
  let line = 0;
  for (const raw of body.split(/\r?\n/)) {
    line++;
    if (raw.trim() === '') continue;
    const cells = raw.split(',').map((c) => c.trim());
    if (width < 0) width = cells.length;
    else if (cells.length !== width) throw bad(`csv line ${line}: ${cells.length} columns, the header has ${width}`);
    out.push(cells);
  }
  return out;
}

/**
 * Binance klines: the REST `GET /api/v3/klines` JSON (an array of arrays) or the headerless CSV files of
 * data.binance.vision: `[openTime, open, high, low, close, volume, closeTime, quoteVolume, trades, …]`.
 * Volume is in the base asset.
 */
export function parseBinanceKlines(input: string | unknown, options: { readonly symbol: string; readonly label?: string }): ParsedBars {
  const label = options.label ?? 'binance';
  let rowsIn: unknown[][];
  if (typeof input === 'string' && !input.trimStart().startsWith('[')) {
    rowsIn = (parseCsv(input, { skip_empty_lines: true, trim: true, relax_column_count: true }) as string[][]).filter((r) => !/[a-z]/i.test(r[0] ?? ''));
  } else {
    const json = typeof input === 'string' ? JSON.parse(input) : input;
    if (!Array.isArray(json)) throw bad(`${label}: expected an array of klines`);
    rowsIn = json as unknown[][];
  }
  const bars: Bar[] = [];
  const rows: number[] = [];
  rowsIn.forEach((k, i) => {
    const where = `${label} row ${i + 1}`;
    if (!Array.isArray(k) || k.length < 6) throw bad(`${where}: expected [openTime, open, high, low, close, volume, …]`);
    bars.push({ symbol: options.symbol, time: parseTime(k[0], where), open: num(k[1], where, 'open'), high: num(k[2], where, 'high'), low: num(k[3], where, 'low'), close: num(k[4], where, 'close'), volume: num(k[5], where, 'volume') });
    rows.push(i + 1);
  });
  return { bars, rows, format: 'binance' };
}

/**
 * CoinGecko `GET /coins/{id}/market_chart`: `{ prices: [[ms, price]], total_volumes: [[ms, usd]] }`. CoinGecko
 * gives one price per point, so each bar is flat (open = high = low = close = the price), and volume is the
 * 24 h volume in USD at that point divided by the price (units), as CoinGecko reports a rolling figure.
 */
export function parseCoinGeckoMarketChart(input: string | unknown, options: { readonly symbol: string; readonly label?: string }): ParsedBars {
  const label = options.label ?? 'coingecko';
  const json = (typeof input === 'string' ? JSON.parse(input) : input) as { prices?: unknown; total_volumes?: unknown };
  if (!json || !Array.isArray(json.prices)) throw bad(`${label}: prices: expected an array of [ms, price] (CoinGecko market_chart)`);
  const volumes = new Map<number, number>();
  if (Array.isArray(json.total_volumes)) for (const v of json.total_volumes as unknown[][]) if (Array.isArray(v)) volumes.set(Number(v[0]), Number(v[1]));
  const bars: Bar[] = [];
  const rows: number[] = [];
  (json.prices as unknown[]).forEach((p, i) => {
    const where = `${label} prices[${i}]`;
    if (!Array.isArray(p) || p.length < 2) throw bad(`${where}: expected [ms, price]`);
    const time = parseTime(p[0], where);
    const price = num(p[1], where, 'price');
    const usd = volumes.get(Number(p[0])) ?? 0;
    bars.push({ symbol: options.symbol, time, open: price, high: price, low: price, close: price, volume: price > 0 ? usd / price : 0 });
    rows.push(i + 1);
  });
  return { bars, rows, format: 'coingecko' };
}

/** Hyperliquid `POST /info {type: 'candleSnapshot'}`: `[{ t, T, s, i, o, c, h, l, v, n }]` with prices as strings. */
export function parseHyperliquidCandles(input: string | unknown, options: { readonly symbol?: string; readonly label?: string } = {}): ParsedBars {
  const label = options.label ?? 'hyperliquid';
  const json = typeof input === 'string' ? JSON.parse(input) : input;
  if (!Array.isArray(json)) throw bad(`${label}: expected an array of candles ({ t, o, h, l, c, v, s })`);
  const bars: Bar[] = [];
  const rows: number[] = [];
  (json as Record<string, unknown>[]).forEach((c, i) => {
    const where = `${label} [${i}]`;
    if (!c || typeof c !== 'object') throw bad(`${where}: expected a candle object`);
    const symbol = options.symbol ?? (typeof c.s === 'string' ? c.s : undefined);
    if (!symbol) throw bad(`${where}: s: no coin name; pass symbol`);
    bars.push({ symbol, time: parseTime(c.t, where), open: num(c.o, where, 'o'), high: num(c.h, where, 'h'), low: num(c.l, where, 'l'), close: num(c.c, where, 'c'), volume: num(c.v, where, 'v') });
    rows.push(i + 1);
  });
  return { bars, rows, format: 'hyperliquid' };
}

/** Detect the format of a file's text. */
export function detectBarFormat(text: string, file = ''): Exclude<BarFormat, 'auto'> {
  const head = text.trimStart();
  if (head.startsWith('{')) return 'coingecko';
  if (head.startsWith('[')) return /^\[\s*\{/.test(head) ? 'hyperliquid' : 'binance';
  const firstLine = head.split(/\r?\n/, 1)[0] ?? '';
  if (/[a-z]/i.test(firstLine) || file.endsWith('.tsv')) return 'csv';
  return 'binance';
}

/** Parse text in a format (auto-detected by default). */
export function parseBars(text: string, options: { readonly format?: BarFormat; readonly symbol?: string; readonly label?: string; readonly file?: string } = {}): ParsedBars {
  const format = !options.format || options.format === 'auto' ? detectBarFormat(text, options.file) : options.format;
  const symbol = options.symbol ?? (options.file ? path.basename(options.file).replace(/\.[^.]+$/, '').split(/[-_]/)[0]?.toUpperCase() : undefined);
  const base = { label: options.label ?? options.file ?? format };
  switch (format) {
    case 'csv':
      return parseGenericCsv(text, { ...base, ...(options.symbol ? { symbol: options.symbol } : symbol ? { symbol } : {}) });
    case 'binance':
      return parseBinanceKlines(text, { ...base, symbol: requireSymbol(symbol, base.label) });
    case 'coingecko':
      return parseCoinGeckoMarketChart(text, { ...base, symbol: requireSymbol(symbol, base.label) });
    case 'hyperliquid':
      return parseHyperliquidCandles(text, { ...base, ...(options.symbol ? { symbol: options.symbol } : {}) });
    default:
      throw new MinaraError('INVALID_ARGUMENT', `format: expected csv, binance, coingecko, hyperliquid or auto, got ${JSON.stringify(format)}`);
  }
}

function requireSymbol(symbol: string | undefined, label: string): string {
  if (!symbol) throw bad(`${label}: the format carries no symbol; pass symbol`);
  return symbol;
}

/** One input file of {@link loadBars}. */
export interface BarFileSpec {
  readonly path: string;
  readonly format?: BarFormat;
  /** Symbol for formats without one (Binance, CoinGecko); default: the file name up to the first `-` or `_`, upper-cased. */
  readonly symbol?: string;
}

/** Read bar files (several symbols on one clock), hash them and validate them into a {@link BarSet}. */
export async function loadBars(files: string | BarFileSpec | readonly (string | BarFileSpec)[], options: Omit<CreateBarSetOptions, 'sources' | 'rowNumbers' | 'rowSources' | 'label'> = {}): Promise<BarSet> {
  const specs = (Array.isArray(files) ? files : [files]).map((f: string | BarFileSpec) => (typeof f === 'string' ? { path: f } : f));
  if (specs.length === 0) throw new MinaraError('INVALID_ARGUMENT', 'files: expected at least one bar file');
  const bars: Bar[] = [];
  const rows: number[] = [];
  const rowSources: string[] = [];
  const sources: DataSource[] = [];
  for (const spec of specs) {
    let buf: Buffer;
    try {
      buf = await readFile(spec.path);
    } catch (error) {
      throw new MinaraError('INVALID_ARGUMENT', `data: cannot read ${spec.path}: ${(error as Error).message}`);
    }
    const text = buf.toString('utf8');
    const parsed = parseBars(text, { ...(spec.format ? { format: spec.format } : {}), ...(spec.symbol ? { symbol: spec.symbol } : {}), file: spec.path, label: path.basename(spec.path) });
    for (let i = 0; i < parsed.bars.length; i++) {
      bars.push(parsed.bars[i] as Bar);
      rows.push(parsed.rows[i] as number);
      rowSources.push(path.basename(spec.path));
    }
    sources.push({ kind: 'file', path: spec.path, format: parsed.format, sha256: createHash('sha256').update(buf).digest('hex'), rows: parsed.bars.length });
  }
  return createBarSet(bars, { ...options, sources, rowNumbers: rows, rowSources, label: specs.length === 1 ? path.basename((specs[0] as BarFileSpec).path) : 'data' });
}
