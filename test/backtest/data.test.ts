import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { barsOf, type Bar, createBarSet, detectBarFormat, generateBars, inSession, loadBars, parseInterval, periodsPerYear } from '@minara/agent/backtest';

const fixture = (name: string) => path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', name);
const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const bar = (i: number, over: Partial<Bar> = {}): Bar => ({ symbol: 'AAA', time: T0 + i * DAY, open: 10, high: 11, low: 9, close: 10.5, volume: 100, ...over });

describe('bar loaders (fixtures of each format)', () => {
  it('reads a generic header-named CSV with several symbols onto one clock', async () => {
    const set = await loadBars(fixture('generic.csv'));
    expect(set.symbols).toEqual(['AAA', 'BBB']);
    expect(set.times.length).toBe(4);
    expect(set.intervalMs).toBe(DAY);
    expect(barsOf(set, 'BBB')[1]).toEqual({ symbol: 'BBB', time: T0 + DAY, open: 50.5, high: 52, low: 50, close: 51.5, volume: 2100 });
    expect(set.sources[0]).toMatchObject({ kind: 'file', format: 'csv', rows: 8 });
    expect(set.sources[0]?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads Binance klines (headerless CSV and REST JSON), CoinGecko market_chart and Hyperliquid candleSnapshot', async () => {
    const btc = await loadBars({ path: fixture('BTCUSDT-1d.csv'), symbol: 'BTC' });
    expect(barsOf(btc, 'BTC')[0]).toEqual({ symbol: 'BTC', time: 1704067200000, open: 42283.58, high: 44184.1, low: 42180.77, close: 44179.55, volume: 27174.29903 });
    const eth = await loadBars(fixture('ETHUSDT-klines.json'));
    expect(eth.symbols).toEqual(['ETHUSDT']);
    expect(barsOf(eth, 'ETHUSDT')[2]?.close).toBe(2209.72);
    const sol = await loadBars({ path: fixture('sol-market_chart.json'), symbol: 'SOL' });
    const s0 = barsOf(sol, 'SOL')[0] as Bar;
    expect([s0.open, s0.high, s0.low, s0.close]).toEqual([101.51, 101.51, 101.51, 101.51]);
    expect(s0.volume).toBeCloseTo(1_880_000_000 / 101.51, 6);
    const hype = await loadBars(fixture('hyperliquid-candles.json'));
    expect(hype.symbols).toEqual(['HYPE']);
    expect(hype.intervalMs).toBe(3_600_000);
    expect(barsOf(hype, 'HYPE')[2]).toMatchObject({ open: 10.21, close: 10.45, volume: 1733.25 });
    expect(detectBarFormat('{"prices":[]}')).toBe('coingecko');
    expect(detectBarFormat('[{"t":1}]')).toBe('hyperliquid');
    expect(detectBarFormat('[[1,"2"]]')).toBe('binance');
    expect(detectBarFormat('1704067200000,1,2,3,4,5')).toBe('binance');
  });

  it('loads several files (one symbol each) on one shared clock', async () => {
    const set = await loadBars([{ path: fixture('BTCUSDT-1d.csv'), symbol: 'BTC' }, { path: fixture('ETHUSDT-klines.json'), symbol: 'ETH' }]);
    expect(set.symbols).toEqual(['BTC', 'ETH']);
    expect(set.times.length).toBe(4);
    expect(Number.isNaN(set.close[1]?.[3] as number)).toBe(true); // ETH ends a day earlier: NaN after its last bar, not a gap
    expect(set.sources.map((s) => s.format)).toEqual(['binance', 'binance']);
  });
});

describe('bad data: a clear error naming the row, or an explicit repair (nothing silently dropped)', () => {
  const cases: [string, Bar[], RegExp][] = [
    ['out of order', [bar(0), bar(2), bar(1), bar(3)], /row 3: AAA at 2024-01-02T00:00:00.000Z is out of order \(bars row 2/],
    ['duplicate', [bar(0), bar(1), bar(1, { close: 10.6 }), bar(2)], /row 3: duplicate AAA bar at 2024-01-02/],
    ['zero price', [bar(0), bar(1, { close: 0 })], /row 2: AAA close must be a positive number, got 0/],
    ['negative price', [bar(0), bar(1, { open: -1 })], /row 2: AAA open must be a positive number, got -1/],
    ['high < low', [bar(0), bar(1, { high: 8, low: 9 })], /row 2: AAA high 8 \/ low 9 .*\(high < low\)/],
    ['gap', [bar(0), bar(1), bar(4)], /row 3: gap in AAA: 2 bar\(s\) missing between 2024-01-02.* and 2024-01-05/],
  ];
  for (const [name, rows, message] of cases) {
    it(`${name} → BACKTEST_DATA_INVALID naming the row`, () => {
      expect(() => createBarSet(rows, { intervalMs: DAY })).toThrow(message);
      try {
        createBarSet(rows, { intervalMs: DAY });
      } catch (error) {
        expect((error as { code: string }).code).toBe('BACKTEST_DATA_INVALID');
      }
    });
  }

  it('repairs only when asked, and lists every repair in the data source', () => {
    const set = createBarSet([bar(0), bar(2), bar(1), bar(1, { close: 10.4 }), bar(3, { high: 8, low: 9, open: 8.5, close: 8.7 }), bar(6), bar(7, { close: 0 })], { intervalMs: DAY, repair: true });
    const repairs = set.sources[0]?.repairs ?? [];
    expect(repairs.some((r) => r.startsWith('sorted AAA'))).toBe(true);
    expect(repairs.some((r) => /dropped duplicate AAA/.test(r))).toBe(true);
    expect(repairs.some((r) => /widened AAA high\/low/.test(r))).toBe(true);
    expect(repairs.some((r) => /forward-filled 2 AAA bar/.test(r))).toBe(true);
    expect(repairs.some((r) => /dropped AAA bar .*close 0/.test(r))).toBe(true);
    expect(set.times.length).toBe(7);
    const filled = barsOf(set, 'AAA')[4] as Bar;
    expect(filled).toMatchObject({ open: 8.7, close: 8.7, volume: 0 });
  });

  it('a symbol missing a step the other symbols have is a gap', () => {
    expect(() => createBarSet([bar(0), bar(1), bar(2), bar(0, { symbol: 'B' }), bar(2, { symbol: 'B' })], { intervalMs: 2 * DAY })).toThrow(/gap in B: no bar at 2024-01-02/);
  });
});

describe('calendars', () => {
  it('crypto is 24/7; equity daily bars skip weekends, intraday bars keep to the session', () => {
    const sat = Date.UTC(2024, 0, 6);
    expect(inSession({ kind: 'crypto' }, sat, DAY)).toBe(true);
    expect(inSession({ kind: 'equity' }, sat, DAY)).toBe(false);
    expect(inSession({ kind: 'equity' }, Date.UTC(2024, 0, 8, 14, 30), 3_600_000)).toBe(true); // 09:30 New York
    expect(inSession({ kind: 'equity' }, Date.UTC(2024, 0, 8, 21, 0), 3_600_000)).toBe(false); // 16:00 New York
    expect(periodsPerYear({ kind: 'crypto' }, DAY)).toBe(365);
    expect(periodsPerYear({ kind: 'equity' }, DAY)).toBe(252);
    expect(parseInterval('4h')).toBe(4 * 3_600_000);
    expect(() => parseInterval('3x')).toThrow(/interval: expected/);
  });

  it('equity daily data over a weekend is not a gap, but a Saturday bar is an error', () => {
    const fri = Date.UTC(2024, 0, 5);
    const rows = [fri, fri + 3 * DAY].map((time) => bar(0, { time }));
    expect(createBarSet([bar(0, { time: fri - DAY }), ...rows], { calendar: { kind: 'equity' }, intervalMs: DAY }).times.length).toBe(3);
    expect(() => createBarSet([...rows, bar(0, { time: fri + DAY })].sort((a, b) => a.time - b.time), { calendar: { kind: 'equity' }, intervalMs: DAY })).toThrow(/outside the equity calendar/);
  });
});

describe('generateBars', () => {
  it('is deterministic by seed, valid OHLC, and the regimes differ as named', () => {
    const a = generateBars({ seed: 7, symbols: ['X', 'Y'], bars: 500 });
    const b = generateBars({ seed: 7, symbols: ['X', 'Y'], bars: 500 });
    expect(a.sources[0]?.sha256).toBe(b.sources[0]?.sha256);
    expect(generateBars({ seed: 8, symbols: ['X', 'Y'], bars: 500 }).sources[0]?.sha256).not.toBe(a.sources[0]?.sha256);
    for (let s = 0; s < 2; s++)
      for (let i = 0; i < 500; i++) {
        const [o, h, l, c] = [a.open[s]![i]!, a.high[s]![i]!, a.low[s]![i]!, a.close[s]![i]!];
        expect(h >= Math.max(o, c) && l <= Math.min(o, c) && l > 0).toBe(true);
      }
    const growth = (regime: 'bull' | 'bear' | 'crash') => {
      const g = generateBars({ seed: 3, symbols: 8, bars: 2000, regime });
      return g.close.reduce((acc, c) => acc + Math.log(c[c.length - 1]! / c[0]!), 0) / 8;
    };
    expect(growth('bull')).toBeGreaterThan(0);
    expect(growth('bear')).toBeLessThan(0);
    const crash = generateBars({ seed: 3, bars: 1000, regime: 'crash' }).close[0]!;
    expect(crash[600]! / crash[550]!).toBeLessThan(0.7);
    expect(() => generateBars({ seed: 1.5 })).toThrow(/seed: expected an integer/);
    expect(() => generateBars({ seed: 1, regime: 'moon' as 'bull' })).toThrow(/regime: expected bull, bear, sideways or crash/);
  });

  it('generates on the equity calendar (no weekend bars)', () => {
    const g = generateBars({ seed: 1, bars: 30, calendar: { kind: 'equity' } });
    for (const t of g.times) expect([0, 6]).not.toContain(new Date(t).getUTCDay());
  });
});

describe('errors across several files name the file', () => {
  it('a bad row in the second file is reported with that file name and line', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(path.join(tmpdir(), 'bt-files-'));
    writeFileSync(path.join(dir, 'AAA.csv'), 'date,open,high,low,close,volume\n2024-01-01,1,2,0.5,1.5,1\n2024-01-02,1,2,0.5,1.5,1\n');
    writeFileSync(path.join(dir, 'BBB.csv'), 'date,open,high,low,close,volume\n2024-01-01,1,2,0.5,1.5,1\n2024-01-02,1,2,0.5,-1,1\n');
    await expect(loadBars([path.join(dir, 'AAA.csv'), path.join(dir, 'BBB.csv')])).rejects.toThrow(/BBB\.csv row 3: BBB close must be a positive number, got -1/);
  });
});
