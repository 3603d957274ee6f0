/**
 * `minara backtest run --strategy agent` and `minara backtest compare <runA> <runB>`: the agent itself through
 * history (issue 40). Imports `@minara/agent/backtest` only when run.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs as parseNodeArgs } from 'node:util';
import type { LanguageModelV4 } from '@ai-sdk/provider';

/** Injectable I/O (tests). */
export interface AgentBacktestCliIo {
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
  readonly now?: (() => Date) | undefined;
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

export const AGENT_BACKTEST_USAGE = `Usage:
  minara backtest run --strategy agent --synthetic [--symbols BTC] [--regime bull] [--bars 60] [--seed 1] --prompt "<what to decide>"
        [--model provider:model | --cassette <file> [--record]] [--every <bars> | --schedule <HEARTBEAT.md>]
        [--approvals approve|deny] [--max-order-usd N] [--limits '{"maxTradeUsd":1000}'] [--budget <usd>]
        [--epochs N] [--temperature T] [--anonymise] [--learning on|off] [--charge-model-cost] [--cash 10000] [--fee-bps 10]
        [--out <dir>] [--no-png]
  minara backtest compare <runA> <runB>
  minara backtest sweep --grid '{"fast":[5,10],"slow":[20,50]}' [--seeds 1,2,3] [--windows '[{"bars":500},{"bars":1000}]']
        [--strategy sma-cross|momentum|…|agent] [--symbols BTC] [--regime bull] [--database-url postgres://… --schema s]
        [--sweep-id <id>] [--json]
        Each cell (grid point × seed × window, on synthetic bars) is a job-runner claim: start the same command in several
        processes on one PostgreSQL database and each cell runs exactly once; the results print as one table.

Model: --cassette <file> replays recorded model calls offline (a miss fails with a diff); with --record and --model it
records them. Without --cassette the model comes from --model or MINARA_MODEL and the provider's key.
`;

const OPTIONS = {
  strategy: { type: 'string' }, synthetic: { type: 'boolean' }, data: { type: 'string' }, format: { type: 'string' }, symbol: { type: 'string' }, symbols: { type: 'string' },
  regime: { type: 'string' }, bars: { type: 'string' }, interval: { type: 'string' }, start: { type: 'string' }, seed: { type: 'string' }, prompt: { type: 'string' },
  model: { type: 'string' }, cassette: { type: 'string' }, record: { type: 'boolean' }, every: { type: 'string' }, schedule: { type: 'string' }, approvals: { type: 'string' },
  'max-order-usd': { type: 'string' }, limits: { type: 'string' }, budget: { type: 'string' }, epochs: { type: 'string' }, temperature: { type: 'string' },
  anonymise: { type: 'boolean' }, learning: { type: 'string' }, 'charge-model-cost': { type: 'boolean' }, cash: { type: 'string' }, 'fee-bps': { type: 'string' },
  out: { type: 'string' }, 'no-png': { type: 'boolean' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
  grid: { type: 'string' }, seeds: { type: 'string' }, windows: { type: 'string' }, 'database-url': { type: 'string' }, schema: { type: 'string' }, 'sweep-id': { type: 'string' },
} as const;

class CliInputError extends Error {}

function num(v: string | undefined, flag: string, opts: { int?: boolean; min?: number } = {}): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || (opts.int && !Number.isInteger(n)) || (opts.min !== undefined && n < opts.min))
    throw new CliInputError(`--${flag} expects ${opts.int ? 'an integer' : 'a number'}${opts.min !== undefined ? ` ≥ ${opts.min}` : ''}, got "${v}"`);
  return n;
}

/** Whether `minara backtest <argv…>` is the agent's (run --strategy agent, compare). */
export function isAgentBacktestCommand(argv: readonly string[]): boolean {
  if (argv[0] === 'compare' || argv[0] === 'sweep') return true;
  const i = argv.indexOf('--strategy');
  return argv[0] === 'run' && ((i >= 0 && argv[i + 1] === 'agent') || argv.includes('--strategy=agent'));
}

