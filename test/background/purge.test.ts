/**
 * The purge job reaches every tenant of the storage: served tenants by their own store's retention, tenants this
 * process never served (`unservedRetentionDays`, which `createApp` sets to its stores' 30 days) through
 * `MemoryStorage.expiredSoftDeletedScopes`, on every engine that has it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgentBackground, createApp, createMemoryStore, type MinaraApp, silentLogger } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { engines } from '../memory/helpers';

const DAY = 86_400_000;
const T0 = Date.parse('2026-03-02T00:00:00.000Z');
const dirs: string[] = [];
let app: MinaraApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.each(engines)('expiredSoftDeletedScopes ($name)', ({ make }) => {
  it('names every scope with rows deleted before the cutoff, and only those', async () => {
    const storage = make();
    let t = T0;
    const store = (userId: string, agentId?: string) => createMemoryStore({ storage, scope: agentId === undefined ? { userId } : { userId, agentId }, now: () => new Date(t), logger: silentLogger });
    const [alice, bobAgent, carol, dave] = [store('alice'), store('bob', 'trader'), store('carol'), store('dave')];
    const old = [await alice.write({ category: 'lesson', content: 'alice old' }), await bobAgent.write({ category: 'lesson', content: 'bob old' })];
    await carol.write({ category: 'lesson', content: 'carol kept' });
    await alice.softDelete(old[0]!.id);
    await bobAgent.softDelete(old[1]!.id);
    t += 40 * DAY;
    const recent = await dave.write({ category: 'lesson', content: 'dave recent' });
    await dave.softDelete(recent.id);
    const cutoff = new Date(t - 30 * DAY).toISOString();
    expect(await storage.memory.expiredSoftDeletedScopes?.(cutoff)).toEqual([{ userId: 'alice' }, { userId: 'bob', agentId: 'trader' }]);
    expect(await storage.memory.expiredSoftDeletedScopes?.(new Date(t + DAY).toISOString())).toHaveLength(3);
    await storage.close();
  });
});

describe('the memory:purge job', () => {
  it('in createApp purges a tenant this process never served once its deletion is 30 days old', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-purge-'));
    dirs.push(dir);
    let t = T0;
    app = await createApp({
      envFileDir: false, env: { MINARA_PERSONALIZATION_REBUILD: 'disabled' }, logger: silentLogger, model: createScriptedModel([]), finance: false,
      config: { dataDir: dir }, now: () => new Date(t),
    });
    const served = app.memoryFor('alice');
    // Bob's rows were written by another process: no store of this app serves him.
    const bob = createMemoryStore({ storage: app.storage, scope: { userId: 'bob' }, now: () => new Date(t), logger: silentLogger });
    const a = await served.write({ category: 'lesson', content: 'alice forgets this' });
    const b = await bob.write({ category: 'lesson', content: 'bob forgets this' });
    const keep = await bob.write({ category: 'lesson', content: 'bob keeps this' });
    await served.softDelete(a.id);
    await bob.softDelete(b.id);
    const runPurge = async () => {
      t += 31 * 60_000;
      await app!.background.tick();
      await app!.background.idle();
    };
    await runPurge();
    expect(await app.storage.memory.get({ userId: 'bob' }, b.id, { includeDeleted: true })).toBeDefined();
    t += 30 * DAY;
    await runPurge();
    expect(await app.storage.memory.get({ userId: 'bob' }, b.id, { includeDeleted: true })).toBeUndefined();
    expect(await app.storage.memory.get({ userId: 'alice' }, a.id, { includeDeleted: true })).toBeUndefined();
    expect((await bob.get(keep.id))?.content).toBe('bob keeps this');
    const runs = await app.background.runs({ jobId: 'memory:purge' });
    expect(runs.map((r) => r.detail)).toContain('purged 2');
  });

  it('leaves a served tenant to its own longer retention, and refuses a bad unservedRetentionDays', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-purge-'));
    dirs.push(dir);
    let t = T0;
    app = await createApp({ envFileDir: false, env: { MINARA_PERSONALIZATION_REBUILD: 'disabled' }, logger: silentLogger, model: createScriptedModel([]), finance: false, config: { dataDir: dir }, now: () => new Date(t) });
    const longer = createMemoryStore({ storage: app.storage, scope: { userId: 'erin' }, softDeleteRetentionDays: 90, now: () => new Date(t), logger: silentLogger });
    const unserved = createMemoryStore({ storage: app.storage, scope: { userId: 'frank' }, now: () => new Date(t), logger: silentLogger });
    const e = await longer.write({ category: 'lesson', content: 'erin keeps this for 90 days' });
    const f = await unserved.write({ category: 'lesson', content: 'frank keeps this for 30 days' });
    await longer.softDelete(e.id);
    await unserved.softDelete(f.id);
    const background = createAgentBackground({ runtime: app.runtime, storage: app.storage, memoryStores: () => [longer], unservedRetentionDays: 30, heartbeatEveryMs: 0, dreaming: false, now: () => new Date(t) });
    t += 40 * DAY;
    await background.tick();
    await background.idle();
    expect(await app.storage.memory.get({ userId: 'erin' }, e.id, { includeDeleted: true })).toBeDefined();
    expect(await app.storage.memory.get({ userId: 'frank' }, f.id, { includeDeleted: true })).toBeUndefined();
    t += 60 * DAY;
    await background.tick();
    await background.idle();
    expect(await app.storage.memory.get({ userId: 'erin' }, e.id, { includeDeleted: true })).toBeUndefined();
    expect(() => createAgentBackground({ runtime: app!.runtime, storage: app!.storage, unservedRetentionDays: -1 })).toThrow(/unservedRetentionDays must be a non-negative number/);
  });
});
