/**
 * Workflows over HTTP: `GET /v1/workflows` (+ runs, tenant-scoped), a manual start for operators, and a signed
 * webhook configured to run a workflow instead of a model turn (claimed once by its idempotency key).
 */
import { z } from 'zod';
import { afterEach, describe, expect, it } from 'vitest';
import { createAgentRuntime, createToolRegistry, createWorkflowAutomation, defineTool, PermissionTier, silentLogger, type WorkflowRunRecord } from '@minara/agent';
import { createGateway, signWebhook } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

const SECRET = 'whsec_0123456789abcdef';
let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanup) await c();
  cleanup = [];
});

function setup() {
  const ledger: string[] = [];
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({
    storage,
    tools: [
      defineTool({ name: 'get_price', toolSet: 'read', description: 'Spot price', permissionTier: PermissionTier.READ_ONLY, inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: 3_100 }) }),
      defineTool({
        name: 'swap_tokens', toolSet: 'trade', description: 'Swap', permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
        inputSchema: z.object({ from: z.string(), to: z.string(), amountUsd: z.number().positive() }),
        orderFacts: ({ to, amountUsd }) => ({ notionalUsd: amountUsd, asset: to, side: 'swap' }),
        preview: (i) => ({ preview: true, ...i }),
        execute: ({ from, to, amountUsd }) => void ledger.push(`swap:${from}->${to}:${amountUsd}`),
      }),
    ],
  });
  const model = createScriptedModel([]);
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
  const workflows = createWorkflowAutomation({
    runtime, storage, tools, userId: 'u1',
    workflows: [
      { id: 'prices', steps: [{ id: 'btc', kind: 'tool_call', tool: 'get_price', args: { symbol: 'BTC' } }] },
      { id: 'sweep', userId: 'u2', steps: [{ id: 'buy', kind: 'tool_call', tool: 'swap_tokens', args: { from: 'USDC', to: 'ETH', amountUsd: 10, confirm: true } }] },
      { id: 'echo', steps: [{ id: 'p', kind: 'tool_call', tool: 'get_price', args: () => ({ symbol: 'SOL' }) }] },
    ],
  });
  const gateway = createGateway({
    runtime, storage, tools, logger: silentLogger, trustUserHeader: true, workflows,
    webhooks: { feed: { secret: SECRET, workflow: 'sweep', userId: 'u2' }, turn: { secret: SECRET } },
  });
  cleanup.push(() => gateway.close());
  const call = async (method: string, path: string, user: string, opts: { operator?: boolean; body?: unknown; headers?: Record<string, string> } = {}) => {
    const res = await gateway.fetch(new Request(`http://127.0.0.1${path}`, {
      method,
      headers: { 'x-minara-user': user, ...(opts.operator ? { 'x-minara-roles': 'operator' } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : { 'x-minara-request': '1' }), ...opts.headers },
      ...(opts.body !== undefined ? { body: typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body) } : {}),
    }));
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };
  return { storage, tools, model, ledger, workflows, gateway, call };
}

const waitRun = async (workflows: ReturnType<typeof setup>['workflows'], id: string): Promise<WorkflowRunRecord> => {
  for (let i = 0; i < 200; i++) {
    const r = await workflows.getRun(id);
    if (r && r.status !== 'running') return r;
    await new Promise((res) => setTimeout(res, 5));
  }
  throw new Error(`run ${id} did not end`);
};

