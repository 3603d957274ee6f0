/**
 * The run folder: run_config.json, metrics.json, equity_curve.csv, trades.csv, orders.csv,
 * rejected_orders.csv, a self-contained report.html (Vega charts compiled from Vega-Lite, the Vega runtime
 * inlined, no network) and equity.png when Chromium is available. Everything but `createdAt` in
 * run_config.json is a pure function of the result, so the same run twice gives the same bytes.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { compileChart } from '../artifacts/chart';
import { launchChartPngRenderer } from '../artifacts/png';
import { escapeHtml, jsonForScript, VIEWER_CSP, vegaBrowserSource } from '../artifacts/viewer';
import type { BacktestMetrics, BacktestResult, StrategyRun } from './types';

/** Options of {@link writeBacktestReport}. */
export interface WriteReportOptions {
  /** Render equity.png with headless Chromium: `auto` renders when Chromium is found. @default 'auto' */
  readonly png?: boolean | 'auto';
  /** Most points per chart line (the curve is thinned evenly, the last point kept). @default 1500 */
  readonly maxChartPoints?: number;
}

/** What {@link writeBacktestReport} wrote. */
export interface WrittenReport {
  readonly dir: string;
  readonly files: readonly string[];
  /** Why equity.png was not written, when it was not. */
  readonly pngSkipped?: string;
}

/** JSON with NaN and ±Infinity as null (JSON has neither), two-space indent, trailing newline. */
export function stableJson(value: unknown): string {
  return `${JSON.stringify(value, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v instanceof Float64Array ? Array.from(v) : v), 2)}\n`;
}

const iso = (t: number) => new Date(t).toISOString();
const csvCell = (v: unknown): string => {
  const s = typeof v === 'number' ? (Number.isFinite(v) ? String(v) : '') : String(v ?? '');
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};
const csv = (header: readonly string[], rows: Iterable<readonly unknown[]>): string => {
  const lines = [header.join(',')];
  for (const r of rows) lines.push(r.map(csvCell).join(','));
  return `${lines.join('\n')}\n`;
};

/** metrics.json: the strategy's metrics, each baseline's, and what the strategy contributed. */
export function metricsDocument(result: BacktestResult): Record<string, unknown> {
  const baselines: Record<string, BacktestMetrics> = {};
  for (const b of result.baselines) baselines[b.name] = b.metrics;
  return { strategy: result.strategy.name, metrics: result.strategy.metrics, baselines, ...(result.strategyReport?.metrics ? { strategyMetrics: result.strategyReport.metrics } : {}) };
}

function drawdownSeries(equity: Float64Array): Float64Array {
  const dd = new Float64Array(equity.length);
  let peak = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < equity.length; i++) {
    const e = equity[i] as number;
    if (e > peak) peak = e;
    dd[i] = peak > 0 ? e / peak - 1 : 0;
  }
  return dd;
}

function* equityRows(result: BacktestResult, dd: Float64Array): Iterable<unknown[]> {
  const times = result.bars.times;
  const step = result.bars.intervalMs;
  for (let i = 0; i < times.length; i++) {
    yield [iso((times[i] as number) + step), result.strategy.equity[i], ...result.baselines.map((b) => b.equity[i]), dd[i], result.strategy.exposure[i]];
  }
}

/** The CSV files of a run (name → content). */
export function reportCsvFiles(result: BacktestResult): Record<string, string> {
  const s = result.strategy;
  const dd = drawdownSeries(s.equity);
  const fillOf = new Map(s.fills.map((f) => [f.orderId, f] as const));
  return {
    'equity_curve.csv': csv(['time', `equity_${s.name}`, ...result.baselines.map((b) => `equity_${b.name}`), 'drawdown', 'exposure_usd'], equityRows(result, dd)),
    'trades.csv': csv(['symbol', 'entry_time', 'exit_time', 'quantity', 'entry_price', 'exit_price', 'pnl_usd', 'fees_usd', 'return_pct'], s.trades.map((t) => [t.symbol, iso(t.entryTime), iso(t.exitTime), t.quantity, t.entryPrice, t.exitPrice, t.pnlUsd, t.feesUsd, t.returnPct])),
    'orders.csv': csv(
      ['order_id', 'decided_at', 'symbol', 'side', 'requested_quantity', 'filled_quantity', 'status', 'fill_time', 'fill_price', 'fee_usd', 'slippage_bps', 'realized_pnl_usd', 'reason'],
      s.orders.map((o) => {
        const f = fillOf.get(o.orderId);
        return [o.orderId, iso(o.decidedAt), o.symbol, o.side, o.requestedQuantity, o.filledQuantity, o.status, f ? iso(f.time) : '', f?.price ?? '', f?.feeUsd ?? '', f?.slippageBps ?? '', f?.realizedPnlUsd ?? '', o.reason];
      }).sort((a, b) => (a[0] as number) - (b[0] as number)),
    ),
    'rejected_orders.csv': csv(['order_id', 'time', 'symbol', 'side', 'quantity', 'notional_usd', 'rule', 'detail'], s.rejected.map((x) => [x.orderId, iso(x.time), x.symbol, x.side, x.quantity, x.notionalUsd, x.rule, x.detail])),
  };
}

