import type { FinishReason, UIMessageChunk } from 'ai';
import type { AgentEvent, TurnStopReason } from '../runtime/events';

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

/** Minara events that travel as `data-minara-<type>` chunks. `step-end` usage is transient (not kept in the message). */
const DATA_EVENTS = new Set<AgentEvent['type']>(['turn-start', 'input-flagged', 'skill-activated', 'compaction', 'approval-request', 'step-end', 'turn-end']);
const TRANSIENT_EVENTS = new Set<AgentEvent['type']>(['step-end']);

const FINISH_REASON: Readonly<Record<TurnStopReason, FinishReason>> = {
  finished: 'stop',
  'approval-required': 'tool-calls',
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
 * | `approval-request` | `tool-approval-request { approvalId, toolCallId, reason }` + `data-minara-approval-request` |
 * | `step-end` | `data-minara-step-end` (transient), `finish-step` |
 * | `turn-start`, `input-flagged`, `skill-activated`, `compaction`, `turn-end` | `data-minara-<type>` |
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
    const chunk: UIMessageChunk = { type: `data-minara-${event.type}`, data: event };
    return TRANSIENT_EVENTS.has(event.type) ? { ...chunk, transient: true } : chunk;
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
