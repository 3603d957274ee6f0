/**
 * Shadow mode: market data and previews from the live adapter, orders filled in a paper book of their own on the
 * live market and recorded as shadow, never sent to the venue; `shadow_report` / `minara shadow report` /
 * `GET /v1/finance/shadow` compare what the agent would have done with what the market did. On the simulated
 * market with a fake clock, and with the Minara adapter against recorded fixtures on 127.0.0.1.
 */
import { readFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp, createToolCallContext, createToolRegistry, silentLogger, type Storage } from '@minara/agent';
import {
  createFinancePack, createMinaraMarket, createMinaraTradingProvider, createPaperTradingProvider, createShadowReport, createShadowTradingProvider, createSimulatedMarket,
  type TradingProvider,
} from '@minara/agent/finance';
import { createGateway } from '@minara/agent/gateway';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { formatShadowReport, runShadowCommand } from '../../cli/shadow-command';

const T0 = Date.parse('2026-11-02T14:00:00.000Z');

/** A stand-in for the venue: quotes marked LIVE, and any order placed on it recorded (none may be). */
function venue(storage: Storage, now: () => Date, market: ReturnType<typeof createSimulatedMarket>) {
  const inner = createPaperTradingProvider({ trading: storage.trading, market, accountId: 'venue', now });
  const orders: string[] = [];
  const provider: TradingProvider = {
    ...inner,
    name: 'venue',
    simulated: false,
    quoteSpot: async (o, opt) => ({ ...(await inner.quoteSpot(o, opt)), route: 'LIVE venue route', source: 'venue', simulated: false }),
    executeSpot: async (o) => { orders.push(`spot ${o.clientOrderId}`); throw new Error('a shadow order reached the venue'); },
    executeTransfer: async (o) => { orders.push(`transfer ${o.clientOrderId}`); throw new Error('a shadow order reached the venue'); },
    openPerp: async (o) => { orders.push(`perp ${o.clientOrderId}`); throw new Error('a shadow order reached the venue'); },
    closePerp: async (o) => { orders.push(`close ${o.clientOrderId}`); throw new Error('a shadow order reached the venue'); },
  };
  return { provider, orders };
}

async function shadowSetup() {
  let t = T0;
  const now = () => new Date(t);
  const storage = createInMemoryStorage();
  const market = createSimulatedMarket({ seed: 7, now });
  const live = venue(storage, now, market);
  const pack = createFinancePack({ storage, market, provider: live.provider, tradingMode: 'shadow', now, autopilot: false });
  const registry = pack.attach(createToolRegistry({ tools: pack.tools, hooks: pack.hooks, storage, now }));
  await registry.grants.create({ toolName: 'buy_token', sources: ['cron'] });
  await registry.grants.create({ toolName: 'sell_token', sources: ['cron'] });
  const context = createToolCallContext({ sessionId: 'shadow-s', source: 'cron', userId: 'alice', traceId: 't_shadow' });
  const call = async (tool: string, input: Record<string, unknown>) =>
    JSON.parse(await registry.dispatch(tool, input, { context, toolCallId: `c${t}` })) as { ok: boolean; data?: Record<string, unknown>; code?: string; error?: string };
  return { storage, market, pack, registry, call, live, now, advance: (ms: number) => void (t += ms) };
}

