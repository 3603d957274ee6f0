/**
 * Price alerts on the simulated market with a fake clock: "tell me when ETH drops below 3,000" is stored per user by
 * the `alert_request` tool, the `alerts:check` job fires it once through the existing delivery (the signed webhook, the
 * host's hook, the REPL listener, the Updates bell's `deliveries`) and records it; percent moves, expiry, cancel, the
 * tenant boundary; `GET/DELETE /v1/alerts`.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, createToolCallContext, type Delivery, type MinaraApp, parseEnvelope, silentLogger, verifyWebhookSignature } from '@minara/agent';
import { alertHolds, alertMessage, checkAlerts, createAlertCheckJob, createAlertTool, createSimulatedMarket, describeAlertCondition, MAX_ACTIVE_ALERTS, type SimulatedMarket } from '@minara/agent/finance';
import { createGateway } from '@minara/agent/gateway';
import { createInMemoryStorage } from '@minara/agent/testing';

const SECRET = 'delivery-secret-0123456789';
const T0 = Date.parse('2026-03-02T10:00:30.000Z');
const dirs: string[] = [];
const apps: MinaraApp[] = [];
let server: Server | undefined;
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  server?.close();
  server = undefined;
});

async function receiver() {
  const received: Array<{ verified: boolean; body: Delivery & { userId?: string } }> = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      received.push({ verified: verifyWebhookSignature(SECRET, Number(req.headers['x-minara-timestamp']), raw, String(req.headers['x-minara-signature'] ?? '')), body: JSON.parse(raw) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server!.address() as { port: number }).port}/hook`, received };
}

async function open(env: Record<string, string> = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-alerts-'));
  dirs.push(dir);
  const clock = { t: T0 };
  const hooked: Delivery[] = [];
  const app = await createApp({
    envFileDir: false, env: { MINARA_HEARTBEAT_EVERY: '0', MINARA_PERSONALIZATION_REBUILD: 'disabled', ...env }, logger: silentLogger, config: { dataDir: dir },
    now: () => new Date(clock.t), background: { deliver: (d) => void hooked.push(d) },
  });
  apps.push(app);
  const repl: Delivery[] = [];
  app.background.onDelivery((d) => repl.push(d));
  const market = app.finance!.market as SimulatedMarket;
  const tool = async (input: Record<string, unknown>, userId?: string) =>
    parseEnvelope(
      await app.tools.dispatch('alert_request', input, userId ? { context: createToolCallContext({ sessionId: `chat-${userId}`, userId }) } : {}),
    ) as { ok: boolean; data: Record<string, any>; error?: string };
  const minutes = async (n: number) => {
    for (let i = 0; i < n; i++) {
      clock.t += 60_000;
      await app.background.tick();
      await app.background.idle();
    }
  };
  return { app, clock, market, hooked, repl, tool, minutes };
}

describe('price alerts', () => {
  it('"tell me when ETH drops below 3,000" fires once, through the signed webhook, the host hook, the REPL line and the Updates bell, and is recorded', async () => {
    const { url, received } = await receiver();
    const { app, market, hooked, repl, tool, minutes } = await open({ MINARA_DELIVERY_WEBHOOK_URL: url, MINARA_DELIVERY_WEBHOOK_SECRET: SECRET });
    expect(app.background.status().map((j) => j.id)).toContain('alerts:check');
    expect(app.skills.get('memory.alerts')!.toolNames).toEqual(['alert_request', 'get_price']);
    market.setPrice('ETH', 3_200);
    const added = await tool({ op: 'add', asset: '$eth', condition: 'below', threshold: 3_000, note: 'buy the dip' });
    expect(added.ok).toBe(true);
    expect(added.data).toMatchObject({ added: { id: 1, asset: 'ETH', condition: 'below', threshold: 3_000, basePrice: 3_200, status: 'active', when: 'goes below 3,000 USD' }, priceNow: 3_200 });
    expect(added.data.warning).toBeUndefined();
    expect(added.data.note).toMatch(/every 1 min; an alert fires once/);
    await minutes(3); // above the level: nothing
    expect(hooked).toEqual([]);
    expect((await app.background.runs({ jobId: 'alerts:check', limit: 1 }))[0]).toMatchObject({ outcome: 'ok', detail: 'checked 1, fired 0, expired 0' });

    market.setPrice('ETH', 2_987.5);
    await minutes(1);
    expect(hooked).toHaveLength(1);
    expect(hooked[0]).toMatchObject({ jobId: 'alerts:check', source: 'alert', sessionId: expect.stringMatching(/^alert-1-[0-9a-f]{8}$/), userId: 'default' });
    const sessionId = hooked[0]!.sessionId;
    expect(hooked[0]!.text).toMatch(/^ETH is at 2,987\.5 USD, below your alert level of 3,000 USD \(alert #1, set 2026-03-02 10:00 UTC: buy the dip\)\. The alert has fired/);
    expect(repl).toEqual(hooked);
    // The signed webhook got it once, verifiable by the receiver.
    await new Promise((r) => setTimeout(r, 50));
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ verified: true, body: { sessionId, source: 'alert', userId: 'default' } });
    // Recorded: fired, with the price and the session it was written to; the Updates bell lists it.
    expect(await app.storage.alerts.get('default', 1)).toMatchObject({ status: 'fired', firedPrice: 2_987.5, deliverySessionId: sessionId, endedAt: '2026-03-02T10:04:30.000Z' });
    expect(await app.background.deliveries({ userId: 'default' })).toEqual([{ sessionId, source: 'alert', text: hooked[0]!.text, at: hooked[0]!.at }]);
    // Once: the price stays below, the minutes go by, nothing more is delivered.
    await minutes(5);
    expect(hooked).toHaveLength(1);
    expect(received).toHaveLength(1);
    expect((await app.background.runs({ jobId: 'alerts:check', limit: 1 }))[0]).toMatchObject({ outcome: 'skipped', detail: 'no active alerts' });
    const listed = await tool({ op: 'list' });
    expect(listed.data).toMatchObject({ active: [], recent: [{ id: 1, status: 'fired', firedPrice: 2_987.5 }] });
  });

  it('a percent move from the price when set; a condition that already holds is flagged; expiry; cancel; another user\'s alert is out of reach', async () => {
    const { app, clock, market, hooked, tool, minutes } = await open();
    market.setPrice('BTC', 60_000);
    market.setPrice('SOL', 150);
    const move = await tool({ op: 'add', asset: 'BTC', condition: 'move_pct', threshold: 5 });
    expect(move.data.added).toMatchObject({ basePrice: 60_000, when: 'moves 5% either way from 60,000 USD' });
    const already = await tool({ op: 'add', asset: 'SOL', condition: 'above', threshold: 100 });
    expect(already.data.warning).toMatch(/already holds: it fires at the next check/);
    const shortLived = await tool({ op: 'add', asset: 'SOL', condition: 'below', threshold: 10, expiresInDays: 1 });
    const theirs = await tool({ op: 'add', asset: 'SOL', condition: 'below', threshold: 20 }, 'u2');
    expect(theirs.data.added.id).toBe(4);
    // u1 cannot cancel or see u2's alert.
    expect(await tool({ op: 'cancel', id: 4 })).toMatchObject({ ok: false, error: expect.stringContaining('no alert 4') });
    expect((await tool({ op: 'list' })).data.active.map((a: { id: number }) => a.id)).toEqual([3, 2, 1]);

    market.setPrice('BTC', 57_500); // −4.17%: not yet
    await minutes(1);
    expect(hooked.map((d) => d.sessionId.slice(0, 7))).toEqual(['alert-2']); // SOL above 100 held from the start
    market.setPrice('BTC', 56_900); // −5.17%
    await minutes(1);
    expect(hooked.map((d) => d.sessionId.slice(0, 7))).toEqual(['alert-2', 'alert-1']);
    expect(hooked[1]!.text).toMatch(/^BTC moved -5\.17% from 60,000 to 56,900 USD, past your 5% alert/);

    clock.t += 86_400_000;
    await minutes(1);
    expect(await app.storage.alerts.get('default', shortLived.data.added.id)).toMatchObject({ status: 'expired' });
    expect(hooked).toHaveLength(2);
    expect(await tool({ op: 'cancel', id: 4 }, 'u2')).toMatchObject({ ok: true, data: { cancelled: { id: 4, status: 'cancelled' } } });
    expect(await tool({ op: 'cancel', id: 4 }, 'u2')).toMatchObject({ ok: false, error: 'id: alert 4 is already cancelled' });
    expect(await tool({ op: 'add', asset: 'NOPE', condition: 'above', threshold: 1 })).toMatchObject({ ok: false, error: expect.stringContaining('Unknown symbol "NOPE"') });
    expect(await tool({ op: 'add', asset: 'ETH', condition: 'above' })).toMatchObject({ ok: false, error: expect.stringContaining('asset, condition and threshold') });
    expect(await tool({ op: 'add', asset: 'ETH', condition: 'move_pct', threshold: 5000 })).toMatchObject({ ok: false, error: expect.stringContaining('threshold: a move_pct alert takes a percentage') });
  });

  it('checkAlerts is a compare-and-set: two checkers at once fire an alert once; alertHolds; the job refuses a bad interval', async () => {
    const storage = createInMemoryStorage();
    const market = createSimulatedMarket({ now: () => new Date(T0) });
    market.setPrice('ETH', 2_900);
    await storage.alerts.create({ userId: 'u1', asset: 'ETH', condition: 'below', threshold: 3_000, basePrice: 3_100, createdAt: new Date(T0).toISOString(), expiresAt: new Date(T0 + 86_400_000).toISOString() });
    const delivered: string[] = [];
    const deliver = (d: { sessionId: string }) => void delivered.push(d.sessionId);
    const [a, b] = await Promise.all([checkAlerts({ storage, market, deliver, now: () => new Date(T0) }), checkAlerts({ storage, market, deliver, now: () => new Date(T0) })]);
    expect(a.fired.length + b.fired.length).toBe(1);
    expect(delivered).toEqual([expect.stringMatching(/^alert-1-[0-9a-f]{8}$/)]);
    expect((await storage.conversations.listMessages(delivered[0]!)).map((m) => m.role)).toEqual(['user', 'assistant']);
    // A session of that name held by another user (were the id guessed) is never written, and nothing is delivered.
    await storage.alerts.create({ userId: 'u1', asset: 'ETH', condition: 'below', threshold: 3_000, createdAt: new Date(T0).toISOString(), expiresAt: new Date(T0 + 86_400_000).toISOString() });
    await storage.conversations.ensureSession({ id: 'alert-2-guessed0', userId: 'attacker', now: new Date(T0).toISOString() });
    const stolen = await checkAlerts({ storage, market, deliver, now: () => new Date(T0), sessionSuffix: () => 'guessed0' });
    expect(stolen.fired.map((x) => x.id)).toEqual([2]);
    expect(await storage.conversations.listMessages('alert-2-guessed0')).toEqual([]);
    expect(delivered).toHaveLength(1);
    expect(alertHolds({ condition: 'above', threshold: 10 }, 10)).toBe(true);
    expect(alertHolds({ condition: 'move_pct', threshold: 5, basePrice: 100 }, 105)).toBe(true);
    expect(alertHolds({ condition: 'move_pct', threshold: 5, basePrice: 100 }, 95.5)).toBe(false);
    expect(alertHolds({ condition: 'below', threshold: 10 }, Number.NaN)).toBe(false);
    expect(() => createAlertCheckJob({ storage, market, every: 10 })).toThrow(/every must be at least 1000/);
    // Every active alert is read, page by page: none waits behind a full page.
    for (let i = 0; i < 5; i++) await storage.alerts.create({ userId: `p${i}`, asset: 'ETH', condition: 'below', threshold: 3_000, createdAt: new Date(T0).toISOString(), expiresAt: new Date(T0 + 86_400_000).toISOString() });
    const paged = await checkAlerts({ storage, market, now: () => new Date(T0), batch: 2 });
    expect([paged.checked, paged.fired.length]).toEqual([5, 5]);
    expect(describeAlertCondition({ condition: 'move_pct', threshold: 5, basePrice: 60_000 })).toBe('moves 5% either way from 60,000 USD');
    expect(alertMessage(paged.fired[0]!, 2_900)).toMatch(/^ETH is at 2,900 USD, below your alert level of 3,000 USD \(alert #3, set 2026-03-02 10:00 UTC\)/);
    expect(MAX_ACTIVE_ALERTS).toBe(50);
    expect(() => createAlertTool({ storage: {} as never, market })).toThrow(/createAlertTool: pass \{ storage, market \}/);
  });

  it('a user holds at most MAX_ACTIVE_ALERTS active alerts', async () => {
    const { tool, market } = await open();
    market.setPrice('ETH', 3_000);
    for (let i = 1; i <= MAX_ACTIVE_ALERTS; i++) expect((await tool({ op: 'add', asset: 'ETH', condition: 'above', threshold: 10_000 + i }, 'heavy')).ok).toBe(true);
    expect(await tool({ op: 'add', asset: 'ETH', condition: 'above', threshold: 99_999 }, 'heavy')).toMatchObject({ ok: false, error: expect.stringContaining('already has 50 active alerts') });
    expect((await tool({ op: 'add', asset: 'ETH', condition: 'above', threshold: 99_999 }, 'light')).ok).toBe(true);
  });
});

describe('/v1/alerts', () => {
  it('lists the caller\'s alerts and cancels one; another tenant\'s is a 404; a fired one is a 409', async () => {
    const { app, tool, market, minutes } = await open();
    market.setPrice('ETH', 3_200);
    await tool({ op: 'add', asset: 'ETH', condition: 'below', threshold: 3_000 }, 'u1');
    await tool({ op: 'add', asset: 'ETH', condition: 'above', threshold: 3_100 }, 'u1');
    await tool({ op: 'add', asset: 'BTC', condition: 'above', threshold: 999_999 }, 'u2');
    await minutes(1); // #2 fires (ETH is above 3,100)
    const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, logger: silentLogger, trustUserHeader: true });
    const call = async (method: string, p: string, user: string) => {
      const res = await gateway.fetch(new Request(`http://127.0.0.1${p}`, { method, headers: { 'x-minara-user': user, 'x-minara-request': '1' } }));
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    expect((await call('GET', '/v1/alerts', 'u1')).body.alerts.map((a: { id: number; status: string }) => [a.id, a.status])).toEqual([[2, 'fired'], [1, 'active']]);
    expect((await call('GET', '/v1/alerts?status=active', 'u1')).body.alerts.map((a: { id: number }) => a.id)).toEqual([1]);
    expect((await call('GET', '/v1/alerts', 'u2')).body.alerts.map((a: { id: number }) => a.id)).toEqual([3]);
    expect((await call('GET', '/v1/info', 'u1')).body.features.alerts).toBe(true);
    expect((await call('DELETE', '/v1/alerts/3', 'u1')).status).toBe(404);
    expect((await call('DELETE', '/v1/alerts/2', 'u1'))).toMatchObject({ status: 409, body: { error: { message: 'Alert 2 is already fired.' } } });
    expect((await call('DELETE', '/v1/alerts/1', 'u1'))).toMatchObject({ status: 200, body: { alert: { id: 1, status: 'cancelled' } } });
    expect((await call('GET', '/v1/alerts?status=gone', 'u1')).status).toBe(400);
    expect((await call('DELETE', '/v1/alerts/x', 'u1')).status).toBe(400);
    expect(await app.storage.alerts.get('u2', 3)).toMatchObject({ status: 'active' });
    await gateway.close();
  });
});
