import { MinaraError } from '@minara/agent';
import { describe, expect, it } from 'vitest';
import { engines, makeStore } from './helpers';

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (MinaraError.isInstance(e)) return `${e.code}: ${e.message}`;
    throw e;
  }
  return 'resolved';
}

describe.each(engines)('bad input ($name)', ({ make }) => {
  it('rejects bad writes with clear errors and stores nothing', async () => {
    const { store } = makeStore(make);
    expect(await code(store.write({ category: 'observation', content: '' }))).toMatch(/MEMORY_INVALID: `content` must not be empty/);
    expect(await code(store.write({ category: 'observation', content: '   \n\t ' }))).toMatch(/MEMORY_INVALID/);
    const big = 'x'.repeat(1024 * 1024);
    expect(await code(store.write({ category: 'observation', content: big }))).toMatch(/MEMORY_TOO_LARGE: `content` is 1048576 bytes; the limit is 65536 bytes/);
    expect(await code(store.write({ category: 'Bad Category', content: 'x' }))).toMatch(/MEMORY_INVALID: `category` must match/);
    expect(await code(store.write({ category: '', content: 'x' }))).toMatch(/MEMORY_INVALID/);
    expect(await code(store.write({ category: 'a'.repeat(41), content: 'x' }))).toMatch(/MEMORY_INVALID/);
    expect(await code(store.write({ category: 'observation', content: 'bell \u0007 here' }))).toMatch(/control character U\+0007/);
    expect(await code(store.write({ category: 'observation', content: 'nul \u0000 here' }))).toMatch(/control character U\+0000/);
    expect(await code(store.write({ category: 'observation', content: 'c1 \u0085 here' }))).toMatch(/control character U\+0085/);
    expect(await code(store.write({ category: 'observation', content: 'lone \uD800 surrogate' }))).toMatch(/unpaired surrogate/);
    expect(await code(store.write({ category: 'observation', content: 42 as never }))).toMatch(/must be a string/);
    expect(await code(store.write({ category: 'observation', content: 'ok', metadata: [] as never }))).toMatch(/plain JSON object/);
    expect(await code(store.write({ category: 'observation', content: 'ok', metadata: { big: 'y'.repeat(20_000) } }))).toMatch(/MEMORY_TOO_LARGE: `metadata`/);
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    expect(await code(store.write({ category: 'observation', content: 'ok', metadata: cyclic }))).toMatch(/not JSON-serialisable/);
    expect(await code(store.write({ category: 'observation', content: 'ok', source: 'Not Valid' }))).toMatch(/`source` must match/);
    expect(await code(store.write(null as never))).toMatch(/`input` must be an object/);
    expect(await code(store.write({ category: 'fact', content: '' }))).toMatch(/must not be empty/);
    expect(await store.read({ limit: 1000 })).toEqual([]);
    expect(await store.topEntities()).toEqual([]);
    expect((await store.loadSnapshot()).text).toBe('');
  });

  it('keeps tabs and newlines, normalises CRLF, honours maxContentBytes', async () => {
    const { store } = makeStore(make, { maxContentBytes: 10 });
    const { id } = await store.write({ category: 'observation', content: 'a\tb\r\nc' });
    expect((await store.get(id))?.content).toBe('a\tb\nc');
    expect(await code(store.write({ category: 'observation', content: '山寨币崩了' }))).toMatch(/MEMORY_TOO_LARGE: `content` is 15 bytes; the limit is 10 bytes/);
  });

  it('rejects bad limits, ids, modes and profile entries with the field named', async () => {
    const { store } = makeStore(make);
    for (const limit of [Number.NaN, 0, -1, 1.5, 1001, Number.POSITIVE_INFINITY, '5' as never]) {
      expect(await code(store.read({ limit }))).toMatch(/MEMORY_INVALID: `limit` must be an integer from 1 to 1000/);
      expect(await code(store.search('x', { limit }))).toMatch(/`limit`/);
    }
    expect(await code(store.search('x', { mode: 'semantic' as never }))).toMatch(/`mode`/);
    expect(await code(store.search('x', { category: 'NOPE' }))).toMatch(/`category`/);
    expect(await code(store.search(undefined as never))).toMatch(/`query` must be a string/);
    expect(await code(store.get(Number.NaN))).toMatch(/`id` must be a positive integer/);
    expect(await code(store.update(999, { content: 'x' }))).toMatch(/NOT_FOUND/);
    expect(await code(store.update(1, { content: '' }))).toMatch(/MEMORY_INVALID/);
    expect(await code(store.profile.set('bad key', 'x'))).toMatch(/profile `key`/);
    expect(await code(store.profile.set('lang', ''))).toMatch(/profile `value` must not be empty/);
    expect(await code(store.profile.set('lang', 'en\u0000'))).toMatch(/control character/);
    expect(await code(store.purgeExpiredSoftDeleted(new Date('nope')))).toMatch(/`cutoff`/);
    expect(await code(store.getEntityNeighborhood(''))).toMatch(/`entity`/);
    expect(await store.profile.list()).toEqual([]);
  });

  it('a failed update leaves the row exactly as it was', async () => {
    const { store } = makeStore(make);
    const { id } = await store.write({ category: 'observation', content: 'bought ETH on Base' });
    const before = await store.get(id);
    expect(await code(store.update(id, { content: 'x'.repeat(70_000) }))).toMatch(/MEMORY_TOO_LARGE/);
    expect(await code(store.update(id, { category: 'BAD' }))).toMatch(/MEMORY_INVALID/);
    expect(await store.get(id)).toEqual(before);
    expect((await store.search('ETH')).map((h) => h.id)).toEqual([id]);
  });
});
