import type { UIMessageChunk } from 'ai';
import type { AgentEvent } from '../runtime/events';
import type { Logger } from '../util/logger';
import { createUIStreamEncoder, UI_STREAM_DONE_FRAME as DONE_FRAME, uiChunkFrame } from '../runtime/ui-stream';

/** One SSE frame of the UI message stream. */
export function sseFrame(chunk: UIMessageChunk): Uint8Array {
  return uiChunkFrame(chunk);
}

/** How a turn driven by the registry ended. */
export interface ActiveTurnOutcome {
  /** The `turn-end` event, or `undefined` when the runtime failed before emitting one. */
  readonly end: Extract<AgentEvent, { type: 'turn-end' }> | undefined;
  readonly events: readonly AgentEvent[];
}

/** A turn running server-side, its UI stream buffered for replay. */
export interface ActiveTurn {
  readonly chatId: string;
  readonly userId: string;
  readonly messageId: string;
  /** Resolves when the turn has ended and its last frame (`[DONE]`) is buffered. */
  readonly finished: Promise<ActiveTurnOutcome>;
  /** A fresh SSE byte stream: every buffered frame from the start, then live frames until `[DONE]`. */
  subscribe(): ReadableStream<Uint8Array>;
}

/**
 * The turns that are running, by chat id. A turn is consumed here, server-side, from start to end, no
 * matter how many clients read it (none, one, or a resumed one): a client that disconnects only cancels
 * its own subscription. Its frames stay buffered until the turn ends, then the entry is removed (resume
 * answers 204).
 */
export function createActiveStreams(options: { readonly generateId: (prefix: string) => string; readonly logger: Logger }) {
  const turns = new Map<string, ActiveTurn>();

  function start(input: { chatId: string; userId: string; messageId: string; events: AsyncIterable<AgentEvent> }): ActiveTurn {
    const frames: Uint8Array[] = [];
    const listeners = new Set<() => void>();
    let done = false;
    // Readers are woken once per macrotask, so frames produced in one burst (a fast model, a replay) go
    // out as one write instead of one TCP segment each.
    let wakeScheduled = false;
    const wakeAll = () => {
      wakeScheduled = false;
      for (const l of listeners) l();
    };
    const append = (chunks: readonly UIMessageChunk[]) => {
      if (chunks.length === 0) return;
      for (const c of chunks) frames.push(sseFrame(c));
      if (!wakeScheduled) {
        wakeScheduled = true;
        setImmediate(wakeAll);
      }
    };
    const enc = createUIStreamEncoder({ messageId: input.messageId, generateId: options.generateId });

    let resolveFinished!: (outcome: ActiveTurnOutcome) => void;
    const finished = new Promise<ActiveTurnOutcome>((resolve) => {
      resolveFinished = resolve;
    });

    const turn: ActiveTurn = {
      chatId: input.chatId,
      userId: input.userId,
      messageId: input.messageId,
      finished,
      subscribe() {
        let cursor = 0;
        let cancelled = false;
        let wake: (() => void) | undefined;
        const listener = () => {
          const w = wake;
          wake = undefined;
          w?.();
        };
        listeners.add(listener);
        return new ReadableStream<Uint8Array>({
          async pull(controller) {
            for (;;) {
              if (cancelled) return;
              if (cursor < frames.length) {
                // Everything buffered goes out as one write.
                const batch = frames.slice(cursor);
                cursor = frames.length;
                controller.enqueue(batch.length === 1 ? batch[0]! : concat(batch));
                return;
              }
              if (done) {
                listeners.delete(listener);
                controller.close();
                return;
              }
              await new Promise<void>((resolve) => {
                wake = resolve;
              });
            }
          },
          cancel() {
            cancelled = true;
            listeners.delete(listener);
            listener();
          },
        });
      },
    };
    turns.set(input.chatId, turn);
    void (async () => {
      const events: AgentEvent[] = [];
      let end: ActiveTurnOutcome['end'];
      append(enc.start());
      try {
        for await (const event of input.events) {
          events.push(event);
          if (event.type === 'turn-end') end = event;
          append(enc.push(event));
        }
      } catch (error) {
        options.logger.error('gateway: turn failed', { chatId: input.chatId, error: error instanceof Error ? error.message : String(error) });
        append(enc.fail(error));
      }
      append(enc.finish());
      frames.push(DONE_FRAME);
      done = true;
      wakeAll();
      if (turns.get(input.chatId) === turn) turns.delete(input.chatId);
      resolveFinished({ end, events });
    })();
    return turn;
  }

  return {
    start,
    get: (chatId: string): ActiveTurn | undefined => turns.get(chatId),
    size: (): number => turns.size,
    /** Wait for every running turn to end. */
    async drain(): Promise<void> {
      while (turns.size > 0) await Promise.allSettled([...turns.values()].map((t) => t.finished));
    },
  };
}

export type ActiveStreams = ReturnType<typeof createActiveStreams>;

function concat(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.byteLength;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.byteLength;
  }
  return out;
}
