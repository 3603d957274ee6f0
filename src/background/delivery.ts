import { createHash } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';
import { type Logger, silentLogger } from '../util/logger';
import { signWebhook } from '../util/webhook-signature';
import type { Delivery } from './agent-types';

/** Options of {@link createWebhookDelivery}. */
export interface WebhookDeliveryOptions {
  /** Where deliveries are POSTed (`MINARA_DELIVERY_WEBHOOK_URL`). */
  readonly url: string;
  /** The HMAC secret, at least 16 characters (`MINARA_DELIVERY_WEBHOOK_SECRET`). */
  readonly secret: string;
  /** Records each delivery (and the dead letters) as runs of the job `deliver:webhook`. */
  readonly storage: Storage;
  /** Tries per delivery. @default 4 */
  readonly attempts?: number | undefined;
  /** The wait before the second try; it doubles after each. @default 1000 */
  readonly backoffMs?: number | undefined;
  /** Per-try timeout. @default 10000 */
  readonly timeoutMs?: number | undefined;
  readonly fetch?: typeof fetch | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
  /** Waits between tries (tests pass a fake). @default setTimeout */
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

/**
 * Deliver autonomous turns' answers to a webhook: a JSON POST (`{ jobId, sessionId, source, text, at, stopReason }`)
 * signed like incoming signals (`x-minara-timestamp`, `x-minara-signature: sha256=<HMAC of "<ts>.<body>">`,
 * `idempotency-key`), retried with doubling backoff on network errors, 408, 429 and 5xx. Each delivery is a run
 * of the job `deliver:webhook` in storage; one that exhausts its tries is a `failed` run — the dead letters,
 * listed by `minara jobs` and `storage.jobs.listRuns({ jobId: 'deliver:webhook', outcome: 'failed' })` with the
 * last error and the payload's session. A 4xx other than 408/429 is not retried (the receiver refused it).
 */
export function createWebhookDelivery(options: WebhookDeliveryOptions): (delivery: Delivery) => Promise<void> {
  const { url, secret, storage, attempts = 4, backoffMs = 1_000, timeoutMs = 10_000, now = () => new Date(), logger = silentLogger } = options;
  const doFetch = options.fetch ?? fetch;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref?.()));
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) throw new MinaraError('CONFIG_INVALID', `createWebhookDelivery: "url" must be an http(s) URL, got ${JSON.stringify(url)}.`);
  if (typeof secret !== 'string' || secret.length < 16) throw new MinaraError('CONFIG_INVALID', 'createWebhookDelivery: "secret" must be at least 16 characters.');
  if (!Number.isSafeInteger(attempts) || attempts < 1 || attempts > 10) throw new MinaraError('CONFIG_INVALID', `createWebhookDelivery: "attempts" must be 1–10, got ${String(attempts)}.`);
  const owner = `delivery:${process.pid}`;

  return async (delivery) => {
    const body = JSON.stringify(delivery);
    const key = createHash('sha256').update(`${delivery.jobId}\u0000${delivery.sessionId}\u0000${delivery.at}`).digest('hex').slice(0, 32);
    const at = now();
    const run = await storage.jobs.claimRun({ jobId: 'deliver:webhook', slot: key, owner, now: at.toISOString(), leaseUntil: new Date(at.getTime() + attempts * (timeoutMs + backoffMs * 2 ** attempts)).toISOString() });
    if (!run) return; // already delivered (or being delivered) by this or another process
    let lastError = '';
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const ts = Math.floor(now().getTime() / 1000);
      try {
        const response = await doFetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-minara-timestamp': String(ts), 'x-minara-signature': signWebhook(secret, ts, body), 'idempotency-key': key },
          body,
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (response.ok) {
          await storage.jobs.finishRun(run.id, owner, { endedAt: now().toISOString(), outcome: 'ok', detail: `${delivery.sessionId}: HTTP ${response.status} after ${attempt} tr${attempt === 1 ? 'y' : 'ies'}` });
          return;
        }
        lastError = `HTTP ${response.status}`;
        if (response.status < 500 && response.status !== 408 && response.status !== 429) break;
      } catch (error) {
        lastError = error instanceof Error ? error.message : String(error);
      }
      if (attempt < attempts) await sleep(backoffMs * 2 ** (attempt - 1));
    }
    logger.warn(`delivery to ${parsed.host} failed for good: ${lastError}`, { module: 'background', session: delivery.sessionId });
    await storage.jobs.finishRun(run.id, owner, { endedAt: now().toISOString(), outcome: 'failed', error: lastError, detail: `${delivery.jobId} → ${delivery.sessionId}` });
  };
}
