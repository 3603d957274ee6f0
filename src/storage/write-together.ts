import type { Storage } from './types';

/**
 * Commit several storage writes as one transaction where the engine batches them (`Storage.batchWrites`: one
 * SQLite commit instead of one per write). Returns each write's settlement, in order, when the batch committed
 * (a write the engine could not begin inside the batch ran on its own and may have failed: the caller logs it);
 * `undefined` when the engine does not batch or a write in the batch failed and nothing was committed: the caller
 * then runs the writes one by one, its own way, with its own ordering and error handling.
 */
export async function writeTogether(storage: Storage, writes: ReadonlyArray<() => Promise<unknown>>): Promise<PromiseSettledResult<unknown>[] | undefined> {
  if (storage.batchWrites === undefined) return undefined;
  let started: Array<Promise<unknown>> = [];
  try {
    // A transaction retried on SQLITE_BUSY calls this again: only the last attempt's writes are awaited.
    storage.batchWrites(() => {
      for (const p of started) p.catch(() => undefined);
      started = writes.map((write) => write());
    });
  } catch {
    for (const p of started) p.catch(() => undefined);
    return undefined;
  }
  return Promise.allSettled(started);
}
