import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createToolRegistry, MinaraError } from '@minara/agent';
import {
  createCoinGeckoMarket, createFinancePack, createHyperliquidMarket, createMinaraMarket, createMinaraToolFactory, createMinaraTradingProvider,
  createProviderFetch, minaraProvidersFromEnv, parseRetryAfter,
} from '@minara/agent/finance';
import { createInMemoryStorage } from '@minara/agent/testing';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

type Reply = { status?: number; body?: string; headers?: Record<string, string>; delayMs?: number };
interface Hit { method: string; path: string; body: string; headers: IncomingMessage['headers'] }
/** Recorded fixtures served on 127.0.0.1: each route answers from a script (the last entry repeats). */
const routes = new Map<string, Reply[]>();
const hits: Hit[] = [];
let server: Server;
let base = '';

function route(key: string, ...replies: Reply[]) {
  routes.set(key, replies);
}

beforeAll(async () => {
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      let key = `${req.method} ${url.pathname}`;
      if (url.pathname === '/info') key += ` ${(JSON.parse(body) as { type: string }).type}`;
      hits.push({ method: req.method ?? '', path: url.pathname + url.search, body, headers: req.headers });
      const script = routes.get(key);
      const reply = script ? (script.length > 1 ? script.shift()! : script[0]!) : { status: 404, body: '{"error":"no route"}' };
      const send = () => {
        if (res.destroyed) return;
        res.writeHead(reply.status ?? 200, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body ?? '');
      };
      if (reply.delayMs) setTimeout(send, reply.delayMs);
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));
beforeEach(() => {
  routes.clear();
  hits.length = 0;
});

const fast = { retryBaseMs: 5, timeoutMs: 300, maxRetries: 2 } as const;

