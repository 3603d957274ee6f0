import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Storage } from '@minara/agent';
import { createPaperTradingProvider, createSimulatedMarket, type TradingProvider } from '@minara/agent/finance';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';

const dir = mkdtempSync(path.join(tmpdir(), 'minara-paper-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Seeded PRNG for the property test (mulberry32). */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('simulated market', () => {
  it('is deterministic for a seed and a clock, differs across seeds, and labels every result simulated', async () => {
    const clock = createFakeClock('2026-03-02T12:00:00Z');
    const a = createSimulatedMarket({ seed: 3, now: clock.now });
    const b = createSimulatedMarket({ seed: 3, now: clock.now });
    const c = createSimulatedMarket({ seed: 4, now: clock.now });
    expect((await a.getPrice('ETH')).priceUsd).toBe((await b.getPrice('ETH')).priceUsd);
    expect((await a.getPrice('ETH')).priceUsd).not.toBe((await c.getPrice('ETH')).priceUsd);
    expect(await a.getOhlcv!('BTC', { limit: 5 })).toEqual(await b.getOhlcv!('BTC', { limit: 5 }));
    expect((await a.getPrice('USDC')).priceUsd).toBe(1);
    clock.advance(3600_000);
    expect((await a.getPrice('ETH')).priceUsd).toBe((await b.getPrice('ETH')).priceUsd);
    for (const r of [await a.getPrice('BTC'), await a.getFearGreed!(), ...(await a.getTrending!()), ...(await a.searchTokens!('usd'))]) expect(r.simulated).toBe(true);
    await expect(a.getPrice('NOPE')).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
  });
});

