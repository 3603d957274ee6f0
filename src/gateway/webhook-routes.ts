import { createHash } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import { parseSignalContext } from '../skills/signals';
import { verifyWebhookSignature } from '../util/webhook-signature';
import { readRawText } from './body';
import { type AutonomousAdmission, autonomousStopReason, unreservedAdmission } from '../safety/autonomy-admission';
import { badRequest, HttpError, json, notFound } from './http-error';
import { decodeParam, type RouteHandler } from './router';
import type { GatewayDeps, GatewayWebhook } from './types';
import { checkWebhookWorkflow, startWebhookWorkflow } from './workflow-routes';

/** How far a webhook's timestamp may be from the gateway's clock, in seconds (replay window). */
export const WEBHOOK_TOLERANCE_SECONDS = 300;
const WEBHOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,47}$/;
const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{1,200}$/;
/**
 * A delivery's key is held this long while its turn runs; once the turn ends the key stays taken for good. If the
 * gateway dies mid-turn, the sender's retry after this is accepted (at least once, never twice at a time).
 */
const WEBHOOK_TURN_LEASE_MS = 15 * 60_000;

/** Check the webhook options: names, secrets of at least 16 characters. */
export function checkWebhooks(webhooks: Readonly<Record<string, GatewayWebhook>>): void {
  for (const [name, hook] of Object.entries(webhooks)) {
    if (!WEBHOOK_NAME.test(name)) throw new MinaraError('CONFIG_INVALID', `createGateway: webhooks.${name}: a name is 1–48 of a-z, 0-9, "_" or "-".`);
    if (typeof hook?.secret !== 'string' || hook.secret.length < 16) throw new MinaraError('CONFIG_INVALID', `createGateway: webhooks.${name}.secret must be at least 16 characters.`);
    if (hook.workflow !== undefined && (typeof hook.workflow !== 'string' || !WEBHOOK_NAME.test(hook.workflow))) {
      throw new MinaraError('CONFIG_INVALID', `createGateway: webhooks.${name}.workflow must be a workflow name (a-z, 0-9, "_", "-"), got ${JSON.stringify(hook.workflow)}.`);
    }
  }
}

/**
 * `POST /v1/signals/webhook/:name`: a signed signal from another system (an alert, a price feed, a CI job) that
 * starts an autonomous turn (`source: 'webhook'`). Authenticated by the webhook's HMAC, not the gateway token
 * (senders cannot hold one): a bad or missing signature is 401, a timestamp outside ±5 minutes is 401 (replay),
 * a delivery seen before (the same signed timestamp and body, whatever its unsigned headers) or a repeated
 * `idempotency-key` is answered `200 { duplicate: true }` and starts nothing. Accepted: `202
 * { accepted: true, sessionId }`; the turn runs server-side (follow it with `GET /v1/chat/:id/stream`).
 *
 * Body: `{ "message": "…", "signal"?: { signal_id?, asset?, severity?, preload_skills?, suggested_stages? } }`.
 */
export function webhookSignal(deps: GatewayDeps, webhooks: Readonly<Record<string, GatewayWebhook>>): RouteHandler {
  return async ({ request, params }) => {
    const name = decodeParam('name', params['name'] ?? '');
    const hook = Object.hasOwn(webhooks, name) ? webhooks[name] : undefined;
    if (!hook) throw notFound(`No webhook "${name}".`);
    const raw = await readRawText(request, deps.maxBodyBytes);
    const tsHeader = request.headers.get('x-minara-timestamp') ?? '';
    const signature = request.headers.get('x-minara-signature') ?? '';
    // The signature first: nothing about the body is read or answered for an unsigned request.
    if (!/^\d{1,12}$/.test(tsHeader) || !verifyWebhookSignature(hook.secret, Number(tsHeader), raw, signature)) {
      deps.logger.warn('gateway: webhook signature rejected', { webhook: name });
      throw new HttpError(401, 'HTTP_UNAUTHORIZED', 'x-minara-signature: expected sha256=<hex HMAC-SHA256 of "<x-minara-timestamp>.<body>"> with this webhook\'s secret.');
    }
    const skew = Math.abs(deps.now().getTime() / 1000 - Number(tsHeader));
    if (skew > WEBHOOK_TOLERANCE_SECONDS) throw new HttpError(401, 'HTTP_UNAUTHORIZED', `x-minara-timestamp: more than ${WEBHOOK_TOLERANCE_SECONDS} s from the gateway's clock (replayed or a skewed clock).`);
    const key = request.headers.get('idempotency-key');
    if (key === null || !IDEMPOTENCY_KEY.test(key)) throw badRequest('idempotency-key: expected a header of 1–200 letters, digits, ".", "_", ":" or "-" (the sender\'s id of this event).');
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(raw);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      throw badRequest('body: expected a JSON object { "message": "…", "signal"?: { … } }.');
    }
    // A webhook that runs a workflow: its body is `{ input? }`; checked (and the budget asked) before anything is claimed.
    const workflowInput = hook.workflow !== undefined ? await checkWebhookWorkflow(deps, { workflow: hook.workflow, userId: hook.userId }, name, body) : undefined;
    if (workflowInput === undefined) for (const k of Object.keys(body)) if (k !== 'message' && k !== 'signal') throw badRequest(`${k}: unknown field (expected message, signal).`);
    const message = body['message'];
    let signal;
    if (workflowInput === undefined) {
      if (typeof message !== 'string' || message.trim() === '' || message.length > 20_000) throw badRequest('message: expected a string of 1–20000 characters.');
      try {
        signal = parseSignalContext({ signal_id: name, ...(typeof body['signal'] === 'object' && body['signal'] !== null ? body['signal'] : {}), source: 'webhook' });
      } catch (error) {
        throw badRequest(`signal: ${error instanceof Error ? error.message : String(error)}`);
      }
    }

    const userId = hook.userId ?? deps.defaultUserId;
    // A stopped user (or a global stop) gets no autonomous turn and no workflow run; then the host's own admission
    // for a model turn (the daily budget; a workflow's was asked above), which reserves the turn's estimated cost
    // until the turn ends, so parallel deliveries all count.
    const stopped = await autonomousStopReason(deps.options.tools.emergencyStop, userId);
    if (stopped !== undefined) throw new HttpError(429, 'HTTP_TOO_MANY_REQUESTS', `Not now: ${stopped}.`);
    const admission = workflowInput !== undefined
      ? unreservedAdmission()
      : deps.options.reserveAutonomousTurn
        ? await deps.options.reserveAutonomousTurn({ userId })
        : unreservedAdmission(await deps.options.admitAutonomousTurn?.({ userId }));
    if (admission.refusal !== undefined) throw new HttpError(429, 'HTTP_TOO_MANY_REQUESTS', `Not now: ${admission.refusal}.`);
    try {
      return await startWebhookTurn(deps, { name, hook, key, tsHeader, raw, userId, signal, message: message as string, workflowInput }, admission);
    } catch (error) {
      await admission.release();
      throw error;
    }
  };
}

