import { badRequest, HttpError } from './http-error';
import { describe } from './body';

/** Chat ids are session ids: 1–128 characters of `[A-Za-z0-9._:-]`, never `.` or `..`. */
const CHAT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Check a chat (session) id from a body or a path; 400 naming `field` otherwise. */
export function assertChatId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !CHAT_ID.test(value) || value === '.' || value === '..') {
    throw badRequest(`${field}: expected a chat id of 1–128 letters, digits, ".", "_", ":" or "-" (not "." or ".."), got ${typeof value === 'string' ? JSON.stringify(value.slice(0, 140)) : describe(value)}.`);
  }
  return value;
}

/** An approval answer the client put on a tool part (`state: 'approval-responded'`). */
export interface ClientApprovalResponse {
  readonly approvalId: string;
  readonly approved: boolean;
  readonly reason?: string | undefined;
  /** Where it was found, for error messages. */
  readonly path: string;
}

/** What the gateway takes from a `DefaultChatTransport` request body. */
export interface ParsedChatRequest {
  readonly chatId: string;
  /** The text of the last message when it is a user message. */
  readonly message: string | undefined;
  /** Approval answers on the tool parts of the last assistant message. */
  readonly approvals: readonly ClientApprovalResponse[];
  /** Keys of uploaded files on the last user message (file parts with a `minara-file:<key>` or `…/v1/files/<key>` URL). */
  readonly attachments: readonly string[];
  /** The id of the assistant message the stream continues (the last message is an assistant message). */
  readonly continueMessageId: string | undefined;
}

const MAX_MESSAGE_CHARS = 200_000;

/**
 * Read `{ id, messages, trigger, messageId?, ... }` as `DefaultChatTransport` sends it. The server keeps
 * the transcript, so the client's history is not trusted or replayed: only the last user message's text
 * and the approval responses of the last assistant message are taken. Everything else is ignored.
 */
export function parseChatRequest(body: Record<string, unknown>): ParsedChatRequest {
  const chatId = assertChatId(body['id'], 'id');
  const messages = body['messages'];
  if (!Array.isArray(messages)) throw badRequest(`messages: expected a non-empty array of UI messages, got ${describe(messages)}.`);
  if (messages.length === 0) throw badRequest('messages: expected at least one UI message (the new user message, or the assistant message with approval responses), got an empty array.');
  if (body['trigger'] !== undefined && body['trigger'] !== 'submit-message' && body['trigger'] !== 'regenerate-message') {
    throw badRequest(`trigger: expected "submit-message" or "regenerate-message", got ${JSON.stringify(body['trigger'])}.`);
  }
  const lastIndex = messages.length - 1;
  const last = uiMessage(messages[lastIndex], lastIndex);

  let message: string | undefined;
  const attachments: string[] = [];
  let assistantIndex: number | undefined;
  if (last.role === 'user') {
    const text = last.parts
      .filter((p): p is { type: 'text'; text: string } => isRecord(p) && p['type'] === 'text' && typeof p['text'] === 'string')
      .map((p) => p.text)
      .join('\n');
    if (text.length > MAX_MESSAGE_CHARS) throw new HttpError(413, 'HTTP_PAYLOAD_TOO_LARGE', `messages[${lastIndex}]: the message is longer than ${MAX_MESSAGE_CHARS} characters.`);
    last.parts.forEach((p, j) => {
      if (!isRecord(p) || p['type'] !== 'file') return;
      const url = typeof p['url'] === 'string' ? p['url'] : '';
      const key = /^minara-file:([A-Za-z0-9._-]{1,100})$/.exec(url)?.[1] ?? /\/v1\/files\/([A-Za-z0-9._-]{1,100})$/.exec(url)?.[1];
      if (!key) throw badRequest(`messages[${lastIndex}].parts[${j}].url: expected an uploaded file ("minara-file:<key>" or ".../v1/files/<key>"); upload the file with POST /v1/files first (inline data is not stored in chats).`);
      attachments.push(key);
    });
    if (text.trim() !== '' || attachments.length > 0) message = text;
    if (lastIndex > 0) {
      const prev = messages[lastIndex - 1];
      if (isRecord(prev) && prev['role'] === 'assistant') assistantIndex = lastIndex - 1;
    }
  } else if (last.role === 'assistant') {
    assistantIndex = lastIndex;
  } else {
    throw badRequest(`messages[${lastIndex}].role: expected "user" or "assistant", got ${JSON.stringify(last.role)}.`);
  }

  const approvals = assistantIndex === undefined ? [] : approvalResponses(uiMessage(messages[assistantIndex], assistantIndex), assistantIndex);
  if (message === undefined && approvals.length === 0) {
    throw badRequest(
      last.role === 'user'
        ? `messages[${lastIndex}].parts: the last user message has no text.`
        : `messages[${lastIndex}]: the last message is an assistant message without approval responses; nothing to do.`,
    );
  }
  return { chatId, message, approvals, attachments, continueMessageId: last.role === 'assistant' ? last.id : undefined };
}

interface LooseUIMessage {
  readonly id: string;
  readonly role: string;
  readonly parts: readonly unknown[];
}

function uiMessage(value: unknown, index: number): LooseUIMessage {
  if (!isRecord(value)) throw badRequest(`messages[${index}]: expected a UI message object, got ${describe(value)}.`);
  if (typeof value['role'] !== 'string') throw badRequest(`messages[${index}].role: expected a string, got ${describe(value['role'])}.`);
  if (!Array.isArray(value['parts'])) throw badRequest(`messages[${index}].parts: expected an array, got ${describe(value['parts'])}.`);
  const id = typeof value['id'] === 'string' && value['id'].length <= 256 ? value['id'] : '';
  return { id, role: value['role'], parts: value['parts'] };
}

function approvalResponses(message: LooseUIMessage, index: number): ClientApprovalResponse[] {
  const out: ClientApprovalResponse[] = [];
  message.parts.forEach((part, j) => {
    if (!isRecord(part) || typeof part['type'] !== 'string') return;
    const isTool = part['type'].startsWith('tool-') || part['type'] === 'dynamic-tool';
    if (!isTool || part['state'] !== 'approval-responded') return;
    const path = `messages[${index}].parts[${j}].approval`;
    const approval = part['approval'];
    if (!isRecord(approval)) throw badRequest(`${path}: expected { id, approved, reason? }, got ${describe(approval)}.`);
    if (typeof approval['id'] !== 'string' || approval['id'] === '' || approval['id'].length > 256) throw badRequest(`${path}.id: expected a non-empty string.`);
    if (typeof approval['approved'] !== 'boolean') throw badRequest(`${path}.approved: expected true or false, got ${describe(approval['approved'])}.`);
    const reason = approval['reason'];
    if (reason !== undefined && (typeof reason !== 'string' || reason.length > 2000)) throw badRequest(`${path}.reason: expected a string of at most 2000 characters.`);
    out.push({ approvalId: approval['id'], approved: approval['approved'], ...(reason !== undefined ? { reason } : {}), path });
  });
  return out;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
