/**
 * The lexical index's catch-up read on PostgreSQL (`memory.textRows(scope, { afterId })`) runs in pages of 1,000
 * (src/storage/postgres/memory-text.ts: a LIMIT keeps the planner on the scope index). Whatever the page size, it
 * returns every row of the scope after the id, once, in id order, and nothing of another tenant or agent.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createMemoryStore, silentLogger, type Storage } from '@minara/agent';
import { postgresEngines } from './support';

const opened: Storage[] = [];
afterAll(async () => {
  for (const s of opened) await s.close();
});

describe.each(postgresEngines())('$name: the catch-up read of the lexical index', ({ make }) => {
  it('returns all 2,345 rows added after an id (three pages), in order, and only the scope\'s', { timeout: 120_000 }, async () => {
    const storage = make();
    opened.push(storage);
    const scope = { userId: 'catch-up' };
    const mine = createMemoryStore({ storage, scope, logger: silentLogger });
    const theirs = createMemoryStore({ storage, scope: { userId: 'catch-up-other' }, logger: silentLogger });
    const agents = createMemoryStore({ storage, scope: { userId: 'catch-up', agentId: 'desk' }, logger: silentLogger });
    const first = await mine.writeMany(Array.from({ length: 10 }, (_, i) => ({ category: 'observation' as const, content: `before ${i} watched SOL` })));
    const after = first[first.length - 1]!.id;
    const added: number[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const n = batch === 4 ? 345 : 500;
      added.push(...(await mine.writeMany(Array.from({ length: n }, (_, i) => ({ category: 'observation' as const, content: `row ${batch}-${i} watched ETH` })))).map((r) => r.id));
      // Rows of another tenant and of an agent of this one, interleaved in the id sequence.
      await theirs.writeMany([{ category: 'observation', content: `other ${batch} watched BTC` }]);
      await agents.writeMany([{ category: 'observation', content: `desk ${batch} watched BTC` }]);
    }
    const rows = await storage.memory.textRows!(scope, { afterId: after });
    expect(rows.map((r) => r.id)).toEqual(added);
    expect(rows.every((r) => r.content.includes('watched ETH'))).toBe(true);
    const agentRows = await storage.memory.textRows!({ userId: 'catch-up', agentId: 'desk' }, { afterId: after });
    expect(agentRows.map((r) => r.content)).toEqual(Array.from({ length: 5 }, (_, b) => `desk ${b} watched BTC`));
    expect(await storage.memory.textRows!(scope, { afterId: added[added.length - 1]! })).toEqual([]);
    expect((await storage.memory.textRows!(scope, { afterId: added[999]! })).map((r) => r.id)).toEqual(added.slice(1000));
  });
});
