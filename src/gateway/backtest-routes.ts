/**
 * `GET /v1/backtests`: the caller's backtest runs (the report artifacts `run_backtest` made, newest first), each
 * with its metrics markdown and the id of its equity chart, so the web app's Backtests page can list them and
 * show the chart through the artifact viewer. Read-only and per user: a caller sees only their own runs.
 */
import type { Artifact } from '../artifacts/types';
import { badRequest, json, notFound } from './http-error';
import type { RouteContext, RouteHandler } from './router';
import type { GatewayDeps } from './types';

/** Title prefix of a backtest report (`BACKTEST_REPORT_TITLE_PREFIX` of `@minara/agent/backtest`; a test keeps them equal). */
export const BACKTEST_TITLE_PREFIX = 'Backtest: ';

const CHART_URI = /\bchart:\/\/(x-[a-z0-9]{6,64})(?![a-z0-9])/;

/** One listed run. */
export interface BacktestRunView {
  readonly id: string;
  readonly uri: string;
  readonly title: string;
  readonly createdAt: string;
  readonly markdown: string;
  readonly chartId?: string | undefined;
}

function toRun(a: Artifact): BacktestRunView | undefined {
  if (a.kind !== 'report' || !a.title?.startsWith(BACKTEST_TITLE_PREFIX) || a.status !== 'completed' || !a.data) return undefined;
  const chartId = CHART_URI.exec(a.data.markdown)?.[1];
  return { id: a.id, uri: a.uri, title: a.title.slice(BACKTEST_TITLE_PREFIX.length), createdAt: a.createdAt, markdown: a.data.markdown, ...(chartId ? { chartId } : {}) };
}

/** `GET /v1/backtests?limit=` (1–100, default 20). */
export function listBacktests(deps: GatewayDeps): RouteHandler {
  return async ({ url, userId }: RouteContext) => {
    const store = deps.options.artifacts;
    if (!store) throw notFound('Artifacts are not enabled on this gateway, so there are no backtest runs.');
    const limitRaw = url.searchParams.get('limit');
    if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100)) throw badRequest(`limit: expected an integer from 1 to 100, got ${JSON.stringify(limitRaw)}.`);
    const limit = limitRaw === null ? 20 : Number(limitRaw);
    const reports = await store.list({ userId }, { kind: 'report', limit: 200 });
    const runs = reports.map(toRun).filter((r): r is BacktestRunView => r !== undefined).slice(0, limit);
    return json(200, { runs });
  };
}
