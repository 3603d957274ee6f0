/**
 * Circuit breakers: per user, defaults on, measured from the fills and failures the audit trail records; a trip
 * halts that user's autonomous fund-moving calls at dispatch (in this process and another one on the same
 * database), is an audit row and a delivered notice, and only a person resets it (CLI, HTTP with the decide
 * capability, SDK).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import {
  checkBreakerLimits, createApp, createCircuitBreakers, createToolCallContext, createToolRegistry, DEFAULT_BREAKER_LIMITS, defineTool, judgeBreaker, listDeliveries,
  measureBreakerRows, PermissionTier, silentLogger, type AuditEntry, type Storage,
} from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runBreakersCommand } from '../../cli/breakers-command';
import { runFixture } from '../support/run-fixture';
import { pgliteStorage } from '../postgres/support';

const T0 = Date.parse('2026-11-02T10:00:00.000Z');
const dirs: string[] = [];
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A broker whose fills realise the P&L the call asks for (so a test decides wins and losses), and one that fails. */
function brokerTools() {
  const sell = defineTool({
    name: 'broker_sell', toolSet: 'trade', description: 'Sell through my broker',
    inputSchema: z.object({ symbol: z.string(), usd: z.number().positive(), pnl: z.number() }),
    permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
    orderFacts: ({ symbol, usd }) => ({ notionalUsd: usd, asset: symbol, side: 'sell' }),
    preview: (i) => ({ preview: true, ...i }),
    execute: ({ symbol, usd, pnl }) => ({ orderId: `o_${Math.random().toString(36).slice(2)}`, status: 'filled', fill: { symbol, side: 'sell', quantity: 1, price: usd, notionalUsd: usd, feeUsd: 0.1, realizedPnlUsd: pnl } }),
  });
  const buy = defineTool({
    name: 'broker_buy', toolSet: 'trade', description: 'Buy through my broker',
    inputSchema: z.object({ symbol: z.string(), usd: z.number().positive(), fail: z.boolean().optional() }),
    permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
    orderFacts: ({ symbol, usd }) => ({ notionalUsd: usd, asset: symbol, side: 'buy' }),
    preview: (i) => ({ preview: true, ...i }),
    execute: ({ symbol, usd, fail }) => {
      if (fail) throw new Error('venue rejected the order');
      return { orderId: 'b1', status: 'filled', fill: { symbol, side: 'buy', quantity: 1, price: usd, notionalUsd: usd, feeUsd: 0.1, realizedPnlUsd: -0.1 } };
    },
  });
  return [sell, buy];
}

async function setup(options: { storage?: Storage; equity?: () => Promise<number> } = {}) {
  const storage = options.storage ?? createInMemoryStorage();
  let t = T0;
  const now = () => new Date(t);
  const breakers = createCircuitBreakers({ storage, now, logger: silentLogger, ...(options.equity ? { equity: options.equity } : {}) });
  const registry = createToolRegistry({ tools: brokerTools(), storage, now, breakers });
  await registry.grants.create({ toolName: 'broker_sell', sources: ['cron'] });
  await registry.grants.create({ toolName: 'broker_buy', sources: ['cron'] });
  const call = async (tool: string, input: Record<string, unknown>, source: 'cron' | 'user' = 'cron', userId = 'alice') => {
    t += 60_000;
    return JSON.parse(await registry.dispatch(tool, { symbol: 'ETH', usd: 10, ...input, confirm: true }, { context: createToolCallContext({ sessionId: `${userId}-s`, source, userId }) })) as { ok: boolean; code?: string; error?: string };
  };
  return { storage, registry, breakers, call, advance: (ms: number) => void (t += ms), now };
}

