import { MinaraError } from '../errors/minara-error';
import type { ApprovalDecision } from '../runtime/types';
import { readJsonObject } from './body';
import { assertChatId, parseChatRequest } from './chat-request';
import { assertCanDecide } from './decide';
import { loadMessages } from '../runtime/conversation';
import { toUIMessages, UI_STREAM_HEADERS } from '../runtime/ui-stream';
import { HttpError, json, notFound } from './http-error';
import { quotaResponse } from './quotas';
import type { RouteContext, RouteHandler } from './router';
import { decodeParam } from './router';
import type { GatewayDeps } from './types';

/** The session is someone else's: answer as if it did not exist. */
export async function assertSessionVisible(deps: GatewayDeps, sessionId: string, userId: string): Promise<void> {
  const session = await deps.options.storage.conversations.getSession(sessionId);
  if (session?.userId !== undefined && session.userId !== userId) throw notFound(`No chat "${sessionId}".`);
}

/** The UI message stream response of an active turn. */
export function streamResponse(body: ReadableStream<Uint8Array>): Response {
  return new Response(body, { status: 200, headers: UI_STREAM_HEADERS });
}

/**
 * `POST /v1/chat`: run a turn and answer with the AI SDK UI message stream. The turn is started and
 * consumed server-side; the response is one subscription to it, so a client that disconnects loses
 * nothing (the runtime persists the turn) and can resume with `GET /v1/chat/:id/stream`.
 */
export function postChat(deps: GatewayDeps): RouteHandler {
  return async ({ request, userId, canDecide, quota }: RouteContext) => {
    if (deps.isClosing()) throw new HttpError(503, 'HTTP_UNAVAILABLE', 'The gateway is shutting down; no new turns.');
    const body = await readJsonObject(request, deps.maxBodyBytes);
    const parsed = parseChatRequest(body);
    // Approval answers in a chat body decide like POST /v1/approvals/:id: the same capability.
    if (parsed.approvals.length > 0) assertCanDecide(canDecide);
    const { chatId } = parsed;
    await assertSessionVisible(deps, chatId, userId);

    // Only answers to approvals this chat is still waiting for are passed on; a stale answer (already
    // decided, replayed with old client history) is dropped rather than re-dispatched.
    const approvals: ApprovalDecision[] = [];
    for (const a of parsed.approvals) {
      const record = await deps.options.tools.approvals.get(a.approvalId);
      if (record && record.sessionId === chatId && record.status === 'pending') {
        approvals.push({ approvalId: a.approvalId, approved: a.approved, ...(a.reason !== undefined ? { reason: a.reason } : {}) });
      }
    }
    if (parsed.message === undefined && approvals.length === 0) {
      throw new HttpError(409, 'HTTP_CONFLICT', `${parsed.approvals[0]?.path ?? 'messages'}: no pending approval of chat "${chatId}" matches; it was already answered or never existed.`);
    }
    // Attachments must be the caller's uploads (another user's key reads as unknown).
    for (const [i, key] of parsed.attachments.entries()) {
      if (!deps.options.files) throw new HttpError(400, 'HTTP_BAD_REQUEST', 'messages: file parts need file uploads, which are not enabled on this gateway.');
      if (!(await deps.options.files.stat({ userId }, key))) throw new HttpError(400, 'HTTP_BAD_REQUEST', `attachments[${i}]: no uploaded file "${key}"; upload it with POST /v1/files and use the key it returns.`);
    }
    const running = () => new HttpError(409, 'HTTP_CONFLICT', `A turn is already running in chat "${chatId}"; resume it with GET /v1/chat/${chatId}/stream.`);
    if (deps.streams.get(chatId)) throw running();
    // The user's quota (requests per minute, USD per day): 429 with the reason and Retry-After.
    // Admission reserves the turn's estimated cost until the turn ends, so turns running in parallel all count.
    const admission = await deps.quotas.admit(userId, quota);
    if (admission.refusal) return quotaResponse(admission.refusal);
    // One turn per chat across the fleet: the session's lock in storage, held for the whole turn.
    const lease = await deps.sessionLocks.acquire(chatId);
    if (!lease) {
      await admission.release();
      throw new HttpError(409, 'HTTP_CONFLICT', `A turn is already running in chat "${chatId}" (on this or another gateway instance); wait for it to end, or resume it with GET /v1/chat/${chatId}/stream on the instance running it.`);
    }
    // No await between this check and `start`: one turn per chat at a time in this process.
    if (deps.streams.get(chatId)) {
      await Promise.all([lease.release(), admission.release()]);
      throw running();
    }
    let events;
    try {
      events = deps.options.runtime.run({
        sessionId: chatId,
        userId,
        surface: 'gateway',
        ...(parsed.message !== undefined ? { message: parsed.message } : {}),
        ...(parsed.attachments.length > 0 ? { attachments: parsed.attachments } : {}),
        ...(approvals.length > 0 ? { approvals } : {}),
      });
    } catch (error) {
      await Promise.all([lease.release(), admission.release()]);
      if (MinaraError.isInstance(error) && error.code === 'INVALID_ARGUMENT') throw new HttpError(400, 'HTTP_BAD_REQUEST', error.message);
      throw error;
    }
    const messageId = parsed.continueMessageId || deps.generateId('msg');
    const turn = deps.streams.start({ chatId, userId, messageId, events: admission.guard(lease.guard(events)) });
    return streamResponse(turn.subscribe());
  };
}

/**
 * `GET /v1/chat/:id`: the stored chat as UI messages (`{ id, messages, active }`), for `useChat({ messages })`
 * after a reload. Chat ids are named by the client, so a valid id with no session yet is a chat with no
 * messages (200, `messages: []`), as `GET /v1/chat/:id/stream` treats it; another tenant's chat answers 404.
 */
export function getChat(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const chatId = assertChatId(decodeParam('id', params['id'] ?? ''), 'id');
    const session = await deps.options.storage.conversations.getSession(chatId);
    if (session?.userId !== undefined && session.userId !== userId) throw notFound(`No chat "${chatId}".`);
    if (!session) return json(200, { id: chatId, messages: [], active: false });
    const messages = toUIMessages(await loadMessages(deps.options.storage, chatId), { idPrefix: `${chatId}-` });
    const turn = deps.streams.get(chatId);
    return json(200, { id: chatId, messages, active: turn !== undefined && turn.userId === userId });
  };
}

/** `GET /v1/chat/:id/stream`: replay the active turn from its start and continue live; 204 when idle. */
export function resumeChat(deps: GatewayDeps): RouteHandler {
  return async ({ params, userId }: RouteContext) => {
    const chatId = assertChatId(decodeParam('id', params['id'] ?? ''), 'id');
    const turn = deps.streams.get(chatId);
    if (!turn) {
      await assertSessionVisible(deps, chatId, userId);
      return new Response(null, { status: 204 });
    }
    if (turn.userId !== userId) throw notFound(`No chat "${chatId}".`);
    return streamResponse(turn.subscribe());
  };
}