describe('paper provider', () => {
  it('keeps its books in storage: a restart and a second process see the same balances and fills', async () => {
    const file = path.join(dir, 'restart.db');
    const clock = createFakeClock('2026-03-02T12:00:00Z');
    const market = createSimulatedMarket({ seed: 9, now: clock.now });
    const s1 = createSqliteStorage({ path: file, vector: false });
    const p1 = createPaperTradingProvider({ trading: s1.trading, market, now: clock.now, seedBalances: { USDC: 5_000 } });
    await p1.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 1_000, clientOrderId: 'o1' });
    const s2 = createSqliteStorage({ path: file, vector: false });
    const p2 = createPaperTradingProvider({ trading: s2.trading, market, now: clock.now, seedBalances: { USDC: 999_999 } });
    const port1 = await p1.getPortfolio();
    const port2 = await p2.getPortfolio();
    expect(port2.holdings).toEqual(port1.holdings);
    expect(port2.holdings.find((h) => h.asset === 'USDC')!.amount).toBeCloseTo(4_000, 6);
    // idempotent by client order id, across processes
    const again = await p2.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 1_000, clientOrderId: 'o1' });
    expect(again.status).toBe('duplicate');
    expect((await p1.getPortfolio()).holdings).toEqual(port1.holdings);
    await s1.close();
    const s3 = createSqliteStorage({ path: file, vector: false });
    const p3 = createPaperTradingProvider({ trading: s3.trading, market, now: clock.now });
    expect((await p3.getPortfolio()).holdings).toEqual(port1.holdings);
    expect(await s3.schemaVersions()).toMatchObject({ trading: 1 });
    await s2.close();
    await s3.close();
  });

  it('refuses orders that would overdraw, leaving the books unchanged', async () => {
    const storage = createInMemoryStorage();
    const p = createPaperTradingProvider({ trading: storage.trading, market: createSimulatedMarket({ seed: 1 }) });
    await expect(p.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 20_000, clientOrderId: 'big' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(p.executeTransfer({ asset: 'ETH', amount: 1, to: '0xabc', kind: 'transfer', clientOrderId: 't' })).rejects.toThrow(/insufficient ETH/);
    await expect(p.closePerp({ symbol: 'BTC', clientOrderId: 'c' })).rejects.toThrow(/no open BTC/);
    expect(await storage.trading.listBalances('paper')).toMatchObject([{ asset: 'USDC', amount: 10_000 }]);
    expect(await storage.trading.getFill('paper', 'big')).toBeUndefined();
  });

  for (const engine of ['memory', 'sqlite'] as const) {
    it(`accounting invariants hold under random order sequences (${engine})`, async () => {
      for (let seed = 1; seed <= (engine === 'memory' ? 12 : 4); seed++) {
        const rand = rng(seed);
        const clock = createFakeClock('2026-03-02T00:00:00Z');
        const market = createSimulatedMarket({ seed, now: clock.now });
        const storage: Storage = engine === 'memory' ? createInMemoryStorage({ now: clock.now }) : createSqliteStorage({ path: ':memory:', vector: false });
        const p = createPaperTradingProvider({ trading: storage.trading, market, now: clock.now, seedBalances: { USDC: 10_000 } });
        const assets = ['ETH', 'BTC', 'SOL', 'PEPE', 'LINK'];
        const perps = ['BTC', 'ETH', 'SOL'];
        const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
        const ids: string[] = [];
        for (let i = 0; i < 60; i++) {
          clock.advance(Math.floor(rand() * 4 * 3600_000));
          if (rand() < 0.1) {
            const a = pick(assets);
            market.setPrice(a, market.markAt(a, clock.now()) * (0.7 + rand() * 0.6));
          }
          const port = await p.getPortfolio();
          const held = port.holdings.filter((h) => !h.stable && h.amount > 0);
          const id = rand() < 0.15 && ids.length > 0 ? pick(ids) : `o${seed}-${i}`; // replays
          ids.push(id);
          const op = rand();
          const run = async (fn: (tp: TradingProvider) => Promise<unknown>) => {
            try {
              await fn(p);
            } catch (e) {
              expect((e as { code?: string }).code, String(e)).toMatch(/INVALID_ARGUMENT|NOT_FOUND/);
            }
          };
          if (op < 0.3) await run((tp) => tp.executeSpot({ from: 'USDC', to: pick(assets), amountUsd: rand() * 3000, clientOrderId: id }));
          else if (op < 0.5 && held.length > 0) {
            const h = pick(held);
            await run((tp) => tp.executeSpot({ from: h.asset, to: rand() < 0.7 ? 'USDC' : pick(assets), amount: h.amount * (rand() < 0.3 ? 1.2 : rand()), clientOrderId: id }));
          } else if (op < 0.7) await run((tp) => tp.openPerp({ symbol: pick(perps), side: rand() < 0.5 ? 'long' : 'short', sizeUsd: rand() * 4000, leverage: 1 + Math.floor(rand() * 10), clientOrderId: id }));
          else if (op < 0.85) await run((tp) => tp.closePerp({ symbol: pick(perps), fraction: rand() < 0.5 ? 1 : rand(), clientOrderId: id }));
          else await run((tp) => tp.executeTransfer({ asset: rand() < 0.5 ? 'USDC' : pick(assets), amount: rand() * 800, to: '0xabc', kind: 'transfer', clientOrderId: id }));

          // Invariants after every order.
          const balances = await storage.trading.listBalances('paper');
          for (const b of balances) {
            expect(b.amount).toBeGreaterThanOrEqual(0);
            expect(b.costBasisUsd).toBeGreaterThanOrEqual(0);
          }
          const after = await p.getPortfolio();
          const pnl = await p.getPnl();
          const totals = await storage.trading.totals('paper');
          const fills = await storage.trading.listFills('paper', { limit: 10_000 });
          expect(new Set(fills.map((f) => f.id)).size).toBe(fills.length);
          expect(fills.reduce((a, f) => a + f.realizedPnlUsd, 0)).toBeCloseTo(totals.realizedUsd, 6);
          const daily = await storage.trading.listDailyPnl('paper', { limit: 1000 });
          expect(daily.reduce((a, d) => a + d.realizedUsd, 0)).toBeCloseTo(totals.realizedUsd, 6);
          // equity at marks = contributions + realised + unrealised
          const rhs = pnl.netContributionsUsd + pnl.realizedUsd + pnl.unrealizedUsd;
          expect(Math.abs(after.totalValueUsd - rhs)).toBeLessThan(1e-6 * Math.max(1, Math.abs(rhs)));
          for (const pos of after.positions) expect(pos.unrealizedPnlUsd).toBeGreaterThanOrEqual(-pos.marginUsd - 1e-9);
        }
        expect((await storage.trading.totals('paper')).fills).toBeGreaterThan(15);
        await storage.close();
      }
    });
  }
});
