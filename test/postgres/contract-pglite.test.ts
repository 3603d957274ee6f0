import { afterAll, describe, expect, it } from 'vitest';
import { runStorageContract } from '../storage/contract';
import { pgliteStorage } from './support';

runStorageContract('postgres (PGlite)', ({ now }) => pgliteStorage({ now }));

describe('createPostgresStorage on PGlite', () => {
  it('describes itself as a multi-process postgres engine and reports the vector capability honestly', async () => {
    const storage = await pgliteStorage();
    expect(storage.kind).toBe('postgres');
    expect(storage.capabilities.multiProcess).toBe(true);
    expect(storage.capabilities.fullText).toBe(true);
    if (!storage.capabilities.vector) expect(storage.capabilities.vectorUnavailableReason).toMatch(/pgvector unavailable/);
    expect(await storage.schemaVersions()).toEqual({ core: 2, memory: 1, trading: 1, jobs: 1, usage: 1, learning: 1 });
    await storage.close();
  });
});
afterAll(() => undefined);
