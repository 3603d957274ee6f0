/**
 * The `controls` domain's contract (grant owners and caps, grant spend, capability switches, quotas and their
 * counters, session locks), run against every engine beside the main contract.
 */
import type { Storage } from '@minara/agent';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

type Factory = () => Storage | Promise<Storage>;
const DAY = '2026-03-02';

export function runControlsContract(name: string, factory: Factory): void {
  describe(`Storage contract (controls): ${name}`, () => {
    let storage: Storage;
    beforeEach(async () => {
      storage = await factory();
    });
    afterEach(async () => {
      await storage.close();
    });

    it('stores a person\'s grant: user, tools, tool sets, caps, creator; lists by user', async () => {
      const grant = {
        id: 'grt_a', kind: 'stored' as const, toolName: '*', userId: 'alice', tools: ['swap_tokens'], toolSets: ['trade'], sources: ['cron'],
        capPerCallUsd: 50, capPerDayUsd: 200.5, createdAt: '2026-03-02T00:00:00.000Z', expiresAt: '2026-03-09T00:00:00.000Z', createdBy: 'cli',
      };
      await storage.grants.create(grant);
      await storage.grants.create({ id: 'grt_b', kind: 'stored', toolName: 'swap_tokens', userId: 'bob', createdAt: '2026-03-02T00:00:01.000Z' });
      expect(await storage.grants.get('grt_a')).toStrictEqual(grant);
      expect((await storage.grants.list({ userId: 'alice' })).map((g) => g.id)).toEqual(['grt_a']);
      expect((await storage.grants.list({ kind: 'stored' })).map((g) => g.id)).toEqual(['grt_b', 'grt_a']);
      await expect(storage.grants.create({ ...grant, id: 'grt_c', capPerDayUsd: -1 })).rejects.toThrow(/capPerDayUsd/);
      await expect(storage.grants.create({ ...grant, id: 'grt_d', toolSets: [''] })).rejects.toThrow(/toolSets/);
      expect(await storage.grants.get('grt_c')).toBeUndefined();
    });

    it('reserves grant spend under the day cap, refunds, and keeps days apart', async () => {
      expect(await storage.controls.grantSpend('g1', DAY)).toBe(0);
      expect(await storage.controls.reserveGrantSpend({ grantId: 'g1', day: DAY, amountUsd: 60, capUsd: 100 })).toEqual({ reserved: true, spentUsd: 60 });
      expect(await storage.controls.reserveGrantSpend({ grantId: 'g1', day: DAY, amountUsd: 50, capUsd: 100 })).toEqual({ reserved: false, spentUsd: 60 });
      expect(await storage.controls.reserveGrantSpend({ grantId: 'g1', day: DAY, amountUsd: 40, capUsd: 100 })).toEqual({ reserved: true, spentUsd: 100 });
      expect(await storage.controls.reserveGrantSpend({ grantId: 'g1', day: '2026-03-03', amountUsd: 100, capUsd: 100 })).toMatchObject({ reserved: true });
      // A first amount above the cap stores nothing.
      expect(await storage.controls.reserveGrantSpend({ grantId: 'g2', day: DAY, amountUsd: 101, capUsd: 100 })).toEqual({ reserved: false, spentUsd: 0 });
      await storage.controls.refundGrantSpend({ grantId: 'g1', day: DAY, amountUsd: 40 });
      expect(await storage.controls.grantSpend('g1', DAY)).toBe(60);
      // No cap: always reserved.
      expect(await storage.controls.reserveGrantSpend({ grantId: 'g3', day: DAY, amountUsd: 1e6 })).toMatchObject({ reserved: true });
      await expect(storage.controls.reserveGrantSpend({ grantId: 'g1', day: 'today', amountUsd: 1 })).rejects.toThrow(/day/);
      await expect(storage.controls.reserveGrantSpend({ grantId: 'g1', day: DAY, amountUsd: -1 })).rejects.toThrow(/amountUsd/);
    });

    it('concurrent reservations never pass the cap together', async () => {
      const results = await Promise.all(Array.from({ length: 20 }, () => storage.controls.reserveGrantSpend({ grantId: 'race', day: DAY, amountUsd: 10, capUsd: 55 })));
      expect(results.filter((r) => r.reserved)).toHaveLength(5);
      expect(await storage.controls.grantSpend('race', DAY)).toBe(50);
    });

    it('turns tool sets off and on per user', async () => {
      const at = '2026-03-02T10:00:00.000Z';
      expect(await storage.controls.setCapability({ userId: 'alice', toolSet: 'trade', enabled: false, at, reason: 'on holiday', by: 'cli' })).toBe(true);
      expect(await storage.controls.setCapability({ userId: 'alice', toolSet: 'trade', enabled: false, at })).toBe(false);
      await storage.controls.setCapability({ userId: 'bob', toolSet: 'transfer', enabled: false, at });
      expect(await storage.controls.listDisabledCapabilities({ userId: 'alice' })).toEqual([{ userId: 'alice', toolSet: 'trade', disabledAt: at, reason: 'on holiday', by: 'cli' }]);
      expect((await storage.controls.listDisabledCapabilities()).map((s) => `${s.userId}:${s.toolSet}`)).toEqual(['alice:trade', 'bob:transfer']);
      expect(await storage.controls.setCapability({ userId: 'alice', toolSet: 'trade', enabled: true, at })).toBe(true);
      expect(await storage.controls.setCapability({ userId: 'alice', toolSet: 'trade', enabled: true, at })).toBe(false);
      expect(await storage.controls.listDisabledCapabilities({ userId: 'alice' })).toEqual([]);
    });

    it('stores quotas (null means no limit) and counts requests per window atomically', async () => {
      await storage.controls.setQuota({ userId: 'alice', requestsPerMinute: 2, usdPerDay: null, updatedAt: '2026-03-02T10:00:00.000Z' });
      await storage.controls.setQuota({ userId: 'bob', usdPerDay: 1.5, updatedAt: '2026-03-02T10:00:00.000Z' });
      expect(await storage.controls.getQuota('alice')).toEqual({ userId: 'alice', requestsPerMinute: 2, usdPerDay: null, updatedAt: '2026-03-02T10:00:00.000Z' });
      expect(await storage.controls.getQuota('bob')).toEqual({ userId: 'bob', usdPerDay: 1.5, updatedAt: '2026-03-02T10:00:00.000Z' });
      expect(await storage.controls.getQuota('carol')).toBeUndefined();
      expect((await storage.controls.listQuotas()).map((q) => q.userId)).toEqual(['alice', 'bob']);
      await expect(storage.controls.setQuota({ userId: 'x', requestsPerMinute: -1, updatedAt: 'now' })).rejects.toThrow(/requestsPerMinute/);

      const w1 = '2026-03-02T10:00';
      const counted = await Promise.all(Array.from({ length: 5 }, () => storage.controls.countRequest({ key: 'rpm:alice', window: w1, limit: 3 })));
      expect(counted.filter((c) => c.allowed)).toHaveLength(3);
      expect(await storage.controls.requestCount('rpm:alice', w1)).toBe(3);
      expect(await storage.controls.countRequest({ key: 'rpm:alice', window: '2026-03-02T10:01', limit: 3 })).toEqual({ allowed: true, count: 1 });
      expect(await storage.controls.requestCount('rpm:alice', '2026-03-02T10:01')).toBe(1);
    });

    it('locks a session for one owner until its lease ends', async () => {
      const t = (s: number) => new Date(Date.UTC(2026, 2, 2, 10, 0, s)).toISOString();
      expect(await storage.controls.acquireSessionLock({ sessionId: 's1', owner: 'a', now: t(0), leaseUntil: t(30) })).toBe(true);
      expect(await storage.controls.acquireSessionLock({ sessionId: 's1', owner: 'b', now: t(10), leaseUntil: t(40) })).toBe(false);
      expect(await storage.controls.acquireSessionLock({ sessionId: 's1', owner: 'a', now: t(10), leaseUntil: t(40) })).toBe(true);
      expect(await storage.controls.renewSessionLock('s1', 'b', t(50))).toBe(false);
      expect(await storage.controls.renewSessionLock('s1', 'a', t(50))).toBe(true);
      // Expired: another owner takes it over.
      expect(await storage.controls.acquireSessionLock({ sessionId: 's1', owner: 'b', now: t(51), leaseUntil: t(59) })).toBe(true);
      expect(await storage.controls.releaseSessionLock('s1', 'a')).toBe(false);
      expect(await storage.controls.releaseSessionLock('s1', 'b')).toBe(true);
      expect(await storage.controls.acquireSessionLock({ sessionId: 's1', owner: 'c', now: t(52), leaseUntil: t(60) })).toBe(true);
      const race = await Promise.all(['x', 'y', 'z'].map((owner) => storage.controls.acquireSessionLock({ sessionId: 's2', owner, now: t(0), leaseUntil: t(30) })));
      expect(race.filter(Boolean)).toHaveLength(1);
    });

    it('sums usage per user for a day', async () => {
      const base = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, modelId: 'm' };
      await storage.usage.record({ ...base, turnId: 't1', sessionId: 's', userId: 'bob', source: 'user', at: `${DAY}T10:00:00.000Z`, costUsd: 0.5 });
      await storage.usage.record({ ...base, turnId: 't2', sessionId: 's', userId: 'alice', source: 'user', at: `${DAY}T11:00:00.000Z`, costUsd: 0.25 });
      await storage.usage.record({ ...base, turnId: 't3', sessionId: 's', userId: 'alice', source: 'cron', at: `${DAY}T12:00:00.000Z`, costUsd: 1 });
      await storage.usage.record({ ...base, turnId: 't4', sessionId: 's', userId: 'carol', source: 'user', at: '2026-03-03T00:00:00.000Z', costUsd: 9 });
      const all = await storage.usage.byUser({ day: DAY });
      expect(all.map((u) => [u.userId, u.totals.turns, u.totals.costUsd])).toEqual([['alice', 2, 1.25], ['bob', 1, 0.5]]);
      const userTurns = await storage.usage.byUser({ day: DAY, sources: ['user'] });
      expect(userTurns.map((u) => [u.userId, u.totals.costUsd])).toEqual([['alice', 0.25], ['bob', 0.5]]);
      await expect(storage.usage.byUser({ day: 'x' })).rejects.toThrow(/day/);
    });
  });
}
