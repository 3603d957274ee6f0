/**
 * Agent backtest runs over HTTP, for the web app's Backtests page: `GET /v1/backtests/runs` lists the caller's run
 * folders and `GET /v1/backtests/runs/:run/decisions?offset=&limit=` pages through one run's decisions (what the
 * model was told and saw, what it said and did, what the gate decided, the orders and the engine's fills), read
 * from the folder `writeBacktestReport` wrote (`decisions.jsonl`, `orders.csv`, `run_config.json`, `metrics.json`).
 *
 * Same access as `GET /v1/backtests`: any authenticated caller, for their own tenant only. Runs live in
 * `<backtestRuns.dir>/<userId>/<run>/`; the run id is one plain folder name, symlinks are refused, files are
 * size-checked before reading, pages hold at most 50 decisions and each tool result is cut to a preview.
 */
import { MinaraError } from '../errors/minara-error';
import { listRunDirs, readLines, readRunFile, runDir, type RunFolders } from './backtest-run-files';
import { badRequest, HttpError, json, notFound } from './http-error';
import type { RouteContext, RouteHandler } from './router';
import type { GatewayDeps } from './types';

/** Default and largest decisions per page. */
const PAGE = { default: 20, max: 50 } as const;
/** A tool result or call input longer than this (JSON characters) is sent as a preview. */
const MAX_VALUE_CHARS = 4000;
/** Messages and answers longer than this are cut. */
const MAX_TEXT_CHARS = 20_000;
/** A system prompt longer than this is cut (the full text stays in system_prompts.jsonl). */
const MAX_PROMPT_CHARS = 60_000;
/** Runs listed at most, and run folders read at most to list them (by name, last first: timestamped names, newest). */
const MAX_RUNS = 100;
const MAX_SCANNED = 300;
const DEFAULT_MAX_FILE_BYTES = 32 * 1024 * 1024;

/** One fill (or engine rejection) of a decision's order, from orders.csv. */
export interface BacktestDecisionFill {
  readonly orderId: string;
  readonly symbol: string;
  readonly side: string;
  /** `filled`, `partial`, `rejected` (the engine's limits or accounting at fill) or `unfilled` (no next bar). */
  readonly status: string;
  readonly quantity: number | null;
  readonly time: string | null;
  readonly price: number | null;
  readonly feeUsd: number | null;
  readonly slippageBps: number | null;
  readonly realizedPnlUsd: number | null;
  readonly reason: string;
}

type Json = Record<string, unknown>;

/** Check `backtestRuns` once, when the gateway is created. */
export function runFoldersOf(options: GatewayDeps['options']): RunFolders | undefined {
  const o = options.backtestRuns;
  if (o === undefined) return undefined;
  if (typeof o !== 'object' || o === null || typeof o.dir !== 'string' || o.dir.trim() === '') throw new MinaraError('CONFIG_INVALID', 'createGateway: "backtestRuns.dir" must be the directory of run folders (one sub-folder per tenant: <dir>/<userId>/<run>/).');
  const max = o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  if (!Number.isSafeInteger(max) || max < 1) throw new MinaraError('CONFIG_INVALID', 'createGateway: "backtestRuns.maxFileBytes" must be a positive integer (bytes).');
  return { dir: o.dir, maxFileBytes: max };
}

function intParam(url: URL, name: string, min: number, max: number, fallback: number): number {
  const raw = url.searchParams.get(name);
  if (raw === null) return fallback;
  if (!/^\d{1,7}$/.test(raw) || Number(raw) < min || Number(raw) > max) throw badRequest(`${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(raw.slice(0, 20))}.`);
  return Number(raw);
}

const parseJson = (text: string | undefined): Json => {
  if (text === undefined) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {};
  } catch {
    return {};
  }
};
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : {});
const cutText = (v: unknown): string => {
  const s = typeof v === 'string' ? v : '';
  return s.length > MAX_TEXT_CHARS ? `${s.slice(0, MAX_TEXT_CHARS)}…` : s;
};
/** A value as sent: itself when small, else `{ truncated, chars, preview }`. */
const cutValue = (v: unknown): unknown => {
  const text = JSON.stringify(v) ?? 'null';
  return text.length <= MAX_VALUE_CHARS ? v : { truncated: true, chars: text.length, preview: `${text.slice(0, MAX_VALUE_CHARS)}…` };
};
const num = (v: string | undefined): number | null => (v === undefined || v === '' || !Number.isFinite(Number(v)) ? null : Number(v));

