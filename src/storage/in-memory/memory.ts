import type { MemoryStorage } from '../memory-types';

/** The in-memory memory domain (placeholder until the memory issue lands). */
export function createInMemoryMemoryStorage(_options: { now: () => Date }): MemoryStorage {
  return { ready: true };
}
