import type { FinishReason, ModelMessage, UIMessage, UIMessageChunk } from 'ai';
import type { ToolEnvelope } from '../tools/envelope';
import { generateId as defaultGenerateId } from '../util/ids';
import type { AgentEvent, TurnStopReason } from './events';

/** Options of {@link createUIStreamEncoder}. */
export interface UIStreamEncoderOptions {
  /** The assistant message id sent in the `start` chunk. */
  readonly messageId: string;
  /** Ids of text parts. */
  readonly generateId: (prefix: string) => string;
}

/** Turns a turn's {@link AgentEvent}s into AI SDK UI message stream chunks, one event at a time. */
export interface UIStreamEncoder {
  /** The `start` chunk. */
  start(): UIMessageChunk[];
  /** The chunks for one event (often none or one, sometimes a few). */
  push(event: AgentEvent): UIMessageChunk[];
  /** The turn failed outside the event stream (the runtime threw). */
  fail(error: unknown): UIMessageChunk[];
  /** Close open parts and send `finish`. Idempotent. */
  finish(): UIMessageChunk[];
}

/** Minara events that travel as `data-minara-<type>` chunks. */
const DATA_EVENTS = new Set<AgentEvent['type']>(['turn-start', 'input-flagged', 'skill-activated', 'compaction', 'approval-request', 'clarification-request', 'step-end', 'turn-end', 'subagent']);
/**
 * The events kept in the message, each under a fixed part id so a continuation (an approval answered, a
 * resumed turn) replaces it instead of piling up: the last `turn-end`, one part per scanner finding.
 * Everything else is transient: delivered to `useChat`'s `onData`, never stored in the message.
 */
const PERSISTED_EVENTS = new Set<AgentEvent['type']>(['turn-end', 'input-flagged']);

/** The Minara event types that travel as data parts. */
export type MinaraDataEventType =
  | 'turn-start' | 'input-flagged' | 'skill-activated' | 'compaction' | 'approval-request' | 'clarification-request' | 'step-end' | 'turn-end' | 'subagent';

/** The data parts of a {@link MinaraUIMessage}: `data-minara-<type>` carries that {@link AgentEvent}. */
export type MinaraDataParts = { [K in MinaraDataEventType as `minara-${K}`]: Extract<AgentEvent, { type: K }> };

/** Tools as the UI sees them: any registry tool, its output the envelope. */
export type MinaraUITools = Record<string, { input: unknown; output: ToolEnvelope | undefined }>;

/**
 * The UI message of a Minara chat, for `useChat<MinaraUIMessage>()`: text, tool parts whose output is the
 * {@link ToolEnvelope}, and `data-minara-*` parts.
 */
export type MinaraUIMessage = UIMessage<unknown, MinaraDataParts, MinaraUITools>;

const FINISH_REASON: Readonly<Record<TurnStopReason, FinishReason>> = {
  finished: 'stop',
  'approval-required': 'tool-calls',
  clarification: 'stop',
  'max-steps': 'length',
  'token-budget': 'length',
  'repeated-blocked-call': 'other',
  aborted: 'other',
  error: 'error',
};

/**
 * Create the encoder for one turn. Steps are opened lazily (`start-step` before the first content of a
 * step, `finish-step` on `step-end`), text parts get an id per run of text, and every tool event maps to
 * the protocol's own tool chunks so `useChat` renders tool parts and approvals without any Minara code:
 *
 * | AgentEvent | UI chunks |
 * | --- | --- |
 * | `text-delta` | `text-start` (once per text run), `text-delta` |
 * | `tool-call` | `tool-input-available` |
 * | `tool-result` | `tool-output-available` (output = the envelope) |
 * | `tool-blocked` | `tool-output-available` with `{ ok: false, error, code }`; `APPROVAL_DENIED` → `tool-output-denied` |
 * | `approval-request` | `tool-approval-request { approvalId, toolCallId, reason }` + `data-minara-approval-request` (transient) |
 * | `step-end` | `data-minara-step-end` (transient), `finish-step` |
 * | `turn-start`, `skill-activated`, `compaction`, `subagent`, `clarification-request` | `data-minara-<type>` (transient) |
 * | `turn-end`, `input-flagged` | `data-minara-<type>` with a fixed part id (the latest replaces the earlier) |
 * | `error` | `error { errorText }` |
 */