describe('shadow mode on the simulated market with a fake clock', () => {
  it('previews come from the live adapter, orders fill in the shadow book, nothing reaches the venue, and the audit row says shadow', async () => {
    const s = await shadowSetup();
    expect(s.pack.tradingMode).toBe('shadow');
    const preview = await s.call('buy_token', { symbol: 'ETH', amountUsd: 100, intent: 'buy 100 USD of ETH' });
    expect(preview.ok).toBe(true);
    expect(JSON.stringify(preview.data)).toContain('LIVE venue route');
    const bought = await s.call('buy_token', { symbol: 'ETH', amountUsd: 100, intent: 'buy 100 USD of ETH', confirm: true });
    expect(bought).toMatchObject({ ok: true, data: { executed: true, status: 'filled', source: 'shadow', simulated: true, shadow: true } });
    expect(s.live.orders).toEqual([]);
    expect((await s.storage.trading.listFills('shadow')).filter((f) => f.kind === 'spot')).toHaveLength(1);
    expect(await s.storage.trading.listFills('paper')).toEqual([]);
    const portfolio = await s.call('get_portfolio', {});
    expect(portfolio.data).toMatchObject({ source: 'shadow', simulated: true });
    expect(JSON.stringify(portfolio.data)).toContain('ETH');
    const [row] = await s.storage.audit.query({ toolName: 'buy_token', decision: 'allowed' });
    expect(row!.outcome).toMatchObject({ status: 'filled', shadow: true, simulated: true, provider: 'shadow', orderSide: 'buy', fill: { symbol: 'ETH', notionalUsd: 100 } });
  });

  it('the report marks each shadow fill to the current price and compares the book with holding', async () => {
    const s = await shadowSetup();
    expect((await s.call('buy_token', { symbol: 'ETH', amountUsd: 1000, intent: 'buy 1000 USD of ETH', confirm: true })).ok).toBe(true);
    s.advance(6 * 3_600_000);
    expect((await s.call('sell_token', { symbol: 'ETH', amountUsd: 400, intent: 'sell 400 USD of ETH', confirm: true })).ok).toBe(true);
    s.advance(2 * 86_400_000);
    const report = await s.pack.shadowReport!();
    const eth = (await s.market.getPrice('ETH')).priceUsd;
    expect(report.fills.map((f) => `${f.side} ${f.symbol}`)).toEqual(['buy ETH', 'sell ETH']);
    const [buy, sell] = report.fills;
    expect(buy!.currentPriceUsd).toBe(eth);
    expect(buy!.markedPnlUsd).toBeCloseTo(buy!.quantity * eth - buy!.notionalUsd, 6);
    expect(sell!.markedPnlUsd).toBeCloseTo(sell!.quantity * sell!.priceUsd - sell!.quantity * eth, 6);
    const book = await s.pack.trading.getPortfolio();
    expect(report.totals).toMatchObject({ fills: 2, holdValueUsd: 10_000, contributionsUsd: 10_000, agentValueUsd: book.totalValueUsd });
    expect(report.totals.edgeUsd).toBeCloseTo(book.totalValueUsd - 10_000, 6);
    expect(report.totals.markedPnlUsd).toBeCloseTo(buy!.markedPnlUsd! + sell!.markedPnlUsd!, 6);
    expect(report.byAsset).toEqual([expect.objectContaining({ symbol: 'ETH', fills: 2, currentPriceUsd: eth })]);
    // Only fills since a time are listed; the book totals stay the whole book's.
    const later = await s.pack.shadowReport!({ since: new Date(T0 + 3_600_000).toISOString() });
    expect(later.fills.map((f) => f.side)).toEqual(['sell']);
    await expect(s.pack.shadowReport!({ since: 'last week' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });

    // The same report through the tool, the CLI and the gateway.
    const tool = await s.call('shadow_report', {});
    expect(tool.data).toMatchObject({ accountId: 'shadow', totals: { fills: 2 } });
    let out = '';
    const app = { finance: s.pack } as never;
    expect(await runShadowCommand({}, ['report'], { app, write: (x) => void (out += x) })).toBe(0);
    expect(out).toBe(formatShadowReport(await s.pack.shadowReport!()).replace(/at \S+/, `at ${/at (\S+)/.exec(out)![1]}`));
    expect(out).toMatch(/buy\s+[\d.]+ ETH @ \$[\d,.]+ +\(\$1,000\.00, fee \$[\d.]+\) +now \$[\d,.]+ +marked [+-]\$[\d,.]+/);
    expect(out).toMatch(/holding its opening balances would be \$10,000\.00: (ahead|behind) by \$[\d,.]+\./);
    const gateway = createGateway({ runtime: { run: () => { throw new Error('no turns'); } } as never, storage: s.storage, tools: s.registry, logger: silentLogger, now: s.now });
    const res = await gateway.fetch(new Request('http://127.0.0.1/v1/finance/shadow?since=7d'));
    expect(res.status).toBe(200);
    expect(((await res.json()) as { report: { totals: { fills: number } } }).report.totals.fills).toBe(2);
    expect((await gateway.fetch(new Request('http://127.0.0.1/v1/finance/shadow?since=soon'))).status).toBe(400);
  });

  it('the provider and the report work on their own (createShadowTradingProvider, createShadowReport)', async () => {
    const storage = createInMemoryStorage();
    const now = () => new Date(T0);
    const market = createSimulatedMarket({ seed: 3, now });
    const live = venue(storage, now, market);
    const shadow = createShadowTradingProvider({ live: live.provider, market, trading: storage.trading, seedBalances: { USDC: 500 }, now });
    expect(shadow).toMatchObject({ name: 'shadow', simulated: true, accountId: 'shadow' });
    expect((await shadow.quoteSpot({ from: 'USDC', to: 'BTC', amountUsd: 50 })).route).toBe('LIVE venue route');
    const filled = await shadow.executeSpot({ from: 'USDC', to: 'BTC', amountUsd: 50, clientOrderId: 'co_x' });
    expect(filled).toMatchObject({ status: 'filled', source: 'shadow', shadow: true });
    expect((await shadow.executeSpot({ from: 'USDC', to: 'BTC', amountUsd: 50, clientOrderId: 'co_x' })).status).toBe('duplicate');
    expect(live.orders).toEqual([]);
    const report = await createShadowReport({ trading: storage.trading, provider: shadow, market, now });
    expect(report.totals).toMatchObject({ fills: 1, holdValueUsd: 500, contributionsUsd: 500 });
  });

  it('refuses a shadow pack with a live provider but not its market, naming the field; without a provider it shadows the simulated market', async () => {
    const storage = createInMemoryStorage();
    const offline = createFinancePack({ storage, tradingMode: 'shadow' });
    expect(offline.tradingMode).toBe('shadow');
    expect(offline.shadowMarket).toBe('simulated');
    expect(offline.trading.name).toBe('shadow');
    const filled = await offline.trading.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 50, clientOrderId: 'sim_1' });
    expect(filled).toMatchObject({ status: 'filled', source: 'shadow', shadow: true, simulated: true });
    const report = await offline.shadowReport!();
    expect(report.market).toBe('simulated');
    expect(report.totals.fills).toBe(1);
    expect(() => createFinancePack({ storage, tradingMode: 'live' })).toThrow(/tradingMode 'live' needs the live adapter/);
    const live = createPaperTradingProvider({ trading: storage.trading, market: createSimulatedMarket({ seed: 1 }) });
    expect(() => createFinancePack({ storage, provider: live, tradingMode: 'shadow' })).toThrow(/needs its market/);
    expect(() => createFinancePack({ storage, tradingMode: 'sideways' as never })).toThrow(/tradingMode must be 'paper', 'live' or 'shadow'/);
    expect(createFinancePack({ storage }).shadowReport).toBeUndefined();
  });
});