describe('the rules', () => {
  it('count losing closes in a row, realised P&L today and failures in the window; defaults are on', () => {
    expect(DEFAULT_BREAKER_LIMITS).toMatchObject({ enabled: true, maxConsecutiveLosses: 3, maxDailyLossUsd: 500, maxDrawdownPct: 20, maxErrorRate: 0.5 });
    const row = (at: string, side: string, pnl: number | undefined, decision: AuditEntry['decision'] = 'allowed'): AuditEntry => ({
      id: 1, at, toolName: 'x', tier: 2, source: 'cron', decision, durationMs: 1, argsJson: '{}', mode: 'execute', kind: 'tool_call',
      outcome: { orderSide: side, ...(pnl !== undefined ? { fill: { realizedPnlUsd: pnl } } : {}) },
    });
    const rows = [row('2026-11-02T09:00:00Z', 'sell', -5), row('2026-11-02T08:00:00Z', 'buy', -0.1), row('2026-11-02T07:00:00Z', 'close', -7), row('2026-11-01T07:00:00Z', 'sell', 3), row('2026-11-01T06:00:00Z', 'sell', -9), row('2026-11-02T09:30:00Z', 'buy', undefined, 'error')];
    const m = measureBreakerRows(rows, { dayStart: '2026-11-02T00:00:00.000Z', windowStart: '2026-11-02T08:30:00.000Z' });
    expect(m).toEqual({ consecutiveLosses: 2, realizedTodayUsd: -12.1, errors: 1, executions: 2 });
    expect(judgeBreaker({ ...DEFAULT_BREAKER_LIMITS, maxConsecutiveLosses: 2 }, m)?.rule).toBe('consecutive_losses');
    expect(judgeBreaker({ ...DEFAULT_BREAKER_LIMITS, maxDailyLossUsd: 12 }, m)?.rule).toBe('daily_loss');
    expect(judgeBreaker({ ...DEFAULT_BREAKER_LIMITS, minCallsForErrorRate: 2 }, m)?.rule).toBe('error_rate');
    expect(judgeBreaker(DEFAULT_BREAKER_LIMITS, { ...m, drawdownPct: 25, equityUsd: 75, peakEquityUsd: 100 })?.reason).toContain('25.0% below its peak');
    expect(judgeBreaker({ ...DEFAULT_BREAKER_LIMITS, enabled: false, maxConsecutiveLosses: 1 }, m)).toBeUndefined();
  });

  it('refuses bad limits naming the field and what was expected', () => {
    expect(() => checkBreakerLimits('x', { maxConsecutiveLosses: 0 })).toThrow(/maxConsecutiveLosses must be an integer from 1 to 1000, got 0/);
    expect(() => checkBreakerLimits('x', { maxDailyLossUsd: -5 })).toThrow(/maxDailyLossUsd must be a number from 0.01/);
    expect(() => checkBreakerLimits('x', { maxErrorRate: 2 })).toThrow(/maxErrorRate/);
    expect(() => checkBreakerLimits('x', { nope: 1 })).toThrow(/unknown limit "nope"/);
    expect(() => createCircuitBreakers({ storage: createInMemoryStorage(), limits: { maxDrawdownPct: 500 } })).toThrow(/maxDrawdownPct/);
  });
});

