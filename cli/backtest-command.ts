/**
 * `minara backtest run`: a backtest from the command line, written to a run folder. It imports
 * `@minara/agent/backtest` only when run (the CLI's start-up stays cheap), and shows a progress bar
 * (cli-progress) on long runs when stderr is a terminal.
 */
import { parseArgs as parseNodeArgs } from 'node:util';
import path from 'node:path';
import { isAgentBacktestCommand, runAgentBacktestCli } from './backtest-agent-command';

/** Injectable I/O (tests). */
export interface BacktestCliIo {
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
  readonly isTty?: boolean | undefined;
  readonly now?: (() => Date) | undefined;
}

export const BACKTEST_USAGE = `Usage:
  minara backtest run --synthetic [--symbols BTC,ETH] [--regime bull|bear|sideways|crash] [--bars 1000] [--interval 1d] [--seed 1]
  minara backtest run --data <file>[,<file>…] [--format auto|csv|binance|coingecko|hyperliquid] [--symbol S] [--calendar crypto|equity] [--repair]

Strategy:   --strategy sma-cross|momentum|buy-and-hold|random|noop (default sma-cross)  --fast 10 --slow 30 --lookback 20
Costs:      --cash 10000 --fee-bps 10 --fee-min 0 --slippage-bps 0 | --slippage-volume <bps per volume share>  --volume-cap <0..1>
Fills:      --fill next-open|same-close (default next-open: decide on the close, fill at the next open)
Limits:     --limits '{"maxTradeUsd":1000}' (the finance pack's limits; absent: none)
Output:     --out <dir> (default backtests/<strategy>-<time>)  --no-png  --json (print metrics.json)

The agent:  minara backtest run --strategy agent --prompt "…" (minara backtest run --strategy agent --help); minara backtest compare <runA> <runB>
`;

const OPTIONS = {
  synthetic: { type: 'boolean' }, data: { type: 'string' }, format: { type: 'string' }, symbol: { type: 'string' }, symbols: { type: 'string' }, regime: { type: 'string' },
  bars: { type: 'string' }, interval: { type: 'string' }, start: { type: 'string' }, seed: { type: 'string' }, strategy: { type: 'string' }, fast: { type: 'string' },
  slow: { type: 'string' }, lookback: { type: 'string' }, cash: { type: 'string' }, 'fee-bps': { type: 'string' }, 'fee-min': { type: 'string' },
  'slippage-bps': { type: 'string' }, 'slippage-volume': { type: 'string' }, 'volume-cap': { type: 'string' }, fill: { type: 'string' }, limits: { type: 'string' },
  calendar: { type: 'string' }, repair: { type: 'boolean' }, out: { type: 'string' }, 'no-png': { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

class CliInputError extends Error {}

function num(v: string | undefined, flag: string, opts: { int?: boolean; min?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || (opts.int && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min))
    throw new CliInputError(`--${flag} expects ${opts.int ? 'an integer' : 'a number'}${opts.min !== undefined ? ` ≥ ${opts.min}` : ''}, got "${v}"`);
  return n;
}

const fmt = (v: number | null | undefined, pct = false) => (v === null || v === undefined || !Number.isFinite(v) ? 'n/a' : pct ? `${(v * 100).toFixed(2)}%` : v.toFixed(2));

/** Run `minara backtest <argv…>`; returns the exit code. */
export async function runBacktestCli(argv: readonly string[], io: BacktestCliIo = {}): Promise<number> {
  const write = io.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = io.writeErr ?? ((s: string) => process.stderr.write(s));
  // The agent's commands (run --strategy agent, compare) have their own flags: cli/backtest-agent-command.ts (issue 40).
  if (isAgentBacktestCommand(argv)) return runAgentBacktestCli(argv, { write, writeErr, ...(io.now ? { now: io.now } : {}) });
  let values: ReturnType<typeof parseNodeArgs<{ options: typeof OPTIONS; allowPositionals: true; args: string[] }>>['values'];
  let positionals: string[];
  try {
    ({ values, positionals } = parseNodeArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true }));
  } catch (error) {
    writeErr(`minara: ${(error as Error).message}\n${BACKTEST_USAGE}`);
    return 2;
  }
  if (values.help || positionals.length === 0) {
    (values.help ? write : writeErr)(BACKTEST_USAGE);
    return values.help ? 0 : 2;
  }
  if (positionals[0] !== 'run' || positionals.length > 1) {
    writeErr(`minara: unknown backtest command "${positionals.join(' ')}"\n${BACKTEST_USAGE}`);
    return 2;
  }
  try {
    return await run(values, { write, writeErr, isTty: io.isTty ?? Boolean(process.stderr.isTTY), now: io.now ?? (() => new Date()) });
  } catch (error) {
    if (error instanceof CliInputError) {
      writeErr(`minara: ${error.message}\n`);
      return 2;
    }
    const e = error as { code?: string; message?: string };
    if (typeof e.code === 'string' && /INVALID|DATA/.test(e.code)) {
      writeErr(`minara: ${e.message}\n`);
      return 1;
    }
    throw error;
  }
}

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean>>;

