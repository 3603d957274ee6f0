import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLearningStore, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { runFixture } from '../support/run-fixture';

const fixture = fileURLToPath(new URL('./fixtures/capture-writer.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'minara-learn-2p-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (path: string, name: string, count: number, methodologyId: number) =>
  runFixture<{ name: string; errors: string[] }>(fixture, [path, name, String(count), String(methodologyId)]);

describe('decision capture from two processes on one SQLite file', () => {
  it('attributes every outcome exactly once: no lost update of uses and wins, one case per closed trade', async () => {
    const path = join(dir, 'shared.db');
    const setup = createSqliteStorage({ path, logger: silentLogger });
    const { methodology } = await createLearningStore({ storage: setup, scope: { userId: 'shared' } }).createMethodology({ asset: 'BTC', text: 'Shared methodology' });
    await setup.close();
    const count = 60;
    const results = await Promise.all([run(path, 'a', count, methodology.id), run(path, 'b', count, methodology.id)]);
    for (const r of results) expect(r.errors).toEqual([]);
    const storage = createSqliteStorage({ path, logger: silentLogger });
    const store = createLearningStore({ storage, scope: { userId: 'shared' } });
    const m = (await store.getMethodology(methodology.id))!;
    // Each process closes its own opens FIFO — but closes may take the other's open trade; every open is closed once either way.
    expect(m.uses).toBe(2 * count);
    const opens = await store.listTrades({ action: 'open', limit: 1000 });
    expect(opens).toHaveLength(2 * count);
    expect(opens.every((t) => t.status === 'closed')).toBe(true);
    expect(m.wins).toBe(opens.filter((t) => t.outcome === 'win').length);
    expect(await store.listCases({ limit: 1000 })).toHaveLength(2 * count);
    const [slip] = await store.listPreferences({ dimension: 'slippage' });
    expect(slip!.evidence).toBe(2 * count);
    await storage.close();
  }, 120_000);
});