describe('a tripped breaker halts autonomous fund-moving calls at dispatch', () => {
  it('three losing trades in a row trip it: an audit row, a delivered notice, the fourth autonomous call blocked; user calls and previews still reach the gate', async () => {
    const { storage, registry, breakers, call } = await setup();
    expect((await call('broker_sell', { pnl: 4 })).ok).toBe(true);
    for (let i = 0; i < 3; i++) expect((await call('broker_sell', { pnl: -20 })).ok).toBe(true);
    const status = await breakers.status('alice');
    expect(status).toMatchObject({ tripped: true, rule: 'consecutive_losses', reason: '3 losing trades in a row (limit 3)' });
    const blocked = await call('broker_buy', {});
    expect(blocked).toMatchObject({ ok: false, code: 'CIRCUIT_BREAKER_OPEN' });
    expect(blocked.error).toContain('minara breakers reset alice');
    // Only alice is halted, and only her autonomous executions: bob trades, alice's preview runs, her own turn reaches approval.
    expect((await call('broker_buy', {}, 'cron', 'bob')).ok).toBe(true);
    const preview = JSON.parse(await registry.dispatch('broker_buy', { symbol: 'ETH', usd: 10 }, { context: createToolCallContext({ sessionId: 'a', source: 'cron', userId: 'alice' }) })) as { ok: boolean };
    expect(preview.ok).toBe(true);
    expect((await call('broker_buy', {}, 'user')).code).toBe('APPROVAL_REQUIRED');

    const trips = await storage.audit.query({ kind: 'breaker', userId: 'alice' });
    expect(trips).toHaveLength(1);
    expect(trips[0]).toMatchObject({ toolName: 'consecutive_losses', decision: 'blocked', code: 'CIRCUIT_BREAKER_OPEN', detail: { rule: 'consecutive_losses', metrics: { consecutiveLosses: 3 } } });
    const blockedRow = (await storage.audit.query({ userId: 'alice', toolName: 'broker_buy', decision: 'blocked' }))[0];
    expect(blockedRow).toMatchObject({ code: 'CIRCUIT_BREAKER_OPEN', outcome: { status: 'blocked', errorCode: 'CIRCUIT_BREAKER_OPEN' } });
    const [notice] = await listDeliveries(storage, { userId: 'alice' });
    expect(notice).toMatchObject({ source: 'breaker', text: expect.stringContaining('Circuit breaker tripped: 3 losing trades in a row') });
    expect(await listDeliveries(storage, { userId: 'bob' })).toEqual([]);

    // A person resets it: calls run again, and the losses before the reset no longer count.
    const reset = await breakers.reset('alice', { by: 'ops', reason: 'reviewed the trades' });
    expect(reset).toMatchObject({ tripped: false, resetBy: 'ops' });
    expect((await call('broker_buy', {})).ok).toBe(true);
    expect((await breakers.status('alice', { measure: true })).metrics).toMatchObject({ consecutiveLosses: 0 });
    expect((await storage.audit.query({ kind: 'breaker', userId: 'alice' })).map((r) => r.toolName)).toEqual(['reset', 'consecutive_losses']);
    expect((await storage.audit.verify()).ok).toBe(true);
  });

  it('a realised loss over the day trips it; a drawdown of equity trips it; an error rate over the window trips it', async () => {
    const daily = await setup();
    await daily.breakers.configure('alice', { maxDailyLossUsd: 100, maxConsecutiveLosses: 50 });
    await daily.call('broker_sell', { pnl: -60 });
    await daily.call('broker_sell', { pnl: 10 });
    expect((await daily.breakers.status('alice')).tripped).toBe(false);
    await daily.call('broker_sell', { pnl: -55 });
    expect(await daily.breakers.status('alice')).toMatchObject({ tripped: true, rule: 'daily_loss', reason: 'realised loss today $105.00 (limit $100.00)' });

    let equity = 10_000;
    const dd = await setup({ equity: async () => equity });
    expect((await dd.call('broker_buy', {})).ok).toBe(true);
    equity = 12_000; // a new peak
    expect((await dd.call('broker_buy', {})).ok).toBe(true);
    equity = 9_500; // 20.8 % below the peak
    expect(await dd.call('broker_buy', {})).toMatchObject({ code: 'CIRCUIT_BREAKER_OPEN' });
    expect(await dd.breakers.status('alice')).toMatchObject({ rule: 'drawdown', reason: expect.stringContaining('20.8% below its peak $12000.00') });

    const errors = await setup();
    expect((await errors.call('broker_buy', {})).ok).toBe(true);
    expect((await errors.call('broker_buy', { fail: true })).ok).toBe(false);
    expect((await errors.call('broker_buy', {})).ok).toBe(true);
    expect((await errors.call('broker_buy', { fail: true })).ok).toBe(false);
    expect(await errors.breakers.status('alice')).toMatchObject({ tripped: true, rule: 'error_rate', reason: '2 of 4 fund-moving calls failed in the last 60 min (limit 50%)' });
    // The window moves on, but a trip stays until a person resets it.
    errors.advance(3 * 3_600_000);
    expect((await errors.call('broker_buy', {})).code).toBe('CIRCUIT_BREAKER_OPEN');
  });

  it('two processes on one SQLite file: a trip here halts the other process; a reset there lets it trade', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-breakers-'));
    dirs.push(dir);
    const db = path.join(dir, 'minara.db');
    const storage = createSqliteStorage({ path: db, logger: silentLogger });
    closers.push(() => storage.close());
    const { breakers, call } = await setup({ storage });
    for (let i = 0; i < 3; i++) await call('broker_sell', { pnl: -1 });
    expect((await breakers.status('alice')).tripped).toBe(true);
    const fixture = path.join(import.meta.dirname, 'fixtures', 'breaker-process.ts');
    expect(await runFixture(fixture, [db, 'alice'])).toMatchObject({ ok: false, code: 'CIRCUIT_BREAKER_OPEN' });
    expect(await runFixture(fixture, [db, 'bob'])).toMatchObject({ ok: true });
    await breakers.reset('alice', { by: 'ops' });
    expect(await runFixture(fixture, [db, 'alice'])).toMatchObject({ ok: true });
  });
});