// ── The live adapter: the Minara API recorded, served on 127.0.0.1 ──────────────────────────────────────────
const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
let server: Server;
let base = '';
const hits: string[] = [];
beforeAll(async () => {
  const replies: Record<string, string> = {
    'GET /v1/market/price': fixture('minara-price.json'),
    'GET /v1/market/token': fixture('minara-token.json'),
    'POST /v1/spot/quote': fixture('minara-spot-quote.json'),
    'POST /v1/spot/orders': fixture('minara-order.json'),
    'GET /v1/portfolio': fixture('minara-portfolio.json'),
  };
  server = createServer((req: IncomingMessage, res) => {
    req.resume();
    req.on('end', () => {
      const key = `${req.method} ${new URL(req.url ?? '/', 'http://127.0.0.1').pathname}`;
      hits.push(key);
      const body = replies[key];
      res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/json' });
      res.end(body ?? '{"error":"no route"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('shadow mode with the Minara adapter (recorded fixtures on 127.0.0.1)', () => {
  it('quotes and prices come from the API; the order fills in the shadow book and never reaches /v1/spot/orders', async () => {
    hits.length = 0;
    const o = { apiKey: 'mk_test_123', baseUrl: base, timeoutMs: 2_000, maxRetries: 0 };
    const storage = createInMemoryStorage();
    const now = () => new Date(T0);
    const pack = createFinancePack({ storage, market: createMinaraMarket(o), provider: createMinaraTradingProvider(o), tradingMode: 'shadow', now, autopilot: false });
    const registry = pack.attach(createToolRegistry({ tools: pack.tools, hooks: pack.hooks, storage, now }));
    await registry.grants.create({ toolName: 'buy_token', sources: ['cron'] });
    const context = createToolCallContext({ sessionId: 's', source: 'cron', userId: 'alice' });
    const preview = JSON.parse(await registry.dispatch('buy_token', { symbol: 'ETH', amountUsd: 100, intent: 'buy 100 USD of ETH' }, { context })) as { ok: boolean; data: Record<string, unknown> };
    expect(preview.ok).toBe(true);
    expect(JSON.stringify(preview.data)).toContain('uniswap-v3');
    expect(hits).toContain('POST /v1/spot/quote');
    const done = JSON.parse(await registry.dispatch('buy_token', { symbol: 'ETH', amountUsd: 100, intent: 'buy 100 USD of ETH', confirm: true }, { context })) as { ok: boolean; data: { fill: { price: number }; shadow: boolean } };
    expect(done).toMatchObject({ ok: true, data: { shadow: true } });
    // Priced by the live market (3499.12) plus the paper engine's spread and fee, not the venue's fill (3507.5).
    expect(done.data.fill.price).toBeGreaterThan(3499.12);
    expect(done.data.fill.price).toBeLessThan(3499.12 * 1.01);
    expect(hits).not.toContain('POST /v1/spot/orders');
    const report = await pack.shadowReport!();
    expect(report.fills[0]).toMatchObject({ symbol: 'ETH', side: 'buy', currentPriceUsd: 3499.12 });
    expect(report.totals.holdValueUsd).toBe(10_000);
  });

  it('createApp: MINARA_TRADING_MODE=shadow with MINARA_API_KEY gives a shadow agent; without the key it shadows the simulated market, labelled; a bad mode is refused naming the variable', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-shadow-app-'));
    dirs.push(dir);
    const base2 = { envFileDir: false as const, logger: silentLogger, config: { dataDir: dir } };
    const app = await createApp({ ...base2, env: { MINARA_TRADING_MODE: 'shadow', MINARA_API_KEY: 'mk_test_123', MINARA_API_BASE_URL: base } });
    try {
      expect(app.finance?.tradingMode).toBe('shadow');
      expect(app.tools.has('shadow_report')).toBe(true);
      expect(app.finance?.trading.name).toBe('shadow');
    } finally {
      await app.close();
    }
    // Without the key: shadow mode against the simulated market, offline, said in the one warning and in every report.
    const nokey = await createApp({ ...base2, env: { MINARA_TRADING_MODE: 'shadow' } });
    try {
      expect(nokey.finance?.tradingMode).toBe('shadow');
      expect(nokey.finance?.shadowMarket).toBe('simulated');
      expect(nokey.disabledFeatures).toEqual([expect.objectContaining({ feature: 'shadow-trading', setting: 'MINARA_TRADING_MODE=shadow', message: expect.stringContaining('SIMULATED market') })]);
      let out = '';
      expect(await runShadowCommand({}, ['report'], { app: nokey, write: (x) => void (out += x) })).toBe(0);
      expect(out).toContain('SIMULATED MARKET: offline, generated prices');
    } finally {
      await nokey.close();
    }
    const offline = await createApp({ ...base2, env: {}, finance: { tradingMode: 'shadow' } });
    expect(offline.finance?.shadowMarket).toBe('simulated');
    await offline.close();
    await expect(createApp({ ...base2, env: {}, finance: { tradingMode: 'live' } })).rejects.toMatchObject({ message: expect.stringContaining("tradingMode 'live' needs the live adapter") });
    await expect(createApp({ ...base2, env: { MINARA_TRADING_MODE: 'yolo' } })).rejects.toMatchObject({ message: expect.stringContaining('MINARA_TRADING_MODE: expected paper, live or shadow') });
    const paper = await createApp({ ...base2, env: {} });
    try {
      expect(paper.finance?.tradingMode).toBe('paper');
      let err = '';
      expect(await runShadowCommand({}, ['report'], { app: paper, writeErr: (x) => void (err += x) })).toBe(1);
      expect(err).toContain('not in shadow mode (it trades paper)');
    } finally {
      await paper.close();
    }
  });
});
