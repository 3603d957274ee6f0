/**
 * Storage.batchReads: reads begun together are one look at the database (SQLite checks `PRAGMA data_version`
 * once for all of them), and the turn begins its start-of-turn reads as one such group. Results stay what the
 * reads would return one after another; a write begun inside ends the sharing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { readTogether } from '../../src/storage/read-together';
import { setup } from './helpers';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A SQLite storage and a second, raw connection on the same file (another writer). */
function sqliteWithOtherWriter() {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-batch-reads-'));
  const file = path.join(dir, 'b.db');
  const storage = createSqliteStorage({ path: file, logger: silentLogger });
  const other = new Database(file);
  other.pragma('busy_timeout = 2000');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => storage.close(), () => other.close());
  const setKv = (key: string, value: string) => other.prepare('UPDATE kv SET value = ? WHERE key = ?').run(value, key);
  return { storage, setKv };
}

describe('Storage.batchReads (SQLite): one look at the database for the reads begun together', () => {
  it('reads begun together share one data_version check; the next read outside sees the other connection’s commit', async () => {
    const { storage, setKv } = sqliteWithOtherWriter();
    await storage.meta.set('k', 'v1');
    expect(await storage.meta.get('k')).toBe('v1'); // cached
    const inside: Array<Promise<string | undefined>> = [];
    storage.batchReads!(() => {
      inside.push(storage.meta.get('k'));
      // Only to show the sharing: a commit lands between two reads of the same look (a caller's start never
      // runs anything but its reads, so nothing could have learned of this commit before the second read).
      setKv('k', 'v2');
      inside.push(storage.meta.get('k'));
    });
    expect(await Promise.all(inside)).toEqual(['v1', 'v1']);
    expect(await storage.meta.get('k')).toBe('v2');
  });

  it('without the batch, each read checks for itself and sees the commit at once', async () => {
    const { storage, setKv } = sqliteWithOtherWriter();
    await storage.meta.set('k', 'v1');
    expect(await storage.meta.get('k')).toBe('v1');
    const first = storage.meta.get('k');
    setKv('k', 'v2');
    const second = storage.meta.get('k');
    expect([await first, await second]).toEqual(['v1', 'v2']);
  });

  it('a write begun inside the batch ends the sharing: reads after it check again', async () => {
    const { storage, setKv } = sqliteWithOtherWriter();
    await storage.meta.set('k', 'v1');
    expect(await storage.meta.get('k')).toBe('v1');
    const reads: Array<Promise<unknown>> = [];
    storage.batchReads!(() => {
      reads.push(storage.meta.get('k'));
      setKv('k', 'v2');
      reads.push(storage.meta.set('other', 'x'));
      reads.push(storage.meta.get('k'));
    });
    const [before, , after] = await Promise.all(reads);
    expect(before).toBe('v1');
    expect(after).toBe('v2');
  });

  it('a nested batch keeps the outer look, and a read that fails rejects only its own promise', async () => {
    const { storage, setKv } = sqliteWithOtherWriter();
    await storage.meta.set('k', 'v1');
    expect(await storage.meta.get('k')).toBe('v1');
    let reads: [Promise<string | undefined>, Promise<string | undefined>, Promise<string | undefined>] | undefined;
    storage.batchReads!(() => {
      const first = storage.meta.get('k');
      setKv('k', 'v2');
      const [nested, bad] = readTogether<[string | undefined, string | undefined]>(storage, [() => storage.meta.get('k'), () => storage.meta.get('')]);
      reads = [first, nested, bad];
    });
    const [first, nested, bad] = reads!;
    expect(await first).toBe('v1');
    expect(await nested).toBe('v1');
    await expect(bad).rejects.toThrow(/key/);
    expect(await storage.meta.get('k')).toBe('v2');
  });
});

