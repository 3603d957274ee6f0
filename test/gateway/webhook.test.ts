/**
 * `POST /v1/signals/webhook/:name`: HMAC-signed signals start autonomous turns; everything else is refused.
 */
import { signWebhook } from '@minara/agent/gateway';
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startGateway, TOKEN, waitFor } from './helpers';

const SECRET = 'whsec_0123456789abcdef';
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function post(url: string, body: string, headers: Record<string, string>) {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
}
const signed = (body: string, ts = Math.floor(Date.now() / 1000), secret = SECRET) => ({ 'x-minara-timestamp': String(ts), 'x-minara-signature': signWebhook(secret, ts, body) });

describe('signed webhooks', () => {
  it('a signed signal starts a webhook turn (no gateway token needed); the same idempotency key is not run twice', async () => {
    h = await startGateway([{ text: 'BTC dropped 5%: your perps are far from liquidation.' }], {
      gateway: { authToken: TOKEN, trustUserHeader: false, webhooks: { tradingview: { secret: SECRET, allowedToolSets: ['read'] } } },
    });
    const url = `${h.url}/v1/signals/webhook/tradingview`;
    const body = JSON.stringify({ message: 'BTC dropped 5% in an hour', signal: { severity: 'warn', asset: { symbol: 'BTC' } } });
    const res = await post(url, body, { ...signed(body), 'idempotency-key': 'alert-1' });
    expect(res.status).toBe(202);
    const { sessionId } = (await res.json()) as { sessionId: string };
    expect(sessionId).toMatch(/^webhook-tradingview-[0-9a-f]{12}$/);
    await waitFor(async () => (await h!.storage.conversations.listMessages(sessionId)).some((m) => m.role === 'assistant'));
    expect(JSON.stringify(h.model.calls[0]!.prompt)).toContain('BTC dropped 5% in an hour');
    const again = await post(url, body, { ...signed(body), 'idempotency-key': 'alert-1' });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ accepted: false, duplicate: true });
    expect(h.model.calls).toHaveLength(1);
    await waitFor(async () => (await h!.storage.jobs.listRuns({ jobId: 'webhook:tradingview' }))[0]?.outcome === 'ok');
  });

  it('refuses unsigned, tampered, wrongly keyed, replayed and malformed requests, and unknown webhooks', async () => {
    h = await startGateway([], { gateway: { webhooks: { alerts: { secret: SECRET } } } });
    const url = `${h.url}/v1/signals/webhook/alerts`;
    const body = JSON.stringify({ message: 'hello' });
    const key = { 'idempotency-key': 'k1' };
    expect((await post(url, body, key)).status).toBe(401);
    expect((await post(url, body.replace('hello', 'hellO'), { ...signed(body), ...key })).status).toBe(401);
    expect((await post(url, body, { ...signed(body, undefined, 'another-secret-0123456789'), ...key })).status).toBe(401);
    const old = Math.floor(Date.now() / 1000) - 3_600;
    const stale = await post(url, body, { ...signed(body, old), ...key });
    expect(stale.status).toBe(401);
    expect(((await stale.json()) as { error: { message: string } }).error.message).toMatch(/^x-minara-timestamp: /);
    expect((await post(url, body, signed(body))).status).toBe(400); // no idempotency key
    const extra = JSON.stringify({ message: 'x', colour: 'red' });
    expect(((await (await post(url, extra, { ...signed(extra), ...key })).json()) as { error: { message: string } }).error.message).toMatch(/^colour: unknown field/);
    const badSignal = JSON.stringify({ message: 'x', signal: { severity: 'apocalyptic' } });
    expect((await post(url, badSignal, { ...signed(badSignal), ...key })).status).toBe(400);
    expect((await post(`${h.url}/v1/signals/webhook/nope`, body, { ...signed(body), ...key })).status).toBe(404);
    expect(h.model.calls).toHaveLength(0);
  });
});

describe('webhook configuration', () => {
  it('refuses a short secret or a bad name; MINARA_WEBHOOK_SECRET_<NAME> configures minara serve', async () => {
    h = await startGateway([]);
    const { createGateway } = await import('@minara/agent/gateway');
    const { createAgentRuntime } = await import('@minara/agent');
    const runtime = createAgentRuntime({ model: h.model, tools: h.tools, storage: h.storage });
    expect(() => createGateway({ runtime, storage: h!.storage, tools: h!.tools, webhooks: { x: { secret: 'short' } } })).toThrow(/webhooks\.x\.secret must be at least 16/);
    expect(() => createGateway({ runtime, storage: h!.storage, tools: h!.tools, webhooks: { 'Bad Name': { secret: SECRET } } })).toThrow(/webhooks\.Bad Name/);
    const { webhooksFromEnv } = await import('../../cli/serve');
    expect(webhooksFromEnv({ MINARA_WEBHOOK_SECRET_TRADING_VIEW: SECRET, OTHER: 'x', MINARA_WEBHOOK_SECRET_EMPTY: '' })).toEqual({ 'trading-view': { secret: SECRET } });
  });
});

describe('webhooks and the daily budget', () => {
  it('a spent budget refuses the webhook with 429 and the reason, starting nothing', async () => {
    h = await startGateway([], { gateway: { webhooks: { alerts: { secret: SECRET } }, admitAutonomousTurn: async () => 'daily budget spent: $1.2000 of $1.00' } });
    const body = JSON.stringify({ message: 'hello' });
    const res = await post(`${h.url}/v1/signals/webhook/alerts`, body, { ...signed(body), 'idempotency-key': 'k-budget' });
    expect(res.status).toBe(429);
    expect(((await res.json()) as { error: { message: string } }).error.message).toBe('Not now: daily budget spent: $1.2000 of $1.00.');
    expect(h.model.calls).toHaveLength(0);
    expect(await h.storage.jobs.listRuns({ jobId: 'webhook:alerts' })).toEqual([]);
  });
});
