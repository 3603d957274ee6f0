/**
 * What the gateway says about itself and the caller: background jobs (`GET /v1/jobs`, operators), what autonomous
 * turns delivered (`GET /v1/deliveries`), usage and quota standing (`GET /v1/usage`), and who the caller is and what
 * this gateway offers (`GET /v1/info`).
 */
import { assertSessionVisible } from './chat-routes';
import { badRequest, HttpError, json } from './http-error';
import { USER_TURN_SOURCES } from './quotas';
import type { RouteHandler } from './router';
import type { GatewayDeps, GatewayJobsSource } from './types';

/** `GET /v1/jobs`: the background jobs and their recent runs (operators only). */
export function listJobs(background: GatewayJobsSource): RouteHandler {
  return async ({ url, operator }) => {
    // Job runs are the operator's business (they name sessions and errors of every tenant's autonomous turns).
    if (!operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Background jobs are visible to operators only.');
    const jobId = url.searchParams.get('job') ?? undefined;
    const limitRaw = url.searchParams.get('limit');
    if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 200)) throw badRequest(`limit: expected an integer from 1 to 200, got ${JSON.stringify(limitRaw)}.`);
    const runs = await background.runs({ ...(jobId ? { jobId } : {}), limit: limitRaw === null ? 50 : Number(limitRaw) });
    return json(200, { started: background.started, jobs: background.status(), runs });
  };
}

/** `GET /v1/deliveries`: what the agent did by itself for this user (heartbeat, schedule, webhooks), for the web app's notifications. */
export function listDeliveries(source: GatewayJobsSource): RouteHandler {
  return async ({ url, userId }) => {
    const after = url.searchParams.get('after') ?? undefined;
    if (after !== undefined && (after.length > 40 || Number.isNaN(Date.parse(after)))) throw badRequest(`after: expected an ISO time, got ${JSON.stringify(after.slice(0, 40))}.`);
    const limitRaw = url.searchParams.get('limit');
    if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 100)) throw badRequest(`limit: expected an integer from 1 to 100, got ${JSON.stringify(limitRaw)}.`);
    return json(200, { deliveries: await source.deliveries!({ userId, ...(after !== undefined ? { after } : {}), limit: limitRaw === null ? 20 : Number(limitRaw) }) });
  };
}

/** Where every user stands on `day` (operators only): each user with turns that day or a stored quota setting. */
async function everyUsersUsage(deps: GatewayDeps, day: string): Promise<Response> {
  const { storage } = deps.options;
  const [byUser, settings] = await Promise.all([storage.usage.byUser({ day }), storage.controls.listQuotas()]);
  const ids = [...new Set([...byUser.map((u) => u.userId), ...settings.map((q) => q.userId)])].sort();
  const userTurns = new Map((await storage.usage.byUser({ day, sources: USER_TURN_SOURCES })).map((u) => [u.userId, u.totals] as const));
  const users = await Promise.all(ids.map(async (id) => ({
    userId: id, today: byUser.find((u) => u.userId === id)?.totals ?? null, userTurns: userTurns.get(id) ?? null, quota: await deps.quotas.standing(id),
  })));
  return json(200, { day, defaults: deps.quotas.defaults, users });
}

/** `GET /v1/usage`: the caller's usage on a day (and in one session), with its quota standing; `?all=1` for operators. */
export function getUsage(deps: GatewayDeps): RouteHandler {
  return async ({ url, userId, operator, quota }) => {
    const day = url.searchParams.get('day') ?? deps.now().toISOString().slice(0, 10);
    if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw badRequest(`day: expected YYYY-MM-DD, got ${JSON.stringify(day)}.`);
    if (url.searchParams.get('all') === '1') {
      if (!operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Every user\'s usage is visible to operators only.');
      return everyUsersUsage(deps, day);
    }
    const sessionId = url.searchParams.get('session');
    if (sessionId !== null) await assertSessionVisible(deps, sessionId, userId);
    const usage = deps.options.storage.usage;
    const [today, autonomous, session] = await Promise.all([
      usage.totals({ day, userId }),
      usage.totals({ day, userId, sources: ['heartbeat', 'cron', 'webhook', 'workflow'] }),
      sessionId === null ? Promise.resolve(undefined) : usage.totals({ sessionId, userId }),
    ]);
    return json(200, { day, today, autonomous, ...(session ? { session } : {}), quota: await deps.quotas.standing(userId, quota) });
  };
}

/** `GET /v1/info`: who the caller is, the trading mode, whether a model is configured, and which features are on. */
export function getInfo(deps: GatewayDeps): RouteHandler {
  const { options } = deps;
  const { modelStatus, web } = options;
  return ({ userId, canDecide }) =>
    json(200, {
      identity: { userId, canDecide },
      ...(options.tradingMode !== undefined ? { tradingMode: options.tradingMode } : {}),
      model: modelStatus === undefined ? { configured: true } : modelStatus.configured ? { configured: true, label: modelStatus.label } : { configured: false, reason: modelStatus.reason },
      features: { memory: options.memoryFor !== undefined, learning: options.learningFor !== undefined, deliveries: options.background?.deliveries !== undefined, workflows: options.workflows !== undefined, alerts: options.tools.has('alert_request'), shadow: options.tools.has('shadow_report'), workspace: options.workspace !== undefined, artifacts: options.artifacts !== undefined, backtestRuns: options.backtestRuns !== undefined, files: options.files !== undefined, approvals: true, mcp: options.mcp !== undefined, web: web !== undefined },
    });
}