function thin(n: number, max: number): number[] {
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  const out: number[] = [];
  const step = (n - 1) / (max - 1);
  for (let k = 0; k < max; k++) out.push(Math.round(k * step));
  return out;
}

/** The Vega-Lite specs of the report: equity vs baselines, and the strategy's drawdown. */
export function reportChartSpecs(result: BacktestResult, maxPoints = 1500): { equity: Record<string, unknown>; drawdown: Record<string, unknown> } {
  const idx = thin(result.bars.times.length, maxPoints);
  const runs: StrategyRun[] = [result.strategy, ...result.baselines];
  const step = result.bars.intervalMs;
  const equityValues = runs.flatMap((r) => idx.map((i) => ({ t: iso((result.bars.times[i] as number) + step), run: r.name, equity: Math.round((r.equity[i] as number) * 100) / 100 })));
  const dd = drawdownSeries(result.strategy.equity);
  const ddValues = idx.map((i) => ({ t: iso((result.bars.times[i] as number) + step), drawdown: Math.round((dd[i] as number) * 1e6) / 1e6 }));
  return {
    equity: {
      width: 820, height: 320, title: `Equity: ${result.strategy.name} vs baselines`,
      data: { values: equityValues }, mark: { type: 'line', interpolate: 'linear' },
      encoding: { x: { field: 't', type: 'temporal', title: null }, y: { field: 'equity', type: 'quantitative', title: 'Equity (USD)', scale: { zero: false } }, color: { field: 'run', type: 'nominal', title: null, legend: { orient: 'bottom' } } },
    },
    drawdown: {
      width: 820, height: 160, title: `Drawdown: ${result.strategy.name}`,
      data: { values: ddValues }, mark: { type: 'area', color: '#c0392b', opacity: 0.6 },
      encoding: { x: { field: 't', type: 'temporal', title: null }, y: { field: 'drawdown', type: 'quantitative', title: 'Drawdown', axis: { format: '%' } } },
    },
  };
}

const fmt = (v: number, pct = false) => (!Number.isFinite(v) ? (Number.isNaN(v) ? 'n/a' : v > 0 ? '∞' : '−∞') : pct ? `${(v * 100).toFixed(2)} %` : Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(3));
const METRIC_ROWS: readonly (readonly [keyof BacktestMetrics, string, boolean])[] = [
  ['totalReturn', 'Total return', true], ['cagr', 'CAGR', true], ['volatility', 'Volatility (annual)', true], ['sharpe', 'Sharpe', false],
  ['probabilisticSharpe', 'Probabilistic Sharpe (SR* = 0)', true], ['sortino', 'Sortino', false], ['maxDrawdown', 'Max drawdown', true],
  ['maxDrawdownDuration', 'Max drawdown duration (bars)', false], ['calmar', 'Calmar', false], ['turnover', 'Turnover (annual, × equity)', false],
  ['exposure', 'Exposure (mean share invested)', true], ['trades', 'Closed trades', false], ['winRate', 'Win rate', true], ['profitFactor', 'Profit factor', false],
  ['feesUsd', 'Fees (USD)', false], ['finalEquity', 'Final equity (USD)', false],
];