describe('readTogether', () => {
  it('runs the reads as they are on a storage without batchReads, each promise its own', async () => {
    const storage = createInMemoryStorage();
    expect(storage.batchReads).toBeUndefined();
    await storage.meta.set('a', '1');
    const [a, boom, missing] = readTogether<[string | undefined, never, string | undefined]>(storage, [
      () => storage.meta.get('a'),
      () => {
        throw new Error('thrown before any await');
      },
      () => storage.meta.get('b'),
    ]);
    expect(await a).toBe('1');
    await expect(boom).rejects.toThrow('thrown before any await');
    expect(await missing).toBeUndefined();
  });

  it('without batchReads, each read begins once the one before it settled (one connection at a time on a pool)', async () => {
    const storage = createInMemoryStorage();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const [first, second] = readTogether<[string, string]>(storage, [
      async () => {
        log.push('first begins');
        await gate;
        log.push('first ends');
        return 'a';
      },
      async () => {
        log.push('second begins');
        return 'b';
      },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(log).toEqual(['first begins']);
    release();
    expect([await first, await second]).toEqual(['a', 'b']);
    expect(log).toEqual(['first begins', 'first ends', 'second begins']);
  });
});

/** A storage that records which reads begin inside each `batchReads` group (an in-memory storage given the method). */
function recordGroups(inner: Storage): { storage: Storage; groups: string[][]; order: string[] } {
  const groups: string[][] = [];
  const order: string[] = [];
  let open: string[] | undefined;
  const batchReads = (start: () => void) => {
    const outer = open;
    if (outer === undefined) groups.push((open = []));
    try {
      start();
    } finally {
      if (outer === undefined) open = undefined;
    }
  };
  const spy = <A extends unknown[], R>(fn: (...args: A) => R, label: (...args: A) => string) => (...args: A): R => {
    open?.push(label(...args));
    order.push(label(...args));
    return fn(...args);
  };
  const { conversations, approvals, meta } = inner;
  const storage: Storage = {
    ...inner,
    batchReads,
    conversations: { ...conversations, getSession: spy(conversations.getSession, () => 'session row'), listMessages: spy(conversations.listMessages, () => 'history') },
    approvals: { ...approvals, list: spy(approvals.list, () => 'pending approvals') },
    meta: { ...meta, get: spy(meta.get, (key) => key.replace(/:[^:]*$/, '')) },
  };
  return { storage, groups, order };
}

describe('the turn reads ahead with its session row', () => {
  it('session row, state, memory key, pending approvals, history and call journal in one group; the answer is unchanged', async () => {
    const { storage, groups } = recordGroups(createInMemoryStorage());
    const { runtime } = setup([{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { text: 'BTC is $97,000.' }, { text: 'Still $97,000.' }], { storage });
    const first = await runtime.generate({ sessionId: 's1', message: 'price of BTC?' });
    expect(first.text).toBe('BTC is $97,000.');
    expect(groups).toEqual([['session row', 'runtime:session', 'runtime:session-memory', 'pending approvals', 'history', 'runtime:calls-in-flight']]);
    groups.length = 0;
    const second = await runtime.generate({ sessionId: 's1', message: 'and now?' });
    expect(second.text).toBe('Still $97,000.');
    expect(groups).toHaveLength(1);
    // The second turn saw the first one's history and state (one more turn counted).
    const history = await storage.conversations.listMessages('s1');
    expect(history.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
  });

  it('with onTurnStart hooks, the session row is read first, alone, and the rest after the hooks', async () => {
    const { storage, groups, order } = recordGroups(createInMemoryStorage());
    const { runtime, model } = setup([{ text: 'Hello.' }], { storage, onTurnStart: [() => void order.push('hook')] });
    const result = await runtime.generate({ sessionId: 's2', message: 'hi' });
    expect(result.text).toBe('Hello.');
    expect(order.slice(0, 7)).toEqual(['session row', 'hook', 'runtime:session', 'runtime:session-memory', 'pending approvals', 'history', 'runtime:calls-in-flight']);
    expect(groups).toEqual([['runtime:session', 'runtime:session-memory', 'pending approvals', 'history', 'runtime:calls-in-flight']]);
    expect(model.calls).toHaveLength(1);
  });
});
