import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { MinaraError } from '../../errors/minara-error';
import { runBacktest } from '../run';
import type { BacktestMetrics, BacktestOptions, BacktestResult, BarSet } from '../types';
import { createAgentStrategy, type AgentStrategy, type AgentStrategyOptions } from './agent-strategy';
import { contaminationReport, type AnonymiseMapping, type AnonymiseOptions, type ContaminationReport } from './contamination';
import { renderAgentDecisionsHtml } from './decisions-html';
import { metricSpread, welchInterval, type MetricSpread } from './stats';

/** Options of {@link runAgentBacktest}: the engine's options, the agent, and how many epochs. */
export interface AgentBacktestOptions extends Omit<BacktestOptions, 'strategy'> {
  readonly agent: AgentStrategyOptions;
  /** Sampling temperature set on every model call (absent: the provider's default, treated as > 0 for epochs). */
  readonly temperature?: number | undefined;
  /**
   * Independent runs of the same window (each with its own sampling seed, `seed + epoch`), for the spread of every
   * metric. @default 1 at temperature 0, else 5
   */
  readonly epochs?: number | undefined;
  /** Anonymised mode: the agent sees renamed tickers, shifted dates and rescaled prices (history dates shift too). */
  readonly anonymise?: boolean | AnonymiseOptions | undefined;
  /** Training cutoffs over `DEFAULT_TRAINING_CUTOFFS` (YYYY-MM-DD by model id). */
  readonly cutoffs?: Readonly<Record<string, string>> | undefined;
  /** Report the return after subtracting the model cost (metrics `totalReturnAfterModelCost`). @default false */
  readonly chargeModelCostToPnl?: boolean | undefined;
}

/** What {@link runAgentBacktest} returns. */
export interface AgentBacktestResult {
  /** The first epoch's result, with the agent's report (decisions, costs, contamination, spread) as its strategy report. */
  readonly result: BacktestResult;
  /** Every epoch's result, in order. */
  readonly epochs: readonly BacktestResult[];
  /** The spread of each metric over the epochs. */
  readonly spread: Readonly<Record<string, MetricSpread>>;
  readonly contamination: ContaminationReport;
  /** The strategies (their decisions, blocked orders and costs). */
  readonly strategies: readonly AgentStrategy[];
}

/** A model whose every call carries these settings (temperature, seed) unless the call sets its own. */
export function withCallSettings(model: LanguageModelV4, settings: { readonly temperature?: number | undefined; readonly seed?: number | undefined }): LanguageModelV4 {
  const apply = (o: LanguageModelV4CallOptions): LanguageModelV4CallOptions => ({
    ...o,
    ...(settings.temperature !== undefined && o.temperature === undefined ? { temperature: settings.temperature } : {}),
    ...(settings.seed !== undefined && o.seed === undefined ? { seed: settings.seed } : {}),
  });
  return { specificationVersion: 'v4', provider: model.provider, modelId: model.modelId, supportedUrls: model.supportedUrls, doGenerate: (o) => model.doGenerate(apply(o)), doStream: (o) => model.doStream(apply(o)) };
}

/** The bar set the agent sees in anonymised mode (see `anonymiseBars`). */
export function anonymiseBarSet(bars: BarSet, options: AnonymiseOptions = {}): { readonly bars: BarSet; readonly mapping: AnonymiseMapping } {
  const shiftDays = options.shiftDays ?? -3653;
  const priceScale = options.priceScale ?? 0.0137;
  if (!Number.isFinite(shiftDays)) throw new MinaraError('INVALID_ARGUMENT', `anonymise.shiftDays: expected a number of days, got ${String(options.shiftDays)}`);
  if (!(priceScale > 0) || !Number.isFinite(priceScale)) throw new MinaraError('INVALID_ARGUMENT', `anonymise.priceScale: expected a positive number, got ${String(options.priceScale)}`);
  const symbols: Record<string, string> = {};
  bars.symbols.forEach((s, i) => (symbols[s] = options.rename?.[s] ?? `ASSET${i + 1}`));
  const shiftMs = Math.round(shiftDays * 86_400_000);
  const scale = (cols: readonly Float64Array[]) => cols.map((c) => c.map((v) => v * priceScale));
  const out: BarSet = {
    ...bars,
    symbols: bars.symbols.map((s) => symbols[s]!),
    times: bars.times.map((t) => t + shiftMs),
    open: scale(bars.open),
    high: scale(bars.high),
    low: scale(bars.low),
    close: scale(bars.close),
    volume: bars.volume.map((c) => c.slice()),
    sources: bars.sources.map((s) => ({ ...s, options: { ...s.options, anonymised: { shiftDays, priceScale } } })),
  };
  return { bars: out, mapping: { symbols, shiftMs, priceScale } };
}