describe('provider fetch helper', () => {
  it('retries 429 honouring Retry-After, then succeeds', async () => {
    route('GET /x', { status: 429, headers: { 'retry-after': '0' }, body: '{}' }, { status: 200, body: '{"ok":1}' });
    const http = createProviderFetch({ provider: 't', baseUrl: base, ...fast });
    expect(await http.json('/x')).toEqual({ ok: 1 });
    expect(hits).toHaveLength(2);
  });

  it('a 429 asking to wait too long fails at once as PROVIDER_RATE_LIMITED (retryable)', async () => {
    route('GET /x', { status: 429, headers: { 'retry-after': '120' }, body: '{}' });
    const http = createProviderFetch({ provider: 't', baseUrl: base, ...fast });
    await expect(http.json('/x')).rejects.toMatchObject({ code: 'PROVIDER_RATE_LIMITED', retryable: true, status: 429 });
    expect(hits).toHaveLength(1);
  });

  it('bounded retries on 5xx end in PROVIDER_ERROR; persistent 429 ends in PROVIDER_RATE_LIMITED', async () => {
    route('GET /x', { status: 503, body: 'down' });
    route('GET /y', { status: 429, body: '{}' });
    const http = createProviderFetch({ provider: 't', baseUrl: base, ...fast });
    await expect(http.json('/x')).rejects.toMatchObject({ code: 'PROVIDER_ERROR', attempts: 3, retryable: true });
    expect(hits).toHaveLength(3);
    await expect(http.json('/y')).rejects.toMatchObject({ code: 'PROVIDER_RATE_LIMITED' });
    expect(hits).toHaveLength(6);
  });

  it('times out each attempt and fails with PROVIDER_TIMEOUT after the retries', async () => {
    route('GET /slow', { status: 200, body: '{}', delayMs: 1_000 });
    const http = createProviderFetch({ provider: 't', baseUrl: base, retryBaseMs: 1, timeoutMs: 80, maxRetries: 1 });
    const t0 = Date.now();
    await expect(http.json('/slow')).rejects.toMatchObject({ code: 'PROVIDER_TIMEOUT' });
    expect(Date.now() - t0).toBeLessThan(900);
    expect(hits).toHaveLength(2);
  });

  it('malformed JSON and other 4xx fail at once with PROVIDER_ERROR', async () => {
    route('GET /bad', { status: 200, body: '{"price": 97' });
    route('GET /nope', { status: 401, body: '{"error":"bad key"}' });
    const http = createProviderFetch({ provider: 't', baseUrl: base, ...fast });
    await expect(http.json('/bad')).rejects.toMatchObject({ code: 'PROVIDER_ERROR', message: expect.stringContaining('malformed JSON') });
    await expect(http.json('/nope')).rejects.toMatchObject({ code: 'PROVIDER_ERROR', status: 401, retryable: false });
    expect(hits).toHaveLength(2);
  });

  it('parses Retry-After seconds and dates', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('real adapters against recorded fixtures', () => {
  it('CoinGecko: price from the fixture; a missing or zero price is an error, never a number', async () => {
    route('GET /api/v3/simple/price', { body: fixture('coingecko-simple-price.json') }, { body: '{"bitcoin":{"usd":0}}' }, { body: '{}' });
    const cg = createCoinGeckoMarket({ baseUrl: base, ...fast });
    expect(await cg.getPrice('btc')).toMatchObject({ symbol: 'BTC', priceUsd: 97250.12, change24hPct: 1.8342, simulated: false, source: 'coingecko' });
    expect(hits[0]!.path).toContain('ids=bitcoin');
    await expect(cg.getPrice('BTC')).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
    await expect(cg.getPrice('BTC')).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
    await expect(cg.getPrice('NOPE')).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
  });

  it('Hyperliquid: perp marks from allMids and candles from candleSnapshot', async () => {
    route('POST /info allMids', { body: fixture('hyperliquid-allMids.json') });
    route('POST /info candleSnapshot', { body: fixture('hyperliquid-candles.json') });
    const hl = createHyperliquidMarket({ baseUrl: base, ...fast });
    expect(await hl.getPerpMark!('eth')).toMatchObject({ symbol: 'ETH', priceUsd: 3498.35, source: 'hyperliquid', simulated: false });
    await expect(hl.getPerpMark!('PEPE')).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
    const candles = await hl.getOhlcv!('BTC', { interval: '1h', limit: 2 });
    expect(candles.candles).toHaveLength(2);
    expect(candles.candles[0]).toMatchObject({ o: 97100, c: 97231, v: 812.33 });
    expect(JSON.parse(hits.at(-1)!.body)).toMatchObject({ type: 'candleSnapshot', req: { coin: 'BTC', interval: '1h' } });
  });

  it('Minara: market and trading through the API, with bearer key and idempotency key', async () => {
    route('GET /v1/market/price', { body: fixture('minara-price.json') });
    route('GET /v1/market/token', { body: fixture('minara-token.json') });
    route('POST /v1/spot/quote', { body: fixture('minara-spot-quote.json') });
    route('POST /v1/spot/orders', { status: 502, body: 'bad gateway' }, { body: fixture('minara-order.json') });
    route('GET /v1/portfolio', { body: fixture('minara-portfolio.json') });
    const o = { apiKey: 'mk_test_123', baseUrl: base, ...fast };
    const market = createMinaraMarket(o);
    const trading = createMinaraTradingProvider(o);
    expect(await market.getPrice('ETH')).toMatchObject({ priceUsd: 3499.12, simulated: false, source: 'minara' });
    expect(hits[0]!.headers.authorization).toBe('Bearer mk_test_123');
    expect(await market.lookupToken!({ symbol: 'ETH' })).toMatchObject({ verified: true, address: 'native' });
    const q = await trading.quoteSpot({ from: 'USDC', to: 'ETH', amountUsd: 100 });
    expect(q).toMatchObject({ priceOut: 3499.12, slippageBps: 3, simulated: false });
    const r = await trading.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 100, clientOrderId: 'co_1' });
    expect(r).toMatchObject({ orderId: 'ord_8f2k', status: 'filled', fill: { feeUsd: 0.1 } });
    const orders = hits.filter((h) => h.path === '/v1/spot/orders');
    expect(orders).toHaveLength(2); // one 502, one retry with the same idempotency key
    expect(orders.map((h) => h.headers['idempotency-key'])).toEqual(['co_1', 'co_1']);
    expect((await trading.getPortfolio()).holdings).toHaveLength(2);
  });

  it('Minara: a malformed body is PROVIDER_ERROR naming the field, surfaced to the model as an error envelope', async () => {
    route('GET /v1/market/price', { body: '{"symbol":"ETH","price":"n/a"}' });
    const o = { apiKey: 'k', baseUrl: base, ...fast };
    const storage = createInMemoryStorage();
    const pack = createFinancePack({ storage, market: createMinaraMarket(o) });
    const registry = createToolRegistry({ tools: pack.tools, hooks: pack.hooks, storage });
    const r = JSON.parse(await registry.dispatch('get_price', { symbol: 'ETH' }));
    expect(r).toMatchObject({ ok: false, code: 'PROVIDER_ERROR' });
    expect(r.error).toContain('no valid price for ETH');
  });

  it('a tool factory whose key is missing contributes nothing', () => {
    expect(createMinaraToolFactory()({})).toEqual([]);
    expect(minaraProvidersFromEnv({})).toEqual({});
    const tools = createMinaraToolFactory()({ MINARA_API_KEY: 'k', MINARA_API_BASE_URL: base });
    expect(tools.map((t) => t.name)).toContain('get_price');
    expect(tools.every((t) => !t.isFundMoving)).toBe(true);
    expect(MinaraError.isInstance(new Error('x'))).toBe(false);
  });
});