describe('createApp wires the breakers', () => {
  it('on by default with the finance pack\'s equity; MINARA_BREAKER_* limits are checked and named; MINARA_BREAKERS=off turns them off', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-breakers-app-'));
    dirs.push(dir);
    const base = { envFileDir: false as const, logger: silentLogger, config: { dataDir: dir } };
    const app = await createApp({ ...base, env: { MINARA_BREAKER_MAX_LOSSES: '5', MINARA_BREAKER_MAX_DRAWDOWN_PCT: '10' } });
    closers.push(() => app.close());
    const status = await app.tools.breakers!.status('default', { measure: true });
    expect(status.limits).toMatchObject({ enabled: true, maxConsecutiveLosses: 5, maxDrawdownPct: 10, maxDailyLossUsd: 500 });
    expect(status.metrics?.equityUsd).toBeCloseTo(10_000, 0);
    await expect(createApp({ ...base, env: { MINARA_BREAKER_MAX_LOSSES: 'many' } })).rejects.toMatchObject({ message: expect.stringContaining('MINARA_BREAKER_MAX_LOSSES') });
    const off = await createApp({ ...base, finance: false, env: { MINARA_BREAKERS: 'off' } });
    closers.push(() => off.close());
    expect(off.tools.breakers).toBeUndefined();
  });
});

describe('on PostgreSQL (PGlite)', () => {
  it('trips, blocks, notifies and resets the same way; the audit chain stays intact', async () => {
    const storage = await pgliteStorage();
    closers.push(() => storage.close());
    const { breakers, call } = await setup({ storage });
    for (let i = 0; i < 3; i++) expect((await call('broker_sell', { pnl: -2 })).ok).toBe(true);
    expect(await call('broker_buy', {})).toMatchObject({ code: 'CIRCUIT_BREAKER_OPEN' });
    expect((await listDeliveries(storage, { userId: 'alice' }))[0]).toMatchObject({ source: 'breaker' });
    await breakers.reset('alice', { by: 'ops' });
    expect((await call('broker_buy', {})).ok).toBe(true);
    expect((await storage.audit.verify()).ok).toBe(true);
  });
});