/** Run `minara backtest run --strategy agent …` or `minara backtest compare …`; returns the exit code. */
export async function runAgentBacktestCli(argv: readonly string[], io: AgentBacktestCliIo = {}): Promise<number> {
  const write = io.write ?? ((s: string) => process.stdout.write(s));
  const writeErr = io.writeErr ?? ((s: string) => process.stderr.write(s));
  let values: Partial<Record<keyof typeof OPTIONS, string | boolean>>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseNodeArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true }));
  } catch (error) {
    writeErr(`minara: ${(error as Error).message}\n${AGENT_BACKTEST_USAGE}`);
    return 2;
  }
  if (values.help) {
    write(AGENT_BACKTEST_USAGE);
    return 0;
  }
  try {
    if (positionals[0] === 'compare') {
      if (positionals.length !== 3) throw new CliInputError('compare needs two run folders: minara backtest compare <runA> <runB>');
      const bt = await import('@minara/agent/backtest');
      write(bt.formatComparison(bt.compareRuns(positionals[1]!, positionals[2]!)));
      return 0;
    }
    if (positionals[0] === 'sweep') return await runSweep(values, { write, now: io.now ?? (() => new Date()), env: io.env ?? process.env });
    if (positionals[0] !== 'run' || positionals.length > 1) throw new CliInputError(`unknown backtest command "${positionals.join(' ')}"`);
    return await runAgent(values, { write, writeErr, now: io.now ?? (() => new Date()), env: io.env ?? process.env });
  } catch (error) {
    if (error instanceof CliInputError) {
      writeErr(`minara: ${error.message}\n${AGENT_BACKTEST_USAGE}`);
      return 2;
    }
    const e = error as { code?: string; message?: string };
    if (typeof e.code === 'string' && /INVALID|DATA|CASSETTE|MODEL/.test(e.code)) {
      writeErr(`minara: ${e.message}\n`);
      return 1;
    }
    throw error;
  }
}

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean>>;

async function modelFor(v: Values, env: Readonly<Record<string, string | undefined>>): Promise<{ model: LanguageModelV4; save?: () => string }> {
  const str = (k: keyof typeof OPTIONS) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const bt = await import('@minara/agent/backtest');
  const live = async (): Promise<LanguageModelV4> => {
    const { resolveModel } = await import('@minara/agent');
    const m = await resolveModel({ model: str('model'), env });
    if (typeof m !== 'object' || (m as { specificationVersion?: string }).specificationVersion !== 'v4') throw new CliInputError('the model must be an AI SDK v4 language model');
    return m as LanguageModelV4;
  };
  const cassette = str('cassette');
  if (!cassette) {
    if (v.record) throw new CliInputError('--record needs --cassette <file> to record into');
    return { model: await live() };
  }
  if (v.record) {
    const recorder = bt.createCassetteModel({ model: await live(), mode: 'record', cassette });
    return { model: recorder, save: () => recorder.save() };
  }
  return { model: bt.createCassetteModel({ cassette, mode: 'replay' }) };
}