describe('/v1/workflows', () => {
  it('lists the caller\'s workflows (operators: all, with file issues); runs are the caller\'s own; starting one by hand is the operator\'s', async () => {
    const { call, workflows, model } = setup();
    expect((await call('GET', '/v1/workflows', 'u2')).body.workflows.map((w: { id: string }) => w.id)).toEqual(['sweep']);
    const all = await call('GET', '/v1/workflows', 'u1', { operator: true });
    expect(all.body).toMatchObject({ workflows: [{ id: 'prices', source: 'code', userId: 'u1', modelSteps: 0 }, { id: 'sweep' }, { id: 'echo' }], issues: [] });
    expect((await call('GET', '/v1/info', 'u1')).body.features.workflows).toBe(true);

    expect((await call('POST', '/v1/workflows/prices/run', 'u1')).status).toBe(403);
    expect((await call('POST', '/v1/workflows/nope/run', 'u1', { operator: true })).status).toBe(404);
    const started = await call('POST', '/v1/workflows/prices/run', 'u1', { operator: true });
    expect(started.status).toBe(202);
    const run = await waitRun(workflows, started.body.run.id);
    expect(run).toMatchObject({ status: 'ok', trigger: 'manual', userId: 'u1', steps: [{ id: 'btc', tool: 'get_price', input: { symbol: 'BTC' }, ok: true, output: { ok: true, data: { priceUsd: 3_100 } } }] });

    const mine = await call('GET', '/v1/workflows/runs?workflow=prices', 'u1');
    expect(mine.body.runs.map((r: { id: string }) => r.id)).toEqual([run.id]);
    expect((await call('GET', '/v1/workflows/runs', 'u2')).body.runs).toEqual([]);
    expect((await call('GET', `/v1/workflows/runs/${run.id}`, 'u2')).status).toBe(404);
    expect((await call('GET', `/v1/workflows/runs/${run.id}`, 'u1')).body.run).toMatchObject({ id: run.id, traceId: run.traceId });
    expect((await call('GET', '/v1/workflows/runs?status=done', 'u1')).status).toBe(400);
    expect((await call('GET', '/v1/workflows/runs?limit=0', 'u1')).status).toBe(400);
    expect(model.calls).toHaveLength(0);
  });

  it('a signed webhook with a workflow runs it (no model turn), once per idempotency key, under the gate: a fund-moving step needs a stored grant', async () => {
    const { gateway, workflows, ledger, model, tools } = setup();
    const post = (body: string, key: string) => {
      const ts = Math.floor(Date.now() / 1000);
      return gateway.fetch(new Request('http://127.0.0.1/v1/signals/webhook/feed', {
        method: 'POST', body,
        headers: { 'content-type': 'application/json', 'x-minara-timestamp': String(ts), 'x-minara-signature': signWebhook(SECRET, ts, body), 'idempotency-key': key },
      }));
    };
    const first = await post(JSON.stringify({ input: { reason: 'dip' } }), 'evt-1');
    expect(first.status).toBe(202);
    const { runId, workflow } = (await first.json()) as { runId: string; workflow: string };
    expect(workflow).toBe('sweep');
    const refused = await waitRun(workflows, runId);
    expect(refused).toMatchObject({ status: 'failed', trigger: 'webhook', triggerKey: 'webhook:feed:evt-1', userId: 'u2', steps: [{ id: 'buy', ok: false, code: 'GRANT_REQUIRED' }] });
    expect(ledger).toEqual([]);
    // The sender's retry (signed again, same key): a duplicate, nothing runs.
    const again = await post(JSON.stringify({ input: { reason: 'dip' } }), 'evt-1');
    expect(await again.json()).toEqual({ accepted: false, duplicate: true });
    // A message is not a workflow webhook's body.
    const wrong = await post(JSON.stringify({ message: 'hi' }), 'evt-2');
    expect(wrong.status).toBe(400);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toMatch(/^message: unknown field/);

    await tools.grants.create({ toolName: 'swap_tokens', sources: ['workflow'] });
    const ok = await post(JSON.stringify({}), 'evt-3');
    expect(await waitRun(workflows, ((await ok.json()) as { runId: string }).runId)).toMatchObject({ status: 'ok' });
    expect(ledger).toEqual(['swap:USDC->ETH:10']);
    expect(model.calls).toHaveLength(0);
    // Only workflow sources are covered: the grant says `workflow`, and the audit row says so too.
    expect((await tools.queryAudit({ toolName: 'swap_tokens' })).map((a) => [a.source, a.decision])).toContainEqual(['workflow', 'allowed']);
  });

  it('refuses a webhook whose workflow name is malformed at construction', () => {
    const { storage, tools } = setup();
    const runtime = createAgentRuntime({ model: createScriptedModel([]), tools, storage, logger: silentLogger });
    expect(() => createGateway({ runtime, storage, tools, webhooks: { feed: { secret: SECRET, workflow: 'Not A Name' } } })).toThrow(/webhooks\.feed\.workflow must be a workflow name/);
  });
});
