import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signature of a webhook request, `sha256=` + hex HMAC-SHA256 keyed with the shared secret over
 * `<timestamp>.<raw body>` (the timestamp, Unix seconds, travels in `x-minara-timestamp`). Used both ways: the
 * gateway verifies incoming signals with it, and outbound deliveries are signed with it.
 *
 * @example
 * ```ts
 * const body = JSON.stringify({ message: 'BTC dropped 5% in an hour' });
 * const ts = Math.floor(Date.now() / 1000);
 * await fetch(`${gateway}/v1/signals/webhook/tradingview`, {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json', 'x-minara-timestamp': String(ts), 'x-minara-signature': signWebhook(secret, ts, body), 'idempotency-key': 'alert-123' },
 *   body,
 * });
 * ```
 */
export function signWebhook(secret: string, timestampSeconds: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampSeconds}.${body}`).digest('hex')}`;
}

/** Whether `presented` is the signature of `body` at `timestampSeconds` (constant time). */
export function verifyWebhookSignature(secret: string, timestampSeconds: number, body: string, presented: string): boolean {
  const a = createHash('sha256').update(signWebhook(secret, timestampSeconds, body)).digest();
  const b = createHash('sha256').update(presented).digest();
  return timingSafeEqual(a, b) && presented.length > 0;
}
