/**
 * Workflows over HTTP (docs/gateway.md, "Workflows"): the workflows that run for the caller, their stored runs
 * (tenant-scoped: another tenant's run is a 404), and a manual start for operators.
 */
import type { WorkflowRunStatus } from '../storage/automation-types';
import { field, readJsonObject } from './body';
import { badRequest, HttpError, json, notFound } from './http-error';
import { decodeParam, type RouteHandler } from './router';
import type { GatewayDeps, GatewayWorkflowsSource } from './types';

const STATUSES: readonly WorkflowRunStatus[] = ['running', 'ok', 'failed', 'interrupted'];
const NAME = /^[a-z0-9][a-z0-9_-]{0,47}$/;

function limitOf(url: URL): number {
  const raw = url.searchParams.get('limit');
  if (raw === null) return 20;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 100) throw badRequest(`limit: expected an integer from 1 to 100, got ${JSON.stringify(raw.slice(0, 20))}.`);
  return Number(raw);
}

/** The workflow routes. */
export function workflowRoutes(deps: GatewayDeps, workflows: GatewayWorkflowsSource): Array<[method: string, pattern: string, handler: RouteHandler]> {
  const list: RouteHandler = async ({ userId, operator }) => {
    const all = await workflows.list();
    // A tenant sees the workflows that run for them; the operator sees all, and the files that did not load.
    return json(200, { workflows: operator ? all : all.filter((w) => w.userId === userId), ...(operator ? { issues: await workflows.issues() } : {}) });
  };
  const runs: RouteHandler = async ({ url, userId }) => {
    const workflowId = url.searchParams.get('workflow') ?? undefined;
    if (workflowId !== undefined && !NAME.test(workflowId)) throw badRequest(`workflow: expected a workflow name, got ${JSON.stringify(workflowId.slice(0, 60))}.`);
    const status = url.searchParams.get('status') ?? undefined;
    if (status !== undefined && !(STATUSES as readonly string[]).includes(status)) throw badRequest(`status: expected one of ${STATUSES.join(', ')}, got ${JSON.stringify(status.slice(0, 40))}.`);
    return json(200, { runs: await workflows.runs({ userId, limit: limitOf(url), ...(workflowId ? { workflowId } : {}), ...(status ? { status: status as WorkflowRunStatus } : {}) }) });
  };
  const run: RouteHandler = async ({ params, userId }) => {
    const id = decodeParam('id', params['id'] ?? '');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw badRequest('id: expected a run id (wfr_…).');
    const found = await workflows.getRun(id);
    if (!found || found.userId !== userId) throw notFound(`No workflow run "${id}".`);
    return json(200, { run: found });
  };
  const start: RouteHandler = async ({ request, params, operator }) => {
    if (!operator) throw new HttpError(403, 'HTTP_FORBIDDEN', 'Starting a workflow by hand is the operator\'s.');
    const name = decodeParam('name', params['name'] ?? '');
    if (!NAME.test(name)) throw badRequest('name: expected a workflow name (a-z, 0-9, "_", "-").');
    const info = await workflows.get(name);
    if (!info) throw notFound(`No workflow "${name}".`);
    let input: unknown;
    if (request.headers.get('content-type')?.includes('application/json')) {
      const body = await readJsonObject(request, deps.maxBodyBytes);
      field.only(body, ['input']);
      if (body['input'] !== undefined && (typeof body['input'] !== 'object' || body['input'] === null || Array.isArray(body['input']))) throw badRequest('input: expected a JSON object.');
      input = body['input'];
    }
    if (info.modelSteps > 0) {
      const refused = await deps.options.admitAutonomousTurn?.({ userId: deps.defaultUserId });
      if (refused !== undefined) throw new HttpError(429, 'HTTP_TOO_MANY_REQUESTS', `Not now: ${refused}.`);
    }
    const started = await workflows.start(name, { trigger: 'manual', ...(input !== undefined ? { input } : {}) });
    if (!started) throw new HttpError(409, 'HTTP_CONFLICT', 'That run was already started.');
    return json(202, { accepted: true, run: started.run });
  };
  return [
    ['GET', '/v1/workflows', list],
    ['GET', '/v1/workflows/runs', runs],
    ['GET', '/v1/workflows/runs/:id', run],
    ['POST', '/v1/workflows/:name/run', start],
  ];
}

/**
 * A signed webhook configured with a `workflow`: check its body (`{ input? }`), that the workflow exists, and the
 * daily budget when the workflow has model turns. Returns the input; 4xx errors are thrown before anything is claimed.
 */
export async function checkWebhookWorkflow(deps: GatewayDeps, hook: { readonly workflow: string; readonly userId?: string | undefined }, name: string, body: Record<string, unknown>): Promise<{ input: unknown }> {
  const workflows = deps.options.workflows;
  if (!workflows) throw notFound(`Webhook "${name}" names the workflow "${hook.workflow}", but this gateway has no workflows.`);
  for (const k of Object.keys(body)) if (k !== 'input') throw badRequest(`${k}: unknown field (a workflow webhook takes { "input"?: { … } }).`);
  const input = body['input'];
  if (input !== undefined && (typeof input !== 'object' || input === null || Array.isArray(input))) throw badRequest('input: expected a JSON object.');
  const info = await workflows.get(hook.workflow);
  if (!info) throw notFound(`Webhook "${name}" names the workflow "${hook.workflow}", which does not exist.`);
  if (info.modelSteps > 0) {
    const refused = await deps.options.admitAutonomousTurn?.({ userId: hook.userId ?? deps.defaultUserId });
    if (refused !== undefined) throw new HttpError(429, 'HTTP_TOO_MANY_REQUESTS', `Not now: ${refused}.`);
  }
  return { input };
}

/** Start the webhook's workflow run, claimed by the sender's idempotency key (a repeat runs nothing). */
export async function startWebhookWorkflow(
  deps: GatewayDeps,
  hook: { readonly workflow: string; readonly userId?: string | undefined },
  name: string,
  key: string,
  input: unknown,
): Promise<Response> {
  const started = await deps.options.workflows!.start(hook.workflow, {
    trigger: 'webhook',
    key: `webhook:${name}:${key}`,
    userId: hook.userId ?? deps.defaultUserId,
    ...(input !== undefined ? { input } : {}),
  });
  if (!started) return json(200, { accepted: false, duplicate: true });
  void started.done.then((r) => {
    if (r.status !== 'ok') deps.logger.warn('gateway: webhook workflow run did not succeed', { webhook: name, workflow: hook.workflow, run: r.id, status: r.status });
  });
  return json(202, { accepted: true, workflow: hook.workflow, runId: started.run.id });
}
