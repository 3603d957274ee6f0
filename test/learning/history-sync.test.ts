import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventBus, createHistorySync, fillUid, type HistorySource, type MinaraBusEvents, normalizePerpsFill, silentLogger, type Storage } from '@minara/agent';
import { createFinancePack, createMinaraTradingProvider, createSimulatedMarket, type HistoryPerpFill } from '@minara/agent/finance';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';

const engines: ReadonlyArray<{ name: string; make: (now: () => Date) => Storage }> = [
  { name: 'sqlite', make: (now) => createSqliteStorage({ path: ':memory:', logger: silentLogger, now }) },
  { name: 'in-memory', make: (now) => createInMemoryStorage({ now }) },
];
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const S = { userId: 'u1' };

describe('fill uid', () => {
  const base: HistoryPerpFill = { coin: 'BTC', px: '1', sz: '1', side: 'B', time: 1, oid: 7 };
  it('prefers the trade id, then the transaction hash, then a sha1 of the canonical raw JSON', () => {
    expect(fillUid({ ...base, tid: 42, hash: '0xabc' })).toBe('tid:42');
    expect(fillUid({ ...base, hash: '0xabc' })).toBe('hash:0xabc');
    const a = fillUid(base);
    expect(a).toMatch(/^sha1:[0-9a-f]{40}$/);
    // Key order does not change the uid; any field does.
    expect(fillUid({ oid: 7, time: 1, side: 'B', sz: '1', px: '1', coin: 'BTC' })).toBe(a);
    expect(fillUid({ ...base, sz: '2' })).not.toBe(a);
    // An all-zero hash (Hyperliquid's "no hash") falls through to the raw JSON.
    expect(fillUid({ ...base, hash: '0x0000' })).toMatch(/^sha1:/);
  });

  it('normalises numbers given as strings; a malformed one is PROVIDER_ERROR naming the field', () => {
    expect(normalizePerpsFill({ ...base, px: '97000.5', sz: '0.01', fee: '0.4', closedPnl: '1.5' }, { id: 's' }, 'now')).toMatchObject({ price: 97000.5, size: 0.01, fee: 0.4, closedPnl: 1.5, side: 'buy', symbol: 'BTC', oid: '7' });
    expect(() => normalizePerpsFill({ ...base, px: 'abc' }, { id: 's' }, 'now')).toThrow(/px must be a finite number/);
  });
});

