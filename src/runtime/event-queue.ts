/**
 * A single-consumer async queue: the turn task pushes events, the caller's `for await` pulls them.
 * The task never waits for the consumer, so a consumer that stops early (a client that disconnects)
 * does not stop the turn from finishing and persisting.
 */
export interface EventQueue<T> extends AsyncIterable<T> {
  push(value: T): void;
  close(): void;
  fail(error: unknown): void;
}

export function createEventQueue<T>(): EventQueue<T> {
  const buffer: T[] = [];
  let waiting: ((r: IteratorResult<T>) => void) | undefined;
  let rejectWaiting: ((e: unknown) => void) | undefined;
  let done = false;
  let detached = false;
  let failure: { error: unknown } | undefined;

  return {
    push(value) {
      if (done || detached) return;
      if (waiting) {
        const w = waiting;
        waiting = undefined;
        rejectWaiting = undefined;
        w({ value, done: false });
      } else buffer.push(value);
    },
    close() {
      done = true;
      if (waiting) {
        const w = waiting;
        waiting = undefined;
        w({ value: undefined, done: true });
      }
    },
    fail(error) {
      failure = { error };
      done = true;
      if (rejectWaiting) {
        const r = rejectWaiting;
        waiting = undefined;
        rejectWaiting = undefined;
        r(error);
      }
    },
    [Symbol.asyncIterator]() {
      return {
        next: () => {
          if (buffer.length > 0) return Promise.resolve({ value: buffer.shift()!, done: false });
          if (failure) return Promise.reject(failure.error);
          if (done) return Promise.resolve({ value: undefined, done: true });
          return new Promise<IteratorResult<T>>((resolve, reject) => {
            waiting = resolve;
            rejectWaiting = reject;
          });
        },
        return: () => {
          // The consumer stopped listening; the producer keeps running and its events are dropped.
          detached = true;
          buffer.length = 0;
          return Promise.resolve({ value: undefined, done: true });
        },
      };
    },
  };
}