function metricsTable(result: BacktestResult): string {
  const runs = [result.strategy, ...result.baselines];
  const head = `<tr><th>Metric</th>${runs.map((r) => `<th>${escapeHtml(r.name)}</th>`).join('')}</tr>`;
  const rows = METRIC_ROWS.map(([k, label, pct]) => `<tr><td>${escapeHtml(label)}</td>${runs.map((r) => `<td>${escapeHtml(fmt(r.metrics[k] as number, pct))}</td>`).join('')}</tr>`);
  const ci = result.strategy.metrics.sharpeCi95;
  const blocked = Object.entries(result.strategy.metrics.blockedOrders).map(([k, v]) => `${k}: ${v}`).join(', ') || 'none';
  return `<table class="metrics">${head}${rows.join('')}</table>
<p>Sharpe 95 % interval (${escapeHtml(result.strategy.name)}): [${fmt(ci[0])}, ${fmt(ci[1])}], ${escapeHtml(result.strategy.metrics.sharpeCiMethod)}. Blocked orders by rule: ${escapeHtml(blocked)}.</p>`;
}

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:24px auto;max-width:980px;padding:0 16px;color:#1b1f24}
table.metrics{border-collapse:collapse;margin:12px 0}table.metrics td,table.metrics th{border:1px solid #d0d7de;padding:3px 8px;text-align:right}
table.metrics td:first-child,table.metrics th:first-child{text-align:left}.meta{color:#57606a;font-size:13px}`;

function chartScript(ids: readonly string[]): string {
  return `<script>(function(){var ids=${JSON.stringify(ids)};var loader=vega.loader();loader.load=loader.sanitize=function(){return Promise.reject(new Error('charts load nothing from the network'))};` +
    `Promise.all(ids.map(function(id){var spec=JSON.parse(document.getElementById(id+'-spec').textContent);return new vega.View(vega.parse(spec),{renderer:'svg',container:'#'+id,loader:loader}).runAsync()}))` +
    `.then(function(){document.body.setAttribute('data-rendered','1')},function(e){document.body.setAttribute('data-rendered','error');document.getElementById(ids[0]).textContent=String(e&&e.message||e)})})()</script>`;
}

/** The self-contained report page (and, with `only: 'equity'`, the page the PNG is shot from). */
export async function renderReportHtml(result: BacktestResult, options: { readonly maxChartPoints?: number; readonly only?: 'equity' } = {}): Promise<string> {
  const specs = reportChartSpecs(result, options.maxChartPoints);
  const equity = await compileChart(specs.equity);
  const charts: [string, Record<string, unknown>][] = [['chart', equity.vega]];
  if (!options.only) charts.push(['drawdown', (await compileChart(specs.drawdown)).vega]);
  const c = result.config;
  const title = `Backtest: ${result.strategy.name}`;
  const meta = `${c.symbols.join(', ')} · ${c.start.slice(0, 10)} → ${c.end.slice(0, 10)} · ${result.bars.times.length} bars · fill ${c.fill} · fees ${c.fees.bps} bps (min ${c.fees.minUsd} USD) · slippage ${c.slippage.kind === 'fixed' ? `${c.slippage.bps} bps` : `${c.slippage.bpsPerVolumeShare} bps per volume share`} · seed ${c.seed}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${VIEWER_CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body data-kind="backtest-report">
<h1>${escapeHtml(title)}</h1>
<div class="meta">${escapeHtml(meta)}</div>
${charts.map(([id]) => `<div id="${id}" role="img" aria-label="${id === 'chart' ? 'Equity vs baselines' : 'Drawdown'}"></div>`).join('\n')}
${options.only ? '' : metricsTable(result)}
<script>${vegaBrowserSource()}</script>
${charts.map(([id, vega]) => `<script type="application/json" id="${id}-spec">${jsonForScript(vega)}</script>`).join('\n')}
${chartScript(charts.map(([id]) => id))}
</body></html>
`;
}

/** Write the run folder (created if needed). */
export async function writeBacktestReport(result: BacktestResult, dir: string, options: WriteReportOptions = {}): Promise<WrittenReport> {
  await mkdir(dir, { recursive: true });
  const files: Record<string, string | Uint8Array> = {
    'run_config.json': stableJson(result.config),
    'metrics.json': stableJson(metricsDocument(result)),
    ...reportCsvFiles(result),
    'report.html': await renderReportHtml(result, options.maxChartPoints === undefined ? {} : { maxChartPoints: options.maxChartPoints }),
    ...(result.strategyReport?.extraFiles ?? {}),
  };
  for (const name of Object.keys(files)) if (name.includes('/') || name.includes('\\') || name.startsWith('.')) throw new Error(`extraFiles: ${JSON.stringify(name)} must be a plain file name`);
  let pngSkipped: string | undefined;
  const png = options.png ?? 'auto';
  if (png !== false) {
    const renderer = await launchChartPngRenderer();
    if ('unavailable' in renderer) {
      pngSkipped = renderer.unavailable;
      if (png === true) throw new Error(`equity.png: ${renderer.unavailable}`);
    } else {
      try {
        files['equity.png'] = await renderer.render(await renderReportHtml(result, { only: 'equity', ...(options.maxChartPoints === undefined ? {} : { maxChartPoints: options.maxChartPoints }) }));
      } finally {
        await renderer.close();
      }
    }
  }
  const names = Object.keys(files).sort();
  for (const name of names) await writeFile(path.join(dir, name), files[name] as string | Uint8Array);
  return { dir, files: names, ...(pngSkipped ? { pngSkipped } : {}) };
}