describe.each(engines)('the trade-history mirror ($name)', ({ make }) => {
  it('mirrors the paper provider: perp fills and spot activity; replaying the sync inserts zero rows; events only for inserts', async () => {
    const clock = createFakeClock('2026-03-02T12:00:00.000Z');
    const storage = make(clock.now);
    const pack = createFinancePack({ storage, now: clock.now, market: createSimulatedMarket({ seed: 7, now: clock.now }) });
    const p = pack.trading;
    await p.openPerp({ symbol: 'BTC', side: 'long', sizeUsd: 500, leverage: 2, clientOrderId: 'po1' });
    clock.advance(60_000);
    await p.closePerp({ symbol: 'BTC', clientOrderId: 'pc1' });
    await p.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 100, clientOrderId: 'sp1' });
    const bus = createEventBus();
    const events: Array<MinaraBusEvents['perps_fills:recorded'] | MinaraBusEvents['external_spot:recorded']> = [];
    bus.on('perps_fills:recorded', (e) => events.push(e));
    bus.on('external_spot:recorded', (e) => events.push(e));
    const mirror = createHistorySync({ storage, scope: S, source: p, bus, now: clock.now });
    const first = await mirror.sync();
    expect(first).toEqual([
      { source: 'perps_fills', subAccountId: 'paper', fetched: 2, inserted: 2 },
      // The paper provider's perps sub-account (no perp trades of its own).
      { source: 'perps_fills', subAccountId: 'perps-1', fetched: 0, inserted: 0 },
      { source: 'spot_activities', subAccountId: '', fetched: 1, inserted: 1 },
    ]);
    const fills = await storage.learning.listPerpsFills(S);
    expect(fills.map((f) => [f.symbol, f.side, f.dir, f.fillUid])).toEqual([['BTC', 'sell', 'Close Long', 'tid:pc1'], ['BTC', 'buy', 'Open Long', 'tid:po1']]);
    expect((await storage.learning.listExternalSpot(S))[0]).toMatchObject({ txHash: 'paper:sp1', type: 'swap', fromToken: 'USDC', toToken: 'ETH', valueUsd: 100 });
    const second = await mirror.sync();
    expect(second.map((r) => r.inserted)).toEqual([0, 0, 0]);
    expect(events).toEqual([{ userId: 'u1', subAccountId: 'paper', inserted: 2 }, { userId: 'u1', inserted: 1 }]);
    const state = await storage.learning.getSyncState(S, 'perps_fills', 'paper');
    expect(state).toMatchObject({ consecutiveFailures: 0, lastSyncedTsMs: Date.parse('2026-03-02T12:01:00.000Z') });
    await storage.close();
  });

  it('counts failures per (source, sub-account), skips after maxFailures, probes again after the cooldown; siblings are untouched', async () => {
    const clock = createFakeClock('2026-03-02T12:00:00.000Z');
    const storage = make(clock.now);
    let badDown = true;
    let calls = 0;
    const source: HistorySource = {
      listPerpSubAccounts: async () => [{ id: 'good' }, { id: 'bad' }],
      listPerpFills: async ({ subAccountId, sinceMs }) => {
        if (subAccountId === 'bad') {
          calls++;
          if (badDown) throw new Error('502 from upstream');
        }
        return [{ coin: 'BTC', px: 1, sz: 1, side: 'B', time: 1000 + (sinceMs ?? 0), oid: 1, tid: `${subAccountId}-${sinceMs ?? 0}` }];
      },
    };
    const mirror = createHistorySync({ storage, scope: S, source, now: clock.now, maxFailures: 2, failureCooldownMs: 600_000, logger: silentLogger });
    const r1 = await mirror.sync();
    expect(r1.find((r) => r.subAccountId === 'bad')).toMatchObject({ error: '502 from upstream', inserted: 0 });
    expect(r1.find((r) => r.subAccountId === 'good')).toMatchObject({ inserted: 1 });
    await mirror.sync();
    expect(calls).toBe(2);
    const r3 = await mirror.sync();
    expect(r3.find((r) => r.subAccountId === 'bad')!.skipped).toMatch(/2 failures in a row; probing again after 2026-03-02T12:10:00\.000Z/);
    expect(calls).toBe(2);
    expect(await storage.learning.getSyncState(S, 'perps_fills', 'good')).toMatchObject({ consecutiveFailures: 0 });
    expect(await storage.learning.getSyncState(S, 'perps_fills', 'bad')).toMatchObject({ consecutiveFailures: 2, lastError: '502 from upstream' });
    clock.advance(600_000);
    badDown = false;
    const r4 = await mirror.sync();
    expect(calls).toBe(3);
    expect(r4.find((r) => r.subAccountId === 'bad')).toMatchObject({ inserted: 1 });
    expect(await storage.learning.getSyncState(S, 'perps_fills', 'bad')).toMatchObject({ consecutiveFailures: 0 });
    await storage.close();
  });
});

describe('the mirror against the Minara adapter (loopback fixtures)', () => {
  let server: Server;
  let base = '';
  const hits: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://x');
      hits.push(url.pathname + url.search);
      const body = url.pathname === '/v1/perps/sub-accounts' ? fixture('minara-perp-subaccounts.json')
        : url.pathname === '/v1/perps/fills' ? (url.searchParams.get('subAccountId') === 'sub-main' ? fixture('minara-perp-fills.json') : '{"fills":[]}')
        : url.pathname === '/v1/history/spot' ? fixture('minara-spot-history.json') : undefined;
      res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
      res.end(body ?? '{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('keys partial fills of one order apart (tid), falls back to hash and sha1, and replays to zero inserts with the watermark in the query', async () => {
    const storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
    const source = createMinaraTradingProvider({ apiKey: 'k', baseUrl: base, retryBaseMs: 1, maxRetries: 0 });
    const mirror = createHistorySync({ storage, scope: S, source });
    const first = await mirror.sync();
    expect(first).toEqual([
      { source: 'perps_fills', subAccountId: 'sub-main', fetched: 4, inserted: 4 },
      { source: 'perps_fills', subAccountId: 'sub-hedge', fetched: 0, inserted: 0 },
      { source: 'spot_activities', subAccountId: '', fetched: 2, inserted: 2 },
    ]);
    const fills = await storage.learning.listPerpsFills(S, { subAccountId: 'sub-main' });
    expect(fills.map((f) => f.fillUid.split(':')[0])).toEqual(['sha1', 'hash', 'tid', 'tid']);
    expect(fills.filter((f) => f.oid === '9911')).toHaveLength(2);
    expect(fills[3]).toMatchObject({ walletAddress: '0x1111111111111111111111111111111111111111', price: 97000.5, size: 0.01, fee: 0.42, side: 'buy', dir: 'Open Long' });
    const second = await mirror.sync();
    expect(second.map((r) => r.inserted)).toEqual([0, 0, 0]);
    expect(hits).toContain('/v1/perps/fills?subAccountId=sub-main&since=1772460000000');
    expect(hits).toContain('/v1/history/spot?since=1772455000000');
    await storage.close();
  });
});