/** The run's header: its window, symbols, model, prompt, contamination statement and the tools that were off. */
function runSummary(id: string, config: Json, metrics: Json): Json {
  const report = obj(config.strategyReport);
  const agent = obj(report.agent);
  const m = obj(metrics.metrics);
  const sm = obj(metrics.strategyMetrics);
  return {
    id,
    strategy: obj(config.strategy).name ?? null,
    symbols: Array.isArray(config.symbols) ? config.symbols : [],
    start: config.start ?? null,
    end: config.end ?? null,
    createdAt: config.createdAt ?? null,
    model: agent.model ?? null,
    prompt: cutText(agent.prompt),
    approvals: agent.approvals ?? null,
    contamination: report.contamination ?? null,
    disabledTools: Array.isArray(agent.disabledTools) ? agent.disabledTools : [],
    metrics: { totalReturn: m.totalReturn ?? null, sharpe: m.sharpe ?? null, maxDrawdown: m.maxDrawdown ?? null, trades: m.trades ?? null, feesUsd: m.feesUsd ?? null, llmCostUsd: sm.llmCostUsd ?? null, agentBlockedOrders: sm.agentBlockedOrders ?? null },
  };
}

/** orders.csv rows by the decision time they were decided at. */
async function fillsByDecision(csvText: string | undefined): Promise<Map<string, BacktestDecisionFill[]>> {
  const out = new Map<string, BacktestDecisionFill[]>();
  if (!csvText) return out;
  const { parse } = await import('csv-parse/sync');
  const rows = parse(csvText, { columns: true, skip_empty_lines: true, relax_column_count: true }) as Array<Record<string, string | undefined>>;
  for (const r of rows) {
    const at = r.decided_at ?? '';
    const fill: BacktestDecisionFill = {
      orderId: r.order_id ?? '', symbol: r.symbol ?? '', side: r.side ?? '', status: r.status ?? '', quantity: num(r.filled_quantity), time: r.fill_time ? r.fill_time : null,
      price: num(r.fill_price), feeUsd: num(r.fee_usd), slippageBps: num(r.slippage_bps), realizedPnlUsd: num(r.realized_pnl_usd), reason: cutText(r.reason),
    };
    out.set(at, [...(out.get(at) ?? []), fill]);
  }
  return out;
}

