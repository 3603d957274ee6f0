/**
 * Retrieval quality on the LoCoMo development split (issue 22), lexical only, through `createMemoryStore`
 * on both engines: a regression below recall@10 0.80 or MRR@10 0.55 (the targets) fails CI. The data lives outside the package
 * (`../shared/data/locomo-dev`); where it is absent the test skips loudly, and fails instead under
 * `MINARA_REQUIRE_REAL_COMPONENTS=1`.
 */
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { silentLogger } from '@minara/agent';
import { describe, expect, it } from 'vitest';
import { LOCOMO_DEV_PATH, evaluateLocomo, loadIntoStores, loadLocomo } from '../../bench/memory/locomo-eval';
import { realComponent } from '../support/real-component';

const data = loadLocomo();
const available = realComponent('The LoCoMo development split', data !== undefined, `expected at ${LOCOMO_DEV_PATH} (see ../shared/data/locomo-dev/README.md)`);

describe.skipIf(!available)('LoCoMo development split, lexical retrieval', () => {
  it.each([
    ['sqlite', () => createSqliteStorage({ path: ':memory:', logger: silentLogger })],
    ['in-memory', () => createInMemoryStorage()],
  ] as const)('%s: recall@10 ≥ 0.80, MRR@10 ≥ 0.55 and no question without an answer', async (_name, make) => {
    const storage = make();
    const { search, close } = await loadIntoStores(storage, data ?? []);
    const scores = await evaluateLocomo(data ?? [], search);
    const all = scores.find((s) => s.category === 'all');
    expect(all?.n).toBe(760);
    expect(all?.recall10).toBeGreaterThanOrEqual(0.8);
    expect(all?.mrr10).toBeGreaterThanOrEqual(0.55);
    expect(all?.empty).toBe(0);
    await close();
    await storage.close();
  }, 120_000);
});
