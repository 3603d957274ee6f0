/**
 * `run_backtest`: the agent runs a backtest on seeded synthetic bars and shows the result as artifacts (an equity
 * chart against the baselines, and a report with the metrics). READ_ONLY: it reads no account and places no
 * order; it touches nothing but the user's own artifact rows.
 */
import { z } from 'zod';
import type { ArtifactStore } from '../artifacts/types';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry } from '../tools/types';
import type { BacktestMetrics, BacktestResult } from './types';

/** Options of {@link createBacktestTools}. */
export interface BacktestToolsOptions {
  /** Where the report and chart go (createArtifactStore). */
  readonly artifacts: ArtifactStore;
  /** The tenant when a call has none. @default 'default' */
  readonly defaultUserId?: string | undefined;
  /** Most bars per symbol a call may ask for. @default 20000 */
  readonly maxBars?: number | undefined;
}

/** Title prefix of the report artifacts `run_backtest` makes (the web app's Backtests page lists them by it). */
export const BACKTEST_REPORT_TITLE_PREFIX = 'Backtest: ';

const fmt = (v: number, pct = false) => (!Number.isFinite(v) ? 'n/a' : pct ? `${(v * 100).toFixed(2)} %` : v.toFixed(3));
/** A metric as the table shows it: a count as a whole number, USD with cents, ratios with three decimals. */
const cell = (key: keyof BacktestMetrics, v: number, pct: boolean) => (key === 'trades' && Number.isFinite(v) ? String(Math.round(v)) : key === 'feesUsd' && Number.isFinite(v) ? v.toFixed(2) : fmt(v, pct));

/** The report's markdown: the run's settings, the metrics of the strategy and its baselines, and the chart. */
export function backtestMarkdown(result: BacktestResult, chartUri?: string): string {
  const runs = [result.strategy, ...result.baselines];
  const rows: [string, keyof BacktestMetrics, boolean][] = [
    ['Total return', 'totalReturn', true], ['CAGR', 'cagr', true], ['Volatility', 'volatility', true], ['Sharpe', 'sharpe', false], ['Probabilistic Sharpe', 'probabilisticSharpe', true],
    ['Sortino', 'sortino', false], ['Max drawdown', 'maxDrawdown', true], ['Calmar', 'calmar', false], ['Trades', 'trades', false], ['Win rate', 'winRate', true], ['Fees (USD)', 'feesUsd', false],
  ];
  const c = result.config;
  const ci = result.strategy.metrics.sharpeCi95;
  return [
    `Synthetic ${c.symbols.join(', ')} · ${c.start.slice(0, 10)} → ${c.end.slice(0, 10)} · fill ${c.fill} · fees ${c.fees.bps} bps · seed ${c.seed}. Simulated: no account was read and no order was placed.`,
    '',
    ...(chartUri ? [chartUri, ''] : []),
    `| Metric | ${runs.map((r) => r.name).join(' | ')} |`,
    `|---|${runs.map(() => '---').join('|')}|`,
    ...rows.map(([label, key, pct]) => `| ${label} | ${runs.map((r) => cell(key, r.metrics[key] as number, pct)).join(' | ')} |`),
    '',
    `Sharpe 95 % interval: [${fmt(ci[0])}, ${fmt(ci[1])}] (${result.strategy.metrics.sharpeCiMethod}).`,
  ].join('\n');
}

/**
 * The `backtest` tool set: `run_backtest` (READ_ONLY). Synthetic, seeded bars only (the model names a regime,
 * not a file), so a call can neither read the filesystem nor any account.
 */
export function createBacktestTools(options: BacktestToolsOptions): ToolEntry[] {
  if (!options || typeof options.artifacts?.createChart !== 'function') throw new MinaraError('CONFIG_INVALID', 'createBacktestTools: "artifacts" must be an ArtifactStore (createArtifactStore).');
  const maxBars = options.maxBars ?? 20_000;
  const defaultUserId = options.defaultUserId ?? 'default';
  return [
    defineTool({
      name: 'run_backtest',
      toolSet: 'backtest',
      description:
        'Backtest a built-in strategy (sma-cross, momentum, buy-and-hold, random) on seeded synthetic daily bars of a market regime, ' +
        'with buy-and-hold and random baselines under the same costs. Simulated only: never reads an account or places an order. ' +
        'Returns the metrics and artifact URIs (a report and an equity chart) to include in your answer.',
      inputSchema: z.object({
        strategy: z.enum(['sma-cross', 'momentum', 'buy-and-hold', 'random']),
        regime: z.enum(['bull', 'bear', 'sideways', 'crash']).default('bull'),
        symbols: z.array(z.string().regex(/^[A-Za-z0-9._-]{1,20}$/)).min(1).max(10).default(['SYN']),
        bars: z.number().int().min(50).max(maxBars).default(1000),
        seed: z.number().int().default(1),
        fast: z.number().int().min(1).max(500).nullish(),
        slow: z.number().int().min(2).max(1000).nullish(),
        lookback: z.number().int().min(1).max(1000).nullish(),
        feeBps: z.number().min(0).max(500).default(10),
        slippageBps: z.number().min(0).max(500).default(0),
      }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) => {
        // Loaded on the first call, so registering the tool costs the app nothing at start-up.
        const [{ reportChartSpecs }, { runBacktest }, { builtinStrategy }, { generateBars }] = await Promise.all([import('./report'), import('./run'), import('./strategies'), import('./synthetic')]);
        const params: Record<string, number> = {};
        for (const k of ['fast', 'slow', 'lookback'] as const) if (input[k] !== undefined && input[k] !== null) params[k] = input[k];
        const bars = generateBars({ seed: input.seed, symbols: input.symbols, regime: input.regime, bars: input.bars });
        const result = await runBacktest({ bars, strategy: builtinStrategy(input.strategy, params), seed: input.seed, fees: { bps: input.feeBps }, slippage: { kind: 'fixed', bps: input.slippageBps } });
        const scope = { userId: ctx.call.userId ?? defaultUserId, sessionId: ctx.call.sessionId, ...(ctx.call.turnId ? { turnId: ctx.call.turnId } : {}) };
        const title = `${input.strategy} on ${input.symbols.join(', ')} (${input.regime}, seed ${input.seed})`;
        const chart = await options.artifacts.createChart(scope, { title: `Equity: ${title}`, spec: { ...reportChartSpecs(result, 500).equity, width: 560, height: 260 } });
        const report = await options.artifacts.createReport(scope, { title: `${BACKTEST_REPORT_TITLE_PREFIX}${title}`, markdown: backtestMarkdown(result, chart.uri) });
        const m = result.strategy.metrics;
        return {
          simulated: true,
          report: report.uri,
          chart: chart.uri,
          metrics: { totalReturn: m.totalReturn, cagr: m.cagr, sharpe: m.sharpe, sharpeCi95: m.sharpeCi95, maxDrawdown: m.maxDrawdown, trades: m.trades, feesUsd: m.feesUsd },
          baselines: Object.fromEntries(result.baselines.map((b) => [b.name, { totalReturn: b.metrics.totalReturn, sharpe: b.metrics.sharpe, maxDrawdown: b.metrics.maxDrawdown }])),
          note: `Put ${report.uri} in your answer; it shows the equity chart and the metrics. Past simulated performance says little about the future.`,
        };
      },
    }),
  ];
}