/** The admitted webhook delivery: claimed once, then its turn (released with the admission when it ends) or workflow run. */
async function startWebhookTurn(
  deps: GatewayDeps,
  d: { name: string; hook: GatewayWebhook; key: string; tsHeader: string; raw: string; userId: string; signal: ReturnType<typeof parseSignalContext> | undefined; message: string; workflowInput: { input: unknown } | undefined },
  admission: AutonomousAdmission,
): Promise<Response> {
  const { name, hook, key, tsHeader, raw, userId, signal, message, workflowInput } = d;
  // The signed delivery itself is claimed first, by the hash of what the signature covers (timestamp and body):
  // a captured request re-sent with another idempotency key (which nothing signs) is the same delivery.
  const at = deps.now();
  const storage = deps.options.storage;
  const delivery = await storage.jobs.claimRun({
    jobId: `webhook-delivery:${name}`,
    slot: `sig:${createHash('sha256').update(`${tsHeader}.${raw}`).digest('hex')}`,
    owner: `gateway:${process.pid}`,
    now: at.toISOString(),
    leaseUntil: new Date(at.getTime() + WEBHOOK_TURN_LEASE_MS).toISOString(),
  });
  if (!delivery) {
    deps.logger.warn('gateway: a webhook delivery was replayed', { webhook: name });
    await admission.release();
    return json(200, { accepted: false, duplicate: true });
  }
  // Ended at once: the delivery is taken for good (its timestamp leaves the replay window within minutes anyway).
  await storage.jobs.finishRun(delivery.id, delivery.owner, { endedAt: at.toISOString(), outcome: 'ok', detail: `key ${key}` });
  // A workflow webhook: the run itself is claimed by the sender's key in the workflows domain (once per fleet).
  if (workflowInput !== undefined) return startWebhookWorkflow(deps, { workflow: hook.workflow!, userId: hook.userId }, name, key, workflowInput.input);
  // Then the sender's key, atomically in storage (one run per key across gateway instances): a retry of the same
  // event, signed again with a new timestamp, is a duplicate too.
  const claimed = await storage.jobs.claimRun({
    jobId: `webhook:${name}`,
    slot: `key:${key}`,
    owner: `gateway:${process.pid}`,
    now: at.toISOString(),
    leaseUntil: new Date(at.getTime() + WEBHOOK_TURN_LEASE_MS).toISOString(),
  });
  if (!claimed) {
    await admission.release();
    return json(200, { accepted: false, duplicate: true });
  }
  const sessionId = `webhook-${name}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`;
  const events = deps.options.runtime.run({
    sessionId,
    userId,
    source: 'webhook',
    signal,
    message,
    surface: 'webhook',
    ...(hook.allowedToolSets ? { allowedToolSets: hook.allowedToolSets } : {}),
  });
  const turn = deps.streams.start({ chatId: sessionId, userId, messageId: deps.generateId('msg'), events });
  // The run's record is written after the turn; the runtime is kept open until it is (app.close() waits for it,
  // so it never meets a closed storage), and a failure is logged, never an unhandled rejection.
  const bookkeeping = turn.finished.finally(() => admission.release()).then(
    async ({ end }) => {
      await storage.jobs.finishRun(claimed.id, claimed.owner, { endedAt: deps.now().toISOString(), outcome: end?.stopReason === 'error' ? 'failed' : 'ok', detail: `${sessionId}: ${end?.stopReason ?? 'no end'}` });
    },
    (error: unknown) => deps.logger.error('gateway: webhook turn failed', { webhook: name, error: error instanceof Error ? error.message : String(error) }),
  ).catch((error: unknown) => deps.logger.warn('gateway: recording a webhook run failed', { webhook: name, error: error instanceof Error ? error.message : String(error) }));
  deps.options.runtime.keepOpenUntil?.(bookkeeping);
  return json(202, { accepted: true, sessionId });
}