describe('resetting is a person\'s decision', () => {
  async function gatewayWith() {
    const s = await setup();
    for (let i = 0; i < 3; i++) await s.call('broker_sell', { pnl: -1 });
    await s.call('broker_sell', { pnl: -1 }, 'cron', 'bob');
    const runtime = { run: () => { throw new Error('no turns here'); } } as never;
    const gateway = createGateway({ runtime, storage: s.storage, tools: s.registry, logger: silentLogger, trustUserHeader: true });
    const send = async (method: string, p: string, headers: Record<string, string>, body?: unknown) => {
      const res = await gateway.fetch(new Request(`http://127.0.0.1${p}`, { method, headers: { ...headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) }));
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    return { ...s, send };
  }

  it('attack: a credential without the decide capability cannot reset a breaker, not even its own; a tenant cannot reset another\'s', async () => {
    const { send, breakers } = await gatewayWith();
    const noDecide = { 'x-minara-user': 'alice' };
    expect(await send('POST', '/v1/breakers/alice/reset', noDecide, {})).toMatchObject({ status: 403, body: { error: { code: 'HTTP_FORBIDDEN' } } });
    expect((await breakers.status('alice')).tripped).toBe(true);
    const aliceDecides = { 'x-minara-user': 'alice', 'x-minara-scopes': 'approvals:decide' };
    expect(await send('POST', '/v1/breakers/bob/reset', aliceDecides, {})).toMatchObject({ status: 403 });
    expect(await send('PUT', '/v1/breakers/alice/limits', aliceDecides, { limits: { maxConsecutiveLosses: 100 } })).toMatchObject({ status: 403 });
    expect((await breakers.status('bob')).tripped).toBe(false); // bob had one loss: not tripped, and untouched
    expect((await breakers.limits('alice')).maxConsecutiveLosses).toBe(3);
    // The tenant sees only their own breaker; the banner learns whether Reset may be offered.
    const seen = await send('GET', '/v1/breakers', noDecide);
    expect(seen.body).toMatchObject({ own: { userId: 'alice', tripped: true }, canReset: false });
    expect((seen.body.own as { metrics?: unknown }).metrics).toBeUndefined();
    expect((await send('GET', '/v1/breakers?measure=1', noDecide)).body).toMatchObject({ own: { metrics: { consecutiveLosses: 3 } } });
    expect((seen.body.breakers as unknown[]).length).toBe(1);
  });

  it('a person resets their own over HTTP; an operator lists everyone, sets limits (checked) and resets anyone', async () => {
    const { send, breakers, storage } = await gatewayWith();
    const alice = { 'x-minara-user': 'alice', 'x-minara-scopes': 'approvals:decide' };
    expect(await send('POST', '/v1/breakers/alice/reset', alice, { reason: 'checked the losses' })).toMatchObject({ status: 200, body: { breaker: { tripped: false, resetBy: 'alice (gateway)' } } });
    const ops = { 'x-minara-user': 'ops', 'x-minara-roles': 'operator', 'x-minara-scopes': 'approvals:decide' };
    const list = await send('GET', '/v1/breakers', ops);
    expect((list.body.breakers as Array<{ userId: string }>).map((b) => b.userId)).toEqual(['alice']);
    expect(await send('PUT', '/v1/breakers/bob/limits', ops, { limits: { maxConsecutiveLosses: -1 } })).toMatchObject({ status: 400, body: { error: { message: expect.stringContaining('maxConsecutiveLosses') } } });
    expect(await send('PUT', '/v1/breakers/bob/limits', ops, { limits: { maxConsecutiveLosses: 1 } })).toMatchObject({ status: 200, body: { limits: { maxConsecutiveLosses: 1 } } });
    expect((await breakers.limits('bob')).maxConsecutiveLosses).toBe(1);
    expect((await storage.audit.query({ kind: 'breaker' })).map((r) => `${r.userId}:${r.toolName}`)).toEqual(['bob:configure', 'alice:reset', 'alice:consecutive_losses']);
  });

  it('the CLI lists, shows, resets and configures, refusing bad limits', async () => {
    const { registry, storage } = await gatewayWith();
    const app = { tools: registry, storage, memory: { scope: { userId: 'alice' } } } as never;
    let out = '';
    const write = (s: string) => void (out += s);
    expect(await runBreakersCommand({}, ['list'], { app, write })).toBe(0);
    expect(out).toMatch(/^TRIPPED alice: 3 losing trades in a row \(limit 3\)/);
    out = '';
    expect(await runBreakersCommand({}, ['status'], { app, user: 'bob', write })).toBe(0);
    expect(out).toMatch(/ok\s+bob[\s\S]*now: 1 loss\(es\) in a row/);
    out = '';
    expect(await runBreakersCommand({}, ['reset', 'alice'], { app, reason: 'looked at it', write })).toBe(0);
    expect(out).toContain('Reset the breaker of alice (it was tripped: 3 losing trades in a row (limit 3))');
    let errText = '';
    expect(await runBreakersCommand({}, ['set', 'bob', 'maxDailyLossUsd=-3'], { app, write, writeErr: (s) => void (errText += s) })).toBe(2);
    expect(errText).toContain('maxDailyLossUsd must be a number from 0.01');
    out = '';
    expect(await runBreakersCommand({}, ['set', 'bob', 'maxDailyLossUsd=250', 'enabled=true'], { app, write })).toBe(0);
    expect(out).toContain('$250 a day');
    expect(await runBreakersCommand({}, ['reset'], { app, writeErr: () => undefined })).toBe(2);
  });
});
