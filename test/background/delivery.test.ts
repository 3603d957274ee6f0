/**
 * Outbound delivery of autonomous answers to a webhook on 127.0.0.1: signed, retried, dead letters recorded.
 */
import { createServer, type Server } from 'node:http';
import { createWebhookDelivery, type Delivery, verifyWebhookSignature } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';

const SECRET = 'delivery-secret-0123456789';
const delivery: Delivery = { jobId: 'schedule:abcd1234', sessionId: 'schedule-abcd1234-2026-03-02', source: 'cron', text: 'Funding flipped negative.', at: '2026-03-02T06:00:00.000Z', stopReason: 'finished' };
let server: Server | undefined;
afterEach(() => server?.close());

async function receiver(statuses: number[]) {
  const received: Array<{ verified: boolean; body: unknown; key: string | undefined }> = [];
  server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const ts = Number(req.headers['x-minara-timestamp']);
      received.push({ verified: verifyWebhookSignature(SECRET, ts, raw, String(req.headers['x-minara-signature'] ?? '')), body: JSON.parse(raw), key: req.headers['idempotency-key'] as string | undefined });
      res.writeHead(statuses.shift() ?? 200).end();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server!.address() as { port: number }).port}/hook`, received };
}

describe('createWebhookDelivery', () => {
  it('POSTs the answer signed (the receiver verifies the HMAC), retrying 5xx with backoff; delivers once per answer', async () => {
    const { url, received } = await receiver([503, 500, 200]);
    const storage = createInMemoryStorage();
    const waits: number[] = [];
    const deliver = createWebhookDelivery({ url, secret: SECRET, storage, backoffMs: 100, sleep: async (ms) => void waits.push(ms) });
    await deliver(delivery);
    expect(received).toHaveLength(3);
    expect(received.every((r) => r.verified)).toBe(true);
    expect(received[0]!.body).toEqual(delivery);
    expect(new Set(received.map((r) => r.key)).size).toBe(1);
    expect(waits).toEqual([100, 200]);
    expect((await storage.jobs.listRuns({ jobId: 'deliver:webhook' }))[0]).toMatchObject({ outcome: 'ok', detail: expect.stringContaining('after 3 tries') });
    await deliver(delivery); // the same answer again: not re-sent
    expect(received).toHaveLength(3);
  });

  it('a receiver that keeps failing leaves a dead letter; a 4xx is not retried; bad options are refused', async () => {
    const { url, received } = await receiver([500, 500, 500, 400]);
    const storage = createInMemoryStorage();
    const deliver = createWebhookDelivery({ url, secret: SECRET, storage, attempts: 3, backoffMs: 1, sleep: async () => undefined });
    await deliver(delivery);
    expect(received).toHaveLength(3);
    expect(await storage.jobs.listRuns({ jobId: 'deliver:webhook', outcome: 'failed' })).toMatchObject([{ error: 'HTTP 500', detail: 'schedule:abcd1234 → schedule-abcd1234-2026-03-02' }]);
    await deliver({ ...delivery, at: '2026-03-02T12:00:00.000Z' });
    expect(received).toHaveLength(4); // 400: refused, not retried
    expect(() => createWebhookDelivery({ url: 'ftp://x', secret: SECRET, storage })).toThrow(/"url" must be an http/);
    expect(() => createWebhookDelivery({ url, secret: 'short', storage })).toThrow(/"secret" must be at least 16/);
  });
});