const NUMERIC_METRICS: ReadonlyArray<keyof BacktestMetrics> = ['totalReturn', 'cagr', 'volatility', 'sharpe', 'probabilisticSharpe', 'sortino', 'maxDrawdown', 'calmar', 'turnover', 'exposure', 'trades', 'winRate', 'profitFactor', 'feesUsd', 'finalEquity'];

/**
 * Run the agent through history with the engine (`runBacktest`): one or more epochs of {@link createAgentStrategy}
 * over the same bars, the contamination check of the model against the window, optionally on anonymised bars, with
 * the spread of each metric over the epochs and the model cost (optionally charged to the return). The first epoch's
 * result carries the agent's files (llm_costs.csv, decisions.jsonl, agent_blocked_orders.csv, epochs.json) for
 * `writeBacktestReport`.
 *
 * @example
 * ```ts
 * const model = createCassetteModel({ cassette: 'fixtures/agent.cassette.json' }); // offline replay
 * const run = await runAgentBacktest({ bars: generateBars({ seed: 1, symbols: ['BTC'], bars: 60 }), agent: { model, prompt: 'Decide on BTC.' }, temperature: 0 });
 * await writeBacktestReport(run.result, 'runs/agent', { png: false });
 * ```
 */
export async function runAgentBacktest(options: AgentBacktestOptions): Promise<AgentBacktestResult> {
  const { agent, temperature, anonymise, cutoffs, chargeModelCostToPnl, epochs: _epochs, ...engine } = options;
  if (temperature !== undefined && !(temperature >= 0 && Number.isFinite(temperature))) throw new MinaraError('INVALID_ARGUMENT', `temperature: expected a number ≥ 0, got ${String(temperature)}`);
  const epochs = options.epochs ?? (temperature === 0 ? 1 : 5);
  if (!Number.isInteger(epochs) || epochs < 1 || epochs > 1000) throw new MinaraError('INVALID_ARGUMENT', `epochs: expected a whole number from 1 to 1000, got ${String(options.epochs)}`);
  const anon = anonymise ? anonymiseBarSet(engine.bars, anonymise === true ? {} : anonymise) : undefined;
  const bars = anon?.bars ?? engine.bars;
  const history = anon ? agent.history?.map((h) => ({ ...h, at: (typeof h.at === 'number' ? h.at : Date.parse(h.at)) + anon.mapping.shiftMs })) : agent.history;
  const seed = engine.seed ?? 1;
  const results: BacktestResult[] = [];
  const strategies: AgentStrategy[] = [];
  for (let epoch = 0; epoch < epochs; epoch++) {
    const model = withCallSettings(agent.model, { ...(temperature !== undefined ? { temperature } : {}), ...(epochs > 1 ? { seed: seed + epoch } : {}) });
    // The engine's limits are the live gate's too unless the agent states its own (a limit is never only checked at fill).
    const limits = agent.limits ?? engine.limits;
    const strategy = createAgentStrategy({ ...agent, model, ...(history ? { history } : {}), ...(limits ? { limits } : {}) });
    strategies.push(strategy);
    const { onProgress, ...quiet } = engine;
    results.push(await runBacktest({ ...quiet, bars, strategy, ...(epoch === 0 && onProgress ? { onProgress } : {}) }));
  }
  const spread: Record<string, MetricSpread> = {};
  for (const m of NUMERIC_METRICS) spread[m] = metricSpread(results.map((r) => r.strategy.metrics[m] as number));
  const first = results[0]!;
  const contamination = contaminationReport({ modelId: `${agent.model.provider}:${agent.model.modelId}`, start: engine.bars.times[0]!, end: engine.bars.times[engine.bars.times.length - 1]! + engine.bars.intervalMs, anonymised: anon !== undefined, cutoffs });
  const costs = strategies.map((s) => s.costs);
  const totalCost = costs.reduce((a, c) => a + c.totalUsd, 0);
  const unpriced = costs.some((c) => c.unpriced > 0);
  const initialCash = engine.initialCash ?? 10_000;
  const report = first.strategyReport ?? {};
  const extraFiles: Record<string, string> = { ...report.extraFiles };
  for (let e = 1; e < results.length; e++) {
    for (const [name, content] of Object.entries(results[e]!.strategyReport?.extraFiles ?? {})) extraFiles[name.replace(/\.(\w+)$/, `.epoch${e + 1}.$1`)] = content;
  }
  extraFiles['agent_decisions.html'] = renderAgentDecisionsHtml({ decisions: strategies[0]!.decisions, contamination, disabled: strategies[0]!.disabled, costUsd: strategies[0]!.costs.unpriced > 0 ? 'unpriced' : strategies[0]!.costs.totalUsd });
  extraFiles['epochs.json'] = `${JSON.stringify({ epochs, temperature: temperature ?? null, seeds: results.map((_, e) => (epochs > 1 ? seed + e : null)), metrics: results.map((r) => r.strategy.metrics), spread }, null, 2)}\n`;
  const metrics: Record<string, number | string | null> = {
    ...report.metrics,
    epochs,
    llmCostUsdAllEpochs: unpriced ? 'unpriced' : Math.round(totalCost * 1e6) / 1e6,
    contaminationOverlap: contamination.overlap ? 'yes' : 'no',
    trainingCutoff: contamination.trainingCutoff,
  };
  if (chargeModelCostToPnl) {
    const cost = strategies[0]!.costs;
    metrics.totalReturnAfterModelCost = cost.unpriced > 0 ? 'unpriced' : (first.strategy.metrics.finalEquity - cost.totalUsd - initialCash) / initialCash;
  }
  for (const [m, s] of Object.entries(spread)) if (epochs > 1) metrics[`spread.${m}.std`] = s.std;
  const strategyReport = {
    extraFiles,
    config: { ...report.config, contamination, anonymised: anon ? anon.mapping : null, epochs, temperature: temperature ?? null, chargeModelCostToPnl: chargeModelCostToPnl ?? false },
    metrics,
  };
  const result: BacktestResult = { ...first, config: { ...first.config, strategyReport: strategyReport.config }, strategyReport };
  return { result, epochs: results, spread, contamination, strategies };
}

