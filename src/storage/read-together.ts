import type { Storage } from './types';

type Started<T extends readonly unknown[]> = { [K in keyof T]: Promise<T[K]> };

/**
 * Begin several storage reads together, where the engine can answer them as one look at the database
 * (`Storage.batchReads`: SQLite validates its read caches with one `PRAGMA data_version` instead of one per read).
 * Each read's promise is returned as it is, in order: a rejected read rejects only its own promise, as it would
 * alone. Every read must begin its storage call synchronously, before its first `await`. On an engine without
 * `batchReads` the reads run one after another, each once the one before it settled (a PostgreSQL pool then holds
 * one connection for them at a time, as when they were read stage by stage).
 */
export function readTogether<T extends readonly unknown[]>(storage: Storage, reads: { readonly [K in keyof T]: () => Promise<T[K]> }): Started<T> {
  const list = reads as ReadonlyArray<() => Promise<unknown>>;
  if (storage.batchReads === undefined) return inOrder(list) as Started<T>;
  let started: Array<Promise<unknown>> | undefined;
  storage.batchReads(() => {
    started = list.map(begin);
  });
  return (started ?? inOrder(list)) as Started<T>;
}

/** A read begun now; a synchronous throw becomes its rejection. */
function begin(read: () => Promise<unknown>): Promise<unknown> {
  try {
    return read();
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The reads one after another: each begins once the one before it settled, whatever its outcome. */
function inOrder(reads: ReadonlyArray<() => Promise<unknown>>): Array<Promise<unknown>> {
  let previous: Promise<unknown> = Promise.resolve();
  return reads.map((read) => {
    const next = previous.then(() => begin(read), () => begin(read));
    previous = next.then(() => undefined, () => undefined);
    return next;
  });
}
