import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBacktestCli } from '../../cli/backtest-command';

function io() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, io: { write: (s: string) => void out.push(s), writeErr: (s: string) => void err.push(s), isTty: false, now: () => new Date('2026-01-02T03:04:05Z') } };
}

describe('minara backtest run', () => {
  it('--synthetic --strategy sma-cross writes the run folder and prints the strategy beside its baselines', async () => {
    const dir = path.join(mkdtempSync(path.join(tmpdir(), 'bt-cli-')), 'run');
    const t = io();
    const code = await runBacktestCli(['run', '--synthetic', '--strategy', 'sma-cross', '--fast', '5', '--slow', '20', '--out', dir, '--no-png'], t.io);
    expect(t.err.join('')).toBe('');
    expect(code).toBe(0);
    const text = t.out.join('');
    expect(text).toMatch(/sma-cross\s+buy-and-hold\s+random/);
    expect(text).toMatch(/Sharpe 95% interval/);
    for (const f of ['run_config.json', 'metrics.json', 'equity_curve.csv', 'trades.csv', 'orders.csv', 'rejected_orders.csv', 'report.html']) expect(existsSync(path.join(dir, f)), f).toBe(true);
    expect(JSON.parse(readFileSync(path.join(dir, 'run_config.json'), 'utf8')).strategy).toEqual({ name: 'sma-cross', params: { fast: 5, slow: 20 } });
  });

  it('--data reads a file; --json prints metrics.json', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bt-cli-'));
    const t = io();
    const fixture = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures', 'generic.csv');
    expect(await runBacktestCli(['run', '--data', fixture, '--strategy', 'buy-and-hold', '--out', dir, '--no-png', '--json'], t.io)).toBe(0);
    expect(JSON.parse(t.out.join(''))).toMatchObject({ strategy: 'buy-and-hold', baselines: { 'buy-and-hold': {}, random: {} } });
  });

  it('bad input: a usage error naming the flag (exit 2), or the data error naming the row (exit 1)', async () => {
    let t = io();
    expect(await runBacktestCli(['run'], t.io)).toBe(2);
    expect(t.err.join('')).toMatch(/give --synthetic or --data/);
    t = io();
    expect(await runBacktestCli(['run', '--synthetic', '--fast', 'x'], t.io)).toBe(2);
    expect(t.err.join('')).toMatch(/--fast expects an integer/);
    t = io();
    expect(await runBacktestCli(['run', '--synthetic', '--bogus'], t.io)).toBe(2);
    t = io();
    expect(await runBacktestCli(['run', '--synthetic', '--strategy', 'moon'], t.io)).toBe(1);
    expect(t.err.join('')).toMatch(/strategy: expected buy-and-hold, random, momentum, sma-cross or noop/);
    const bad = path.join(mkdtempSync(path.join(tmpdir(), 'bt-cli-')), 'bad.csv');
    (await import('node:fs')).writeFileSync(bad, 'date,symbol,open,high,low,close,volume\n2024-01-01,A,1,2,0.5,1.5,1\n2024-01-02,A,1,0.4,0.5,1.5,1\n');
    t = io();
    expect(await runBacktestCli(['run', '--data', bad, '--no-png', '--out', path.dirname(bad)], t.io)).toBe(1);
    expect(t.err.join('')).toMatch(/bad\.csv row 3: A high 0\.4 \/ low 0\.5/);
    t = io();
    expect(await runBacktestCli(['--help'], t.io)).toBe(0);
    expect(t.out.join('')).toMatch(/minara backtest run --synthetic/);
  });
});
