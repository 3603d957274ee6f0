/**
 * Read routes for the web app's trading views, over the registry's finance tools (so every read goes
 * through the gate and the audit log like a chat's): the portfolio and P&L page, and the preview of an
 * approval waiting for a decision (what the call would do, in numbers, before anyone clicks Approve).
 */
import { compileChart } from '../artifacts/chart';
import { createToolCallContext } from '../tools/context';
import { parseEnvelope } from '../tools/envelope';
import { visibleApproval } from './approvals-routes';
import { HttpError, json, notFound } from './http-error';
import { decodeParam, type RouteContext, type RouteHandler } from './router';
import type { GatewayDeps } from './types';

type Obj = Record<string, unknown>;

/** Run a READ_ONLY tool (or a fund-moving tool's preview) for this user; the envelope. */
async function run(deps: GatewayDeps, userId: string, sessionId: string, name: string, args: Obj) {
  const context = createToolCallContext({ sessionId, source: 'user', userId });
  return parseEnvelope(await deps.options.tools.dispatch(name, args, { context }));
}

let vega: Promise<typeof import('vega')> | undefined;

/** The allocation (and, from the second day of history, realised P&L by day) as an SVG drawn by Vega on the server. */
async function portfolioChart(holdings: readonly Obj[], byDay: readonly Obj[]): Promise<{ svg: string; description: string } | null> {
  const rows = holdings
    .map((h) => ({ asset: String(h['asset'] ?? '?'), valueUsd: Number(h['valueUsd'] ?? 0) }))
    .filter((h) => Number.isFinite(h.valueUsd) && h.valueUsd > 0);
  if (rows.length === 0) return null;
  const days = byDay.map((d) => ({ day: String(d['day'] ?? ''), realizedUsd: Number(d['realizedUsd'] ?? 0) })).filter((d) => d.day !== '' && Number.isFinite(d.realizedUsd));
  const allocation = {
    title: 'Allocation (USD)',
    width: 520,
    data: { values: rows },
    mark: { type: 'bar', color: '#2f5bd3' },
    encoding: {
      y: { field: 'asset', type: 'nominal', sort: '-x', title: null },
      x: { field: 'valueUsd', type: 'quantitative', title: 'value (USD)', axis: { format: '$,.0f' } },
    },
  };
  const pnl = {
    title: 'Realised P&L by day (USD)',
    width: 520,
    height: 140,
    data: { values: days },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'day', type: 'ordinal', title: null },
      y: { field: 'realizedUsd', type: 'quantitative', title: 'USD', axis: { format: '$,.2f' } },
      color: { condition: { test: 'datum.realizedUsd < 0', value: '#b42318' }, value: '#1c7c3d' },
    },
  };
  // One day of P&L is a single bar: the page's table says it better; the bars start from the second day.
  const compiled = await compileChart(days.length > 1 ? { vconcat: [allocation, pnl], spacing: 24 } : allocation);
  vega ??= import('vega');
  const { View, parse } = await vega;
  const view = new View(parse(compiled.vega as Parameters<typeof parse>[0]), { renderer: 'none' });
  try {
    const svg = await view.toSVG();
    const top = [...rows].sort((a, b) => b.valueUsd - a.valueUsd).map((r) => `${r.asset} $${r.valueUsd.toFixed(2)}`);
    const description = `Bar chart of holdings by value: ${top.join(', ')}${days.length > 1 ? `; realised P&L on ${days.length} days` : ''}.`;
    return { svg, description };
  } finally {
    view.finalize();
  }
}

/**
 * `GET /v1/finance/portfolio`: `{ portfolio, pnl, chart: { svg, description } | null }` from the finance
 * pack's `get_portfolio` and `minara_pnl` tools, run as this user. 404 when the registry has no finance pack.
 */
export function getPortfolio(deps: GatewayDeps): RouteHandler {
  return async ({ userId }: RouteContext) => {
    const { tools } = deps.options;
    if (!tools.has('get_portfolio') || !tools.has('minara_pnl')) throw notFound('The finance tools (get_portfolio, minara_pnl) are not registered on this gateway.');
    const session = `web-portfolio-${userId}`;
    const [portfolio, pnl] = await Promise.all([run(deps, userId, session, 'get_portfolio', {}), run(deps, userId, session, 'minara_pnl', {})]);
    if (!portfolio.ok) throw new HttpError(502, 'PROVIDER_ERROR', `get_portfolio: ${portfolio.error}`);
    if (!pnl.ok) throw new HttpError(502, 'PROVIDER_ERROR', `minara_pnl: ${pnl.error}`);
    const p = portfolio.data as Obj;
    const r = pnl.data as Obj;
    const chart = await portfolioChart(Array.isArray(p['holdings']) ? (p['holdings'] as Obj[]) : [], Array.isArray(r['byDay']) ? (r['byDay'] as Obj[]) : []);
    return json(200, { portfolio: p, pnl: r, chart });
  };
}

/**
 * `GET /v1/approvals/:id/preview`: what a pending fund-moving call would do: `{ approval: { id, toolName,
 * input }, preview }` where `preview` is the tool's own preview (quote, fee, slippage, exposure; nothing
 * moves: it runs without `confirm`), `{ ok: false, code, error }` when the safety checks would refuse the
 * call, or `null` for a tool without a preview. Another tenant's approval answers 404.
 */
export function getApprovalPreview(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const id = decodeParam('id', params['id'] ?? '');
    const { tools } = deps.options;
    const record = await tools.approvals.get(id);
    if (!record || !(await visibleApproval(deps, record, userId))) throw notFound(`No approval "${id}".`);
    let input: unknown;
    try {
      input = JSON.parse(record.inputJson);
    } catch {
      input = null;
    }
    const approval = { id: record.id, toolName: record.toolName, status: record.status, input };
    const tool = tools.get(record.toolName);
    // Only a fund-moving tool has a preview; anything else would run for real, so it is never dispatched here.
    if (!tool?.isFundMoving || typeof input !== 'object' || input === null || Array.isArray(input)) return json(200, { approval, preview: null });
    const envelope = await run(deps, userId, record.sessionId ?? `approval-preview-${userId}`, record.toolName, { ...(input as Obj), confirm: false });
    const preview = envelope.ok ? envelope.data : { ok: false, code: envelope.code, error: envelope.error };
    return json(200, { approval, preview });
  };
}

/** The routes of this file, for `createGateway`. */
export function financeRoutes(deps: GatewayDeps): ReadonlyArray<readonly [method: string, pattern: string, handler: RouteHandler]> {
  return [
    ['GET', '/v1/finance/portfolio', getPortfolio(deps)],
    ['GET', '/v1/approvals/:id/preview', getApprovalPreview(deps)],
  ];
}