export function createUIStreamEncoder(options: UIStreamEncoderOptions): UIStreamEncoder {
  const { messageId, generateId } = options;
  let stepOpen = false;
  let textId: string | undefined;
  let finishReason: FinishReason | undefined;
  let finished = false;

  const openStep = (out: UIMessageChunk[]) => {
    if (!stepOpen) {
      out.push({ type: 'start-step' });
      stepOpen = true;
    }
  };
  const closeText = (out: UIMessageChunk[]) => {
    if (textId !== undefined) {
      out.push({ type: 'text-end', id: textId });
      textId = undefined;
    }
  };
  const closeStep = (out: UIMessageChunk[]) => {
    closeText(out);
    if (stepOpen) {
      out.push({ type: 'finish-step' });
      stepOpen = false;
    }
  };
  const data = (event: AgentEvent): UIMessageChunk => {
    const type = `data-minara-${event.type}` as const;
    if (!PERSISTED_EVENTS.has(event.type)) return { type, data: event, transient: true };
    const id = event.type === 'input-flagged' ? `minara-input-flagged:${event.target}:${event.kind}:${event.pattern}` : `minara-${event.type}`;
    return { type, id, data: event };
  };

  return {
    start: () => [{ type: 'start', messageId }],
    push(event) {
      if (finished) return [];
      const out: UIMessageChunk[] = [];
      switch (event.type) {
        case 'text-delta':
          if (event.delta === '') break;
          openStep(out);
          if (textId === undefined) {
            textId = generateId('txt');
            out.push({ type: 'text-start', id: textId });
          }
          out.push({ type: 'text-delta', id: textId, delta: event.delta });
          break;
        case 'tool-call':
          openStep(out);
          closeText(out);
          out.push({ type: 'tool-input-available', toolCallId: event.toolCallId, toolName: event.toolName, input: event.input ?? {} });
          break;
        case 'tool-result':
          openStep(out);
          closeText(out);
          out.push({ type: 'tool-output-available', toolCallId: event.toolCallId, output: event.output });
          break;
        case 'tool-blocked':
          openStep(out);
          closeText(out);
          out.push(
            event.code === 'APPROVAL_DENIED'
              ? { type: 'tool-output-denied', toolCallId: event.toolCallId }
              : { type: 'tool-output-available', toolCallId: event.toolCallId, output: { ok: false, error: event.reason, code: event.code, retryable: false } },
          );
          break;
        case 'approval-request':
          openStep(out);
          closeText(out);
          out.push({ type: 'tool-approval-request', approvalId: event.approvalId, toolCallId: event.toolCallId, reason: event.reason }, data(event));
          break;
        case 'step-end':
          openStep(out);
          closeText(out);
          out.push(data(event));
          closeStep(out);
          break;
        case 'error':
          closeText(out);
          out.push({ type: 'error', errorText: `${event.code}: ${event.message}` });
          break;
        case 'turn-end':
          closeStep(out);
          finishReason = FINISH_REASON[event.stopReason];
          out.push(data(event));
          break;
        default:
          if (DATA_EVENTS.has(event.type)) out.push(data(event));
          break;
      }
      return out;
    },
    fail(error) {
      if (finished) return [];
      const out: UIMessageChunk[] = [];
      closeStep(out);
      finishReason = 'error';
      out.push({ type: 'error', errorText: error instanceof Error ? error.message : String(error) });
      return out;
    },
    finish() {
      if (finished) return [];
      finished = true;
      const out: UIMessageChunk[] = [];
      closeStep(out);
      out.push(finishReason === undefined ? { type: 'finish' } : { type: 'finish', finishReason });
      return out;
    },
  };
}

/** Options of {@link toUIMessageStream} and {@link toUIMessageStreamResponse}. */
export interface ToUIMessageStreamOptions {
  /** The assistant message id of the `start` chunk (pass the client's id to continue its message). @default a new id */
  readonly messageId?: string | undefined;
  /** Ids of text parts. @default the package's `generateId` */
  readonly generateId?: ((prefix: string) => string) | undefined;
}

/**
 * A turn's events (`runtime.run(…)`) as an AI SDK UI message chunk stream, the protocol `useChat` reads.
 * The turn runs as the stream is read; a runtime failure becomes an `error` chunk and the stream finishes.
 *
 * @example
 * ```ts
 * // app/api/chat/route.ts (Next.js), without the gateway
 * export async function POST(req: Request) {
 *   const { id, messages } = await req.json();
 *   const text = messages.at(-1).parts.find((p) => p.type === 'text').text;
 *   return toUIMessageStreamResponse(app.runtime.run({ sessionId: id, message: text }));
 * }
 * ```
 */
export function toUIMessageStream(events: AsyncIterable<AgentEvent>, options: ToUIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  const generateId = options.generateId ?? defaultGenerateId;
  const encoder = createUIStreamEncoder({ messageId: options.messageId ?? generateId('msg'), generateId });
  const iterator = events[Symbol.asyncIterator]();
  let started = false;
  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      const enqueue = (chunks: UIMessageChunk[]) => {
        for (const c of chunks) controller.enqueue(c);
      };
      if (!started) {
        started = true;
        enqueue(encoder.start());
      }
      try {
        const next = await iterator.next();
        if (next.done) {
          enqueue(encoder.finish());
          controller.close();
          return;
        }
        enqueue(encoder.push(next.value));
      } catch (error) {
        enqueue(encoder.fail(error));
        enqueue(encoder.finish());
        controller.close();
      }
    },
    async cancel() {
      await iterator.return?.();
    },
  });
}