/** A run with the learning loop on beside one with it off, on the same window. */
export interface LearningComparison {
  readonly on: AgentBacktestResult;
  readonly off: AgentBacktestResult;
  /** Metric deltas (on − off) with a 95 % interval (Welch over epochs; none for one epoch each). */
  readonly deltas: Readonly<Record<string, { readonly delta: number; readonly ci95: readonly [number, number] | null }>>;
  /** One line saying what was measured, whatever the answer. */
  readonly summary: string;
}

/**
 * Does reflection help? The same backtest twice, learning on then off (same bars, seeds, schedule and model), with
 * the delta of every metric. The summary states the result whichever way it goes.
 */
export async function runLearningComparison(options: AgentBacktestOptions): Promise<LearningComparison> {
  const on = await runAgentBacktest({ ...options, agent: { ...options.agent, learning: true } });
  const off = await runAgentBacktest({ ...options, agent: { ...options.agent, learning: false } });
  const deltas: Record<string, { delta: number; ci95: readonly [number, number] | null }> = {};
  for (const m of NUMERIC_METRICS) {
    const a = on.spread[m]!;
    const b = off.spread[m]!;
    deltas[m] = { delta: a.mean - b.mean, ci95: welchInterval(a, b) ?? null };
  }
  const d = deltas.totalReturn!;
  const ci = d.ci95 ? ` (95 % interval ${d.ci95[0].toFixed(4)} to ${d.ci95[1].toFixed(4)})` : ' (one epoch each: no interval)';
  const verdict = d.ci95 ? (d.ci95[0] > 0 ? 'learning helped' : d.ci95[1] < 0 ? 'learning hurt' : 'no significant difference') : d.delta > 0 ? 'learning ahead on this run' : d.delta < 0 ? 'learning behind on this run' : 'no difference';
  return { on, off, deltas, summary: `total return with learning on − off: ${d.delta.toFixed(4)}${ci}: ${verdict}.` };
}
