/**
 * The PostgreSQL search tail after a bulk load (issue 41): the first lookup of a big scope queues a snapshot save,
 * and the engine's write of it (a multi-megabyte row: ~1 s at 100k rows on a busy server) held the scope's lock,
 * so every lookup behind it waited. A lookup now waits for the encoding only, never for the engine's write.
 */
import { createMemoryStore, parseSearchQuery, silentLogger, type MemoryScope, type MemoryStorage, type MemoryTextIndexSnapshot } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';
import { createLexicalCache } from '../../src/memory/lexical-cache';

describe('lexical index snapshots are written outside the scope lock', () => {
  it('a lookup answers while the engine is still storing the snapshot; the save completes afterwards', async () => {
    const storage = createInMemoryStorage();
    const scope: MemoryScope = { userId: 'u' };
    const store = createMemoryStore({ storage, scope, logger: silentLogger });
    await store.writeMany(Array.from({ length: 40 }, (_, i) => ({ category: 'observation', content: `user watched BTC and ETH funding in week ${i}` })));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const saved: MemoryTextIndexSnapshot[] = [];
    const memory: MemoryStorage = Object.create(storage.memory) as MemoryStorage;
    Object.assign(memory, {
      // The engine's write takes as long as the test says.
      saveTextIndex: async (s: MemoryScope, snapshot: MemoryTextIndexSnapshot) => {
        await gate;
        saved.push(snapshot);
        return storage.memory.saveTextIndex!(s, snapshot);
      },
    });
    const cache = createLexicalCache(memory, { snapshotMinRows: 10, snapshotMinChanges: 1 });
    const query = parseSearchQuery('funding').root!;
    const first = await cache.search(scope, query, { limit: 5 });
    expect(first).toHaveLength(5);
    // The save is queued after the first lookup; the second lookup must not wait for the engine's write.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const second = await Promise.race([cache.search(scope, query, { limit: 5 }).then((r) => r.length), new Promise<string>((resolve) => setTimeout(() => resolve('waited for the save'), 2000))]);
    expect(second).toBe(5);
    expect(saved).toHaveLength(0); // the write is still pending
    release();
    await cache.settled();
    expect(saved).toHaveLength(1);
    await store.close();
  });
});