/**
 * The headers of a UI message stream response: the AI SDK's `UI_MESSAGE_STREAM_HEADERS` (a test holds them equal),
 * kept here so that answering a chat does not need the `ai` package loaded.
 */
export const UI_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
});

const sseEncoder = new TextEncoder();

/** One UI chunk as an SSE frame (`data: <json>` and a blank line), as the AI SDK frames it. */
export function uiChunkFrame(chunk: UIMessageChunk): Uint8Array {
  return sseEncoder.encode(`data: ${JSON.stringify(chunk)}\n\n`);
}

/** The frame that ends a UI message stream. */
export const UI_STREAM_DONE_FRAME: Uint8Array = sseEncoder.encode('data: [DONE]\n\n');

/** {@link toUIMessageStream} as an SSE `Response` with the UI message stream headers (what `createUIMessageStreamResponse` sends). */
export function toUIMessageStreamResponse(events: AsyncIterable<AgentEvent>, options: ToUIMessageStreamOptions & { readonly status?: number | undefined; readonly headers?: ConstructorParameters<typeof Headers>[0] | undefined } = {}): Response {
  const body = toUIMessageStream(events, options).pipeThrough(
    new TransformStream<UIMessageChunk, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(uiChunkFrame(chunk));
      },
      flush(controller) {
        controller.enqueue(UI_STREAM_DONE_FRAME);
      },
    }),
  );
  const headers = new Headers(options.headers ?? {});
  for (const [key, value] of Object.entries(UI_STREAM_HEADERS)) if (!headers.has(key)) headers.set(key, value);
  return new Response(body, { ...(options.status !== undefined ? { status: options.status } : {}), headers });
}

type ToolPart = Extract<MinaraUIMessage['parts'][number], { toolCallId: string }>;

/** The UI part of a tool call once its result (an envelope) is known. */
function toolPartWithResult(part: ToolPart, envelope: ToolEnvelope): ToolPart {
  const base = { type: part.type, toolCallId: part.toolCallId, input: part.input } as const;
  if (!envelope.ok && envelope.code === 'APPROVAL_REQUIRED' && envelope.approval) {
    return { ...base, state: 'approval-requested', approval: { id: envelope.approval.approvalId, requestReason: envelope.approval.reason } } as ToolPart;
  }
  if (!envelope.ok && envelope.code === 'APPROVAL_DENIED') {
    return { ...base, state: 'output-denied', approval: { id: String((envelope as { approvalId?: unknown }).approvalId ?? part.toolCallId), approved: false } } as ToolPart;
  }
  return { ...base, state: 'output-available', output: envelope } as ToolPart;
}

/**
 * A stored transcript (AI SDK `ModelMessage`s, as `runtime` persists them) as UI messages, so a page can show
 * a chat it did not stream (`GET /v1/chat/:id`, `useChat({ messages })`): a user message each; an assistant
 * message per turn with its text and one tool part per call, whose state follows its result (output, waiting
 * for approval, denied). System messages are left out.
 */
export function toUIMessages(messages: readonly ModelMessage[], options: { readonly idPrefix?: string | undefined } = {}): MinaraUIMessage[] {
  const prefix = options.idPrefix ?? 'm';
  const out: MinaraUIMessage[] = [];
  let assistant: MinaraUIMessage | undefined;
  const tools = new Map<string, number>();
  messages.forEach((m, i) => {
    if (m.role === 'system') return;
    if (m.role === 'user') {
      assistant = undefined;
      const text = typeof m.content === 'string' ? m.content : m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
      out.push({ id: `${prefix}${i + 1}`, role: 'user', parts: [{ type: 'text', text }] });
      return;
    }
    if (assistant === undefined) {
      assistant = { id: `${prefix}${i + 1}`, role: 'assistant', parts: [] };
      out.push(assistant);
    }
    const parts = assistant.parts;
    if (m.role === 'assistant') {
      if (typeof m.content === 'string') {
        if (m.content !== '') parts.push({ type: 'text', text: m.content, state: 'done' });
        return;
      }
      for (const p of m.content) {
        if (p.type === 'text' && p.text !== '') parts.push({ type: 'text', text: p.text, state: 'done' });
        else if (p.type === 'tool-call') {
          tools.set(p.toolCallId, parts.length);
          parts.push({ type: `tool-${p.toolName}`, toolCallId: p.toolCallId, state: 'input-available', input: p.input } as ToolPart);
        }
      }
      return;
    }
    // role 'tool': settle the calls it answers.
    for (const p of m.content) {
      if (p.type !== 'tool-result') continue;
      const at = tools.get(p.toolCallId);
      if (at === undefined) continue;
      const output = p.output as { type: string; value?: unknown };
      const envelope = (output.type === 'json' ? output.value : { ok: true, data: output.value }) as ToolEnvelope;
      parts[at] = toolPartWithResult(parts[at] as ToolPart, envelope);
    }
  });
  return out;
}
