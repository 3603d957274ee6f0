import type { Storage } from './types';

/**
 * Begin several storage reads together, where the engine can answer them as one look at the database
 * (`Storage.batchReads`: SQLite validates its read caches with one `PRAGMA data_version` instead of one per read).
 * Each read's promise is returned as it is, in order: a rejected read rejects only its own promise, as it would
 * alone. Every read must begin its storage call synchronously, before its first `await`.
 */
export function readTogether<T extends readonly unknown[]>(storage: Storage, reads: { readonly [K in keyof T]: () => Promise<T[K]> }): { [K in keyof T]: Promise<T[K]> } {
  const begin = (read: () => Promise<unknown>): Promise<unknown> => {
    try {
      return read();
    } catch (error) {
      return Promise.reject(error);
    }
  };
  const run = (): { [K in keyof T]: Promise<T[K]> } => reads.map(begin) as unknown as { [K in keyof T]: Promise<T[K]> };
  if (storage.batchReads === undefined) return run();
  let started: { [K in keyof T]: Promise<T[K]> } | undefined;
  storage.batchReads(() => {
    started = run();
  });
  return started ?? run();
}