/** The system prompts (system_prompts.jsonl) the page's decisions were given, by sha256, each cut to a bound. */
function promptsFor(text: string | undefined, decisions: readonly Json[]): Record<string, string> {
  const wanted = new Set(decisions.map((d) => obj(d.context).sha256).filter((s): s is string => typeof s === 'string'));
  const out: Record<string, string> = {};
  if (!text || wanted.size === 0) return out;
  for (const line of text.split('\n')) {
    const sha = /^\{"sha256":"([0-9a-f]{64})"/.exec(line)?.[1];
    if (sha === undefined || !wanted.has(sha) || out[sha] !== undefined) continue;
    const t = parseJson(line).text;
    if (typeof t === 'string') out[sha] = t.length > MAX_PROMPT_CHARS ? `${t.slice(0, MAX_PROMPT_CHARS)}…` : t;
  }
  return out;
}

/** One decisions.jsonl line as the page shows it (big values cut), with the engine's fills of its orders. */
function decisionView(line: string, fills: ReadonlyMap<string, BacktestDecisionFill[]>): Json {
  const d = parseJson(line);
  const list = (v: unknown) => (Array.isArray(v) ? v.map(obj) : []);
  const time = typeof d.time === 'string' ? d.time : '';
  return {
    decision: d.decision ?? null, index: d.index ?? null, time, message: cutText(d.message),
    context: typeof obj(d.context).sha256 === 'string' ? { sha256: obj(d.context).sha256, chars: obj(d.context).chars ?? null } : null,
    saw: list(d.saw).map((s) => ({ tool: String(s.tool ?? ''), ok: s.ok === true, output: cutValue(s.output) })),
    said: cutText(d.said),
    did: list(d.did).map((x) => ({ tool: String(x.tool ?? ''), input: cutValue(x.input) })),
    gate: list(d.gate).map((g) => ({ tool: String(g.tool ?? ''), decision: String(g.decision ?? ''), rule: String(g.rule ?? ''), reason: cutText(g.reason) })),
    intents: list(d.intents).slice(0, 50),
    fills: fills.get(time) ?? [],
    stopReason: d.stopReason ?? null, costUsd: d.costUsd ?? null,
  };
}

/** `GET /v1/backtests/runs`: the caller's agent runs (folders with a decisions.jsonl), newest first. */
function listRuns(folders: RunFolders | undefined): RouteHandler {
  return async ({ userId }: RouteContext) => {
    if (!folders) throw notFound(NOT_CONFIGURED);
    const runs: Json[] = [];
    for (const { id, dir } of await listRunDirs(folders, userId, MAX_SCANNED)) {
      // A folder without decisions.jsonl is not an agent run; one too large to count is listed without a count.
      const page = await readLines(folders, dir, 'decisions.jsonl', id, 0, 0).catch((e: unknown) => (e instanceof HttpError && e.status === 413 ? { total: null } : undefined));
      if (!page) continue;
      const [config, metrics] = await Promise.all([readRunFile(folders, dir, 'run_config.json', id), readRunFile(folders, dir, 'metrics.json', id)].map((p) => p.catch(() => undefined)));
      const { disabledTools: _d, contamination: _c, prompt: _p, ...summary } = runSummary(id, parseJson(config), parseJson(metrics));
      runs.push({ ...summary, decisions: page.total });
    }
    runs.sort((a, b) => String(b.createdAt ?? '').localeCompare(String(a.createdAt ?? '')) || String(a.id).localeCompare(String(b.id)));
    return json(200, { runs: runs.slice(0, MAX_RUNS) });
  };
}

/** `GET /v1/backtests/runs/:run/decisions?offset=&limit=`: one page of a run's decisions. */
function listDecisions(folders: RunFolders | undefined): RouteHandler {
  return async ({ url, userId, params }: RouteContext) => {
    if (!folders) throw notFound(NOT_CONFIGURED);
    const id = params.run ?? '';
    const offset = intParam(url, 'offset', 0, 1_000_000, 0);
    const limit = intParam(url, 'limit', 1, PAGE.max, PAGE.default);
    const dir = await runDir(folders, userId, id);
    const page = await readLines(folders, dir, 'decisions.jsonl', id, offset, limit);
    if (!page) throw notFound(`Backtest run ${JSON.stringify(id)} has no decisions.jsonl (it is not an agent run).`);
    const tooBig = (e: unknown) => {
      if (e instanceof HttpError && e.status === 413) return undefined;
      throw e;
    };
    // The prompts file of a long run may pass the size limit: the page then comes without the prompt texts.
    const [config, metrics, orders, prompts] = await Promise.all([
      readRunFile(folders, dir, 'run_config.json', id), readRunFile(folders, dir, 'metrics.json', id), readRunFile(folders, dir, 'orders.csv', id),
      readRunFile(folders, dir, 'system_prompts.jsonl', id).catch(tooBig),
    ]);
    const fills = await fillsByDecision(orders);
    const decisions = page.lines.map((l) => decisionView(l, fills));
    return json(200, {
      run: runSummary(id, parseJson(config), parseJson(metrics)),
      total: page.total, offset, limit, next: offset + limit < page.total ? offset + limit : null,
      decisions,
      // The system prompt each decision was given (what the model saw before the message), once per distinct prompt.
      prompts: promptsFor(prompts, decisions),
    });
  };
}

const NOT_CONFIGURED = 'Agent backtest runs are not served by this gateway (createGateway option backtestRuns, or GATEWAY_BACKTEST_RUNS_DIR for minara serve).';

/** The routes, with `backtestRuns` checked now (a bad option fails createGateway, not a request). */
export function backtestRunRoutes(deps: GatewayDeps): Array<[string, string, RouteHandler]> {
  const folders = runFoldersOf(deps.options);
  return [
    ['GET', '/v1/backtests/runs', listRuns(folders)],
    ['GET', '/v1/backtests/runs/:run/decisions', listDecisions(folders)],
  ];
}