async function run(v: Values, io: { write: (s: string) => void; writeErr: (s: string) => void; isTty: boolean; now: () => Date }): Promise<number> {
  const str = (k: keyof typeof OPTIONS) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  if (!v.synthetic && !str('data')) throw new CliInputError('give --synthetic or --data <file>');
  if (v.synthetic && str('data')) throw new CliInputError('--synthetic and --data cannot be combined');
  const bt = await import('@minara/agent/backtest');
  const calendarKind = str('calendar') ?? 'crypto';
  if (calendarKind !== 'crypto' && calendarKind !== 'equity') throw new CliInputError(`--calendar expects crypto or equity, got "${calendarKind}"`);
  const calendar = { kind: calendarKind } as const;
  const seed = num(str('seed'), 'seed', { int: true }) ?? 1;
  const bars = v.synthetic
    ? bt.generateBars({
        seed, calendar,
        symbols: (str('symbols') ?? 'SYN').split(',').map((s) => s.trim()).filter(Boolean),
        regime: (str('regime') ?? 'bull') as 'bull',
        bars: num(str('bars'), 'bars', { int: true, min: 2 }) ?? 1000,
        interval: str('interval') ?? '1d',
        ...(str('start') ? { start: str('start') as string } : {}),
      })
    : await bt.loadBars(
        (str('data') as string).split(',').map((p) => ({ path: p.trim(), ...(str('format') ? { format: str('format') as 'auto' } : {}), ...(str('symbol') ? { symbol: str('symbol') as string } : {}) })),
        { calendar, ...(v.repair ? { repair: true } : {}) },
      );
  const name = str('strategy') ?? 'sma-cross';
  const params: Record<string, number> = {};
  for (const k of ['fast', 'slow', 'lookback'] as const) {
    const n = num(str(k), k, { int: true, min: 1 });
    if (n !== undefined) params[k] = n;
  }
  const strategy = bt.builtinStrategy(name, params);
  let limits: Record<string, unknown> | undefined;
  if (str('limits')) {
    try {
      limits = JSON.parse(str('limits') as string) as Record<string, unknown>;
    } catch {
      throw new CliInputError(`--limits expects a JSON object like '{"maxTradeUsd":1000}', got ${str('limits')}`);
    }
  }
  const slipVol = num(str('slippage-volume'), 'slippage-volume', { min: 0 });
  const volumeCap = num(str('volume-cap'), 'volume-cap');
  const fill = str('fill') ?? 'next-open';
  if (fill !== 'next-open' && fill !== 'same-close') throw new CliInputError(`--fill expects next-open or same-close, got "${fill}"`);
  const steps = bars.times.length * bars.symbols.length;
  const progress = io.isTty && steps >= 200_000 ? await progressBar(bars.times.length) : undefined;
  const result = await bt.runBacktest({
    bars, strategy, seed, fill,
    initialCash: num(str('cash'), 'cash', { min: 0 }) ?? 10_000,
    fees: { bps: num(str('fee-bps'), 'fee-bps', { min: 0 }) ?? 10, minUsd: num(str('fee-min'), 'fee-min', { min: 0 }) ?? 0 },
    slippage: slipVol !== undefined ? { kind: 'volume-share', bpsPerVolumeShare: slipVol } : { kind: 'fixed', bps: num(str('slippage-bps'), 'slippage-bps', { min: 0 }) ?? 0 },
    ...(volumeCap !== undefined ? { volumeCap } : {}),
    ...(limits ? { limits: limits as never } : {}),
    ...(progress ? { onProgress: progress.update, progressEvery: Math.max(1, Math.floor(bars.times.length / 100)) } : {}),
  });
  progress?.stop();
  const stamp = io.now().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const out = path.resolve(str('out') ?? path.join('backtests', `${name}-${stamp}`));
  const written = await bt.writeBacktestReport(result, out, { png: v['no-png'] ? false : 'auto' });
  if (v.json) {
    io.write(bt.stableJson(bt.metricsDocument(result)));
    return 0;
  }
  const runs = [result.strategy, ...result.baselines];
  const row = (label: string, get: (m: (typeof runs)[number]['metrics']) => string) => `  ${label.padEnd(16)}${runs.map((r) => get(r.metrics).padStart(16)).join('')}\n`;
  io.write(`Backtest ${name} on ${bars.symbols.join(', ')}: ${bars.times.length} bars, ${result.config.start.slice(0, 10)} → ${result.config.end.slice(0, 10)}\n`);
  io.write(`  ${''.padEnd(16)}${runs.map((r) => r.name.padStart(16)).join('')}\n`);
  io.write(row('total return', (m) => fmt(m.totalReturn, true)));
  io.write(row('CAGR', (m) => fmt(m.cagr, true)));
  io.write(row('Sharpe', (m) => fmt(m.sharpe)));
  io.write(row('max drawdown', (m) => fmt(m.maxDrawdown, true)));
  io.write(row('trades', (m) => String(m.trades)));
  io.write(row('fees USD', (m) => fmt(m.feesUsd)));
  const ci = result.strategy.metrics.sharpeCi95;
  io.write(`  Sharpe 95% interval [${fmt(ci[0])}, ${fmt(ci[1])}]; blocked orders: ${JSON.stringify(result.strategy.metrics.blockedOrders)}\n`);
  io.write(`Wrote ${written.files.length} files to ${out}${written.pngSkipped ? ` (no equity.png: ${written.pngSkipped})` : ''}\nOpen ${path.join(out, 'report.html')} in a browser.\n`);
  return 0;
}

async function progressBar(total: number): Promise<{ update: (done: number) => void; stop: () => void }> {
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar({ format: 'backtest [{bar}] {percentage}% {value}/{total} bars', stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
  bar.start(total, 0);
  return { update: (done) => bar.update(done), stop: () => bar.stop() };
}