async function runAgent(v: Values, io: { write: (s: string) => void; writeErr: (s: string) => void; now: () => Date; env: Readonly<Record<string, string | undefined>> }): Promise<number> {
  const str = (k: keyof typeof OPTIONS) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  if (str('strategy') !== 'agent') throw new CliInputError('this command runs --strategy agent');
  const prompt = str('prompt');
  if (!prompt) throw new CliInputError('--prompt "<what the agent decides at each bar>" is required');
  if (!v.synthetic && !str('data')) throw new CliInputError('give --synthetic or --data <file>');
  const bt = await import('@minara/agent/backtest');
  const seed = num(str('seed'), 'seed', { int: true }) ?? 1;
  const bars = v.synthetic
    ? bt.generateBars({ seed, symbols: (str('symbols') ?? 'BTC').split(',').map((s) => s.trim()).filter(Boolean), regime: (str('regime') ?? 'bull') as 'bull', bars: num(str('bars'), 'bars', { int: true, min: 2 }) ?? 60, interval: str('interval') ?? '1d', ...(str('start') ? { start: str('start') as string } : {}) })
    : await bt.loadBars((str('data') as string).split(',').map((p) => ({ path: p.trim(), ...(str('format') ? { format: str('format') as 'auto' } : {}), ...(str('symbol') ? { symbol: str('symbol') as string } : {}) })));
  const approvalsFlag = str('approvals') ?? 'approve';
  if (approvalsFlag !== 'approve' && approvalsFlag !== 'deny') throw new CliInputError(`--approvals expects approve or deny, got "${approvalsFlag}"`);
  const maxOrderUsd = num(str('max-order-usd'), 'max-order-usd', { min: 0 });
  const every = num(str('every'), 'every', { int: true, min: 1 });
  if (every !== undefined && str('schedule')) throw new CliInputError('--every and --schedule cannot be combined');
  const learning = str('learning') ?? 'on';
  if (learning !== 'on' && learning !== 'off') throw new CliInputError(`--learning expects on or off, got "${learning}"`);
  let limits: Record<string, unknown> | undefined;
  if (str('limits')) {
    try {
      limits = JSON.parse(str('limits') as string) as Record<string, unknown>;
    } catch {
      throw new CliInputError(`--limits expects a JSON object like '{"maxTradeUsd":1000}', got ${str('limits')}`);
    }
  }
  const { model, save } = await modelFor(v, io.env);
  const temperature = num(str('temperature'), 'temperature', { min: 0 });
  const epochs = num(str('epochs'), 'epochs', { int: true, min: 1 });
  const budgetUsd = num(str('budget'), 'budget', { min: 0 });
  const run = await bt.runAgentBacktest({
    bars,
    seed,
    initialCash: num(str('cash'), 'cash', { min: 0 }) ?? 10_000,
    fees: { bps: num(str('fee-bps'), 'fee-bps', { min: 0 }) ?? 10 },
    ...(limits ? { limits: limits as never } : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(epochs !== undefined ? { epochs } : {}),
    ...(v.anonymise ? { anonymise: true } : {}),
    ...(v['charge-model-cost'] ? { chargeModelCostToPnl: true } : {}),
    agent: {
      model,
      prompt,
      schedule: str('schedule') ? { kind: 'heartbeat', section: readFileSync(str('schedule') as string, 'utf8') } : { kind: 'every-n-bars', n: every ?? 1 },
      approvals: approvalsFlag === 'deny' ? { mode: 'deny' } : { mode: 'approve-within-limits', ...(maxOrderUsd !== undefined ? { maxOrderUsd } : {}) },
      ...(limits ? { limits: limits as never } : {}),
      ...(budgetUsd !== undefined ? { budgetUsd } : {}),
      learning: learning === 'on',
    },
  });
  const cassetteSaved = save?.();
  const stamp = io.now().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
  const out = path.resolve(str('out') ?? path.join('backtests', `agent-${stamp}`));
  await bt.writeBacktestReport(run.result, out, { png: !v['no-png'] && 'auto' });
  const m = run.result.strategy.metrics;
  const sm = run.result.strategyReport?.metrics ?? {};
  if (v.json) {
    io.write(readFileSync(path.join(out, 'metrics.json'), 'utf8'));
    return 0;
  }
  const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(2)}%` : 'n/a');
  io.write(`agent backtest: ${run.strategies[0]!.decisions.length} decisions, total return ${pct(m.totalReturn)}, Sharpe ${Number.isFinite(m.sharpe) ? m.sharpe.toFixed(2) : 'n/a'}, model cost ${String(sm.llmCostUsdAllEpochs)} USD\n`);
  io.write(`  model ${run.contamination.modelId}: training cutoff ${run.contamination.trainingCutoff}, window ${run.contamination.windowStart} → ${run.contamination.windowEnd}${run.contamination.overlap ? ' — OVERLAP' : ''}\n  ${run.contamination.note}\n`);
  io.write(`  disabled for the run: ${run.strategies[0]!.disabled.map((d) => d.name).join(', ')}\n`);
  if (run.epochs.length > 1) io.write(`  ${run.epochs.length} epochs: total return ${pct(run.spread.totalReturn!.mean)} ± ${pct(run.spread.totalReturn!.std)} (sd)\n`);
  if (cassetteSaved) io.write(`  cassette: ${cassetteSaved}\n`);
  io.write(`  report: ${out}\n`);
  return 0;
}

function json<T>(text: string | undefined, flag: string, example: string): T | undefined {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CliInputError(`--${flag} expects JSON like ${example}, got ${text}`);
  }
}

async function runSweep(v: Values, io: { write: (s: string) => void; now: () => Date; env: Readonly<Record<string, string | undefined>> }): Promise<number> {
  const str = (k: keyof typeof OPTIONS) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const grid = json<Record<string, unknown[]>>(str('grid'), 'grid', `'{"fast":[5,10],"slow":[20,50]}'`);
  if (!grid || typeof grid !== 'object' || Array.isArray(grid)) throw new CliInputError(`--grid is required: a JSON object of parameter → values, like '{"fast":[5,10]}'`);
  const seeds = (str('seeds') ?? '1').split(',').map((s) => num(s.trim(), 'seeds', { int: true }) as number);
  const windows = json<Array<Record<string, unknown>>>(str('windows'), 'windows', `'[{"bars":500}]'`) ?? [{}];
  const name = str('strategy') ?? 'sma-cross';
  const bt = await import('@minara/agent/backtest');
  const cells = bt.planSweep({ grid: grid as Record<string, readonly unknown[]>, seeds, windows });
  const sweepId = str('sweep-id') ?? bt.canonicalHash({ grid, seeds, windows, name }).slice(0, 12);
  const dbUrl = str('database-url');
  const storage = dbUrl
    ? await (await import('@minara/agent/postgres')).createPostgresStorage({ connectionString: dbUrl, ...(str('schema') ? { schema: str('schema') as string } : {}) })
    : (await import('@minara/agent/testing')).createInMemoryStorage();
  const agentModel = name === 'agent' ? (await modelFor(v, io.env)).model : undefined;
  try {
    const worker = await bt.runSweepWorker({
      jobs: storage.jobs,
      sweepId,
      cells,
      runCell: async (cell) => {
        const w = cell.window;
        const bars = bt.generateBars({ seed: cell.seed, symbols: (str('symbols') ?? 'BTC').split(','), regime: (typeof w.regime === 'string' ? w.regime : str('regime') ?? 'bull') as 'bull', bars: Number(w.bars ?? 500), ...(typeof w.start === 'string' ? { start: w.start } : {}) });
        if (agentModel) {
          const prompt = str('prompt');
          if (!prompt) throw new CliInputError('--prompt is required for --strategy agent');
          const every = Number(cell.params.every ?? 1);
          const run = await bt.runAgentBacktest({ bars, seed: cell.seed, temperature: Number(cell.params.temperature ?? 0), agent: { model: agentModel, prompt, schedule: { kind: 'every-n-bars', n: every } } });
          const m = run.result.strategy.metrics;
          return { totalReturn: m.totalReturn, sharpe: m.sharpe, maxDrawdown: m.maxDrawdown, trades: m.trades, llmCostUsd: run.result.strategyReport?.metrics?.llmCostUsdAllEpochs ?? null };
        }
        const run = await bt.runBacktest({ bars, seed: cell.seed, strategy: bt.builtinStrategy(name, cell.params as Record<string, number>), baselines: false });
        const m = run.strategy.metrics;
        return { totalReturn: m.totalReturn, sharpe: m.sharpe, maxDrawdown: m.maxDrawdown, trades: m.trades };
      },
    });
    const rows = await bt.sweepResults(storage.jobs, sweepId, cells);
    if (v.json) {
      io.write(`${JSON.stringify({ sweepId, worker, rows }, null, 2)}\n`);
      return worker.failed.length > 0 ? 1 : 0;
    }
    io.write(`sweep ${sweepId}: ${cells.length} cells; this worker ran ${worker.ran.length}, ${worker.skipped.length} ran elsewhere or earlier, ${worker.failed.length} failed\n`);
    const f = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(4) : String(x ?? 'n/a'));
    io.write('params                              seed  window            outcome  totalReturn  sharpe   maxDD    trades\n');
    for (const r of rows) io.write(`${JSON.stringify(r.cell.params).padEnd(36)}${String(r.cell.seed).padEnd(6)}${JSON.stringify(r.cell.window).padEnd(18)}${r.outcome.padEnd(9)}${f(r.metrics?.totalReturn).padStart(11)}  ${f(r.metrics?.sharpe).padStart(7)}  ${f(r.metrics?.maxDrawdown).padStart(7)}  ${f(r.metrics?.trades).padStart(6)}\n`);
    return worker.failed.length > 0 ? 1 : 0;
  } finally {
    await storage.close();
  }
}
