/**
 * Grants managed by people (issue 34, part 1) and the operator's gate controls (parts 6 and 7), through the
 * package entry: a grant names its user, tools or tool sets, sources, caps per call and per day (judged on the
 * order's true notional) and an expiry; capability switches and an autonomous discover turn refuse at dispatch.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createToolCallContext, createToolRegistry, defineTool, err, isDiscoverOnly, parseEnvelope, PermissionTier, type ToolCallContext } from '@minara/agent';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';

const PRICE = 3000; // USD per ETH
type Loose = { ok: boolean; code?: string; error?: string; data?: unknown; approval?: unknown };

function setup() {
  const executed: number[] = [];
  const clock = createFakeClock('2026-03-02T23:00:00.000Z');
  const storage = createInMemoryStorage({ now: clock.now });
  const swap = defineTool({
    name: 'swap_tokens', toolSet: 'trade', description: 'Swap USDC to ETH', permissionTier: PermissionTier.ALWAYS_CONFIRM, isFundMoving: true,
    inputSchema: z.object({ amount: z.number().positive().optional(), amountUsd: z.number().positive().optional(), fail: z.boolean().optional(), confirm: z.boolean().optional() }),
    // The true notional: an order sized in ETH units is worth units × price, whatever amountUsd says elsewhere.
    orderFacts: ({ amount, amountUsd }) => ({ notionalUsd: amount !== undefined ? amount * PRICE : (amountUsd ?? 0), asset: 'ETH', side: 'swap' }),
    preview: ({ amount, amountUsd }) => ({ asset: 'ETH', side: 'swap', sizeUsd: amount !== undefined ? amount * PRICE : amountUsd }),
    execute: ({ amount, amountUsd, fail }, ctx) => {
      if (fail) return err('venue rejected the order', { code: 'PROVIDER_ERROR' });
      executed.push(ctx.orderFacts!.notionalUsd);
      return { filled: true, notionalUsd: amount !== undefined ? amount * PRICE : amountUsd };
    },
  });
  const price = defineTool({
    name: 'get_price', toolSet: 'read', description: 'Price', permissionTier: PermissionTier.READ_ONLY,
    inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: PRICE }),
  });
  const registry = createToolRegistry({ tools: [swap, price], storage, now: clock.now });
  const call = async (ctx: ToolCallContext, name: string, args: unknown) => parseEnvelope(await registry.dispatch(name, args, { context: ctx })) as Loose;
  return { registry, storage, clock, executed, call };
}
const ctx = (source: 'cron' | 'user' | 'webhook', userId = 'alice', extra: Partial<Parameters<typeof createToolCallContext>[0]> = {}) =>
  createToolCallContext({ sessionId: `${source}-${userId}`, source, userId, ...extra });

describe('grants managed by people', () => {
  it('refuses bad input naming the field, and stores nothing', async () => {
    const { registry } = setup();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ tools: ['swap_tokens'], capPerDayUsd: -5 }, /"capPerDayUsd"/],
      [{ tools: ['swap_tokens'], capPerCallUsd: Number.NaN }, /"capPerCallUsd"/],
      [{ toolSets: ['yolo'] }, /"toolSets" names an unknown tool set "yolo"/],
      [{ tools: ['drain_wallet'] }, /"tools" names an unknown tool "drain_wallet"/],
      [{ tools: ['swap_tokens'], expiresAt: '2020-01-01T00:00:00Z' }, /"expiresAt" is in the past/],
      [{ tools: ['swap_tokens'], sources: ['user'] }, /"sources" may only name autonomous sources/],
      [{ tools: ['swap_tokens'], userId: 'not a user!' }, /"userId"/],
      [{}, /"tools" or "toolSets"/],
    ];
    for (const [input, message] of cases) {
      await expect(registry.grants.create(input as never), JSON.stringify(input)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringMatching(message) });
    }
    expect(await registry.grants.list({ includeRevoked: true })).toEqual([]);
    expect(await registry.queryAudit({ toolName: 'grant.create' })).toEqual([]);
  });

  it('every create and revoke is an audit row naming who did it', async () => {
    const { registry } = setup();
    const grant = await registry.grants.create({ tools: ['swap_tokens'], userId: 'alice', sources: ['cron'], capPerCallUsd: 50, capPerDayUsd: 100, expiresAt: 3_600_000 }, { by: 'alice' });
    expect(grant).toMatchObject({ kind: 'stored', toolName: 'swap_tokens', userId: 'alice', capPerCallUsd: 50, capPerDayUsd: 100, createdBy: 'alice' });
    expect(await registry.grants.revoke(grant.id, { by: 'operator-bob' })).toBe(true);
    expect(await registry.grants.revoke(grant.id, { by: 'operator-bob' })).toBe(false);
    const rows = await registry.queryAudit({});
    expect(rows.map((r) => [r.toolName, r.source])).toEqual([['grant.revoke', 'operator'], ['grant.create', 'operator']]);
    expect(JSON.parse(rows[0]!.argsJson)).toEqual({ grantId: grant.id, by: 'operator-bob' });
    expect(JSON.parse(rows[1]!.argsJson)).toMatchObject({ grantId: grant.id, userId: 'alice', capPerDayUsd: 100, by: 'alice' });
  });

  it('the per-call cap judges the true notional: 1 ETH (3,000 USD) is not a 50 USD order', async () => {
    const { registry, call, executed } = setup();
    await registry.grants.create({ tools: ['swap_tokens'], userId: 'alice', capPerCallUsd: 50, capPerDayUsd: 1000, expiresAt: 3_600_000 });
    const big = await call(ctx('cron'), 'swap_tokens', { amount: 1, confirm: true });
    expect(big).toMatchObject({ ok: false, code: 'GRANT_CAP_EXCEEDED' });
    expect(big.error).toMatch(/\$3000\.00 is above .* cap of \$50\.00 per call/);
    expect((await call(ctx('cron'), 'swap_tokens', { amountUsd: 40, confirm: true })).ok).toBe(true);
    expect(executed).toEqual([40]);
  });

  it('the per-day cap counts what executed today (UTC); a failed call gives its room back; a new day starts over', async () => {
    const { registry, call, executed, clock } = setup();
    const grant = await registry.grants.create({ toolSets: ['trade'], userId: 'alice', sources: ['cron'], capPerCallUsd: 60, capPerDayUsd: 100, expiresAt: 48 * 3_600_000 });
    expect((await call(ctx('cron'), 'swap_tokens', { amountUsd: 40, confirm: true })).ok).toBe(true);
    // A call the venue rejects (an error envelope) did not spend anything.
    expect((await call(ctx('cron'), 'swap_tokens', { amountUsd: 40, fail: true, confirm: true })).ok).toBe(false);
    expect(await registry.grants.spentToday(grant.id)).toBe(40);
    expect((await call(ctx('cron'), 'swap_tokens', { amountUsd: 50, confirm: true })).ok).toBe(true);
    expect(await registry.grants.leftToday(grant.id)).toBe(10);
    const over = await call(ctx('cron'), 'swap_tokens', { amountUsd: 20, confirm: true });
    expect(over).toMatchObject({ ok: false, code: 'GRANT_CAP_EXCEEDED' });
    expect(over.error).toMatch(/\$10\.00 left of its \$100\.00 per day/);
    // A preview moves nothing and shows what is left today.
    const preview = await call(ctx('user'), 'swap_tokens', { amountUsd: 20 });
    expect(preview).toMatchObject({ ok: true, data: { sizeUsd: 20, grantLeftTodayUsd: 10 } });
    // An approval request shows it too.
    const asked = await call(ctx('user'), 'swap_tokens', { amountUsd: 20, confirm: true });
    expect(asked).toMatchObject({ ok: false, code: 'APPROVAL_REQUIRED', approval: { grantLeftTodayUsd: 10 } });
    // Past midnight UTC the day's room is back.
    clock.advance(2 * 3_600_000);
    expect((await call(ctx('cron'), 'swap_tokens', { amountUsd: 20, confirm: true })).ok).toBe(true);
    expect(executed).toEqual([40, 50, 20]);
  });

  it('a grant is for its user, its sources and its expiry only', async () => {
    const { registry, call, clock } = setup();
    const grant = await registry.grants.create({ tools: ['swap_tokens'], userId: 'alice', sources: ['cron'], capPerCallUsd: 100, capPerDayUsd: 100, expiresAt: 3_600_000 });
    expect((await call(ctx('cron', 'bob'), 'swap_tokens', { amountUsd: 10, confirm: true })).code).toBe('GRANT_REQUIRED');
    expect((await call(ctx('webhook', 'alice'), 'swap_tokens', { amountUsd: 10, confirm: true })).code).toBe('GRANT_REQUIRED');
    expect((await call(ctx('cron', 'alice'), 'swap_tokens', { amountUsd: 10, confirm: true })).ok).toBe(true);
    clock.advance(3_600_001);
    expect((await call(ctx('cron', 'alice'), 'swap_tokens', { amountUsd: 10, confirm: true })).code).toBe('GRANT_REQUIRED');
    expect(await registry.grants.leftToday(grant.id)).toBe(0);
  });

  it('concurrent calls under one grant never pass the daily cap together', async () => {
    const { registry, call, executed } = setup();
    await registry.grants.create({ tools: ['swap_tokens'], userId: 'alice', capPerDayUsd: 100, expiresAt: 3_600_000 });
    const results = await Promise.all(Array.from({ length: 10 }, () => call(ctx('cron'), 'swap_tokens', { amountUsd: 30, confirm: true })));
    expect(results.filter((r) => r.ok)).toHaveLength(3);
    expect(executed.reduce((a, b) => a + b, 0)).toBe(90);
  });
});

describe('capability switches (enforced at dispatch)', () => {
  it("turning alice's trade set off refuses her trade tools from every source and mode; bob and her reads are untouched", async () => {
    const { registry, call, executed } = setup();
    await registry.grants.create({ tools: ['swap_tokens'], userId: 'alice', capPerDayUsd: 1000, expiresAt: 3_600_000 });
    expect(await registry.capabilities.disable('trade', { userId: 'alice', reason: 'on holiday', by: 'cli' })).toBe(true);
    for (const c of [ctx('cron'), ctx('user')]) {
      for (const args of [{ amountUsd: 5, confirm: true }, { amountUsd: 5 }]) {
        const r = await call(c, 'swap_tokens', args);
        expect(r).toMatchObject({ ok: false, code: 'TOOL_SET_DISABLED' });
        expect(r.error).toMatch(/"trade" is turned off for alice \(on holiday\)/);
      }
    }
    expect((await call(ctx('user'), 'get_price', { symbol: 'ETH' })).ok).toBe(true);
    await registry.grants.create({ tools: ['swap_tokens'], userId: 'bob', capPerDayUsd: 1000, expiresAt: 3_600_000 });
    expect((await call(ctx('cron', 'bob'), 'swap_tokens', { amountUsd: 5, confirm: true })).ok).toBe(true);
    expect(await registry.capabilities.list({ userId: 'alice' })).toMatchObject([{ toolSet: 'trade', reason: 'on holiday', by: 'cli' }]);
    expect(await registry.capabilities.enable('trade', { userId: 'alice' })).toBe(true);
    expect((await call(ctx('cron'), 'swap_tokens', { amountUsd: 5, confirm: true })).ok).toBe(true);
    expect(executed).toEqual([5, 5]);
    expect((await registry.queryAudit({})).filter((r) => r.toolName.startsWith('capability.')).map((r) => r.toolName)).toEqual(['capability.enable', 'capability.disable']);
    await expect(registry.capabilities.disable('yolo', { userId: 'alice' })).rejects.toThrow(/"toolSet" names an unknown tool set "yolo"/);
  });
});

describe('the lifecycle stage reaches the gate', () => {
  it('an autonomous discover turn cannot move funds even under a grant; its preview still runs; a decide turn can', async () => {
    const { registry, call, executed } = setup();
    await registry.grants.create({ tools: ['swap_tokens'], userId: 'alice', capPerDayUsd: 1000, expiresAt: 3_600_000 });
    const discover = ctx('cron', 'alice', { lifecycleStages: ['discover'] });
    const r = await call(discover, 'swap_tokens', { amountUsd: 10, confirm: true });
    expect(r).toMatchObject({ ok: false, code: 'STAGE_NOT_ALLOWED' });
    expect((await call(discover, 'swap_tokens', { amountUsd: 10 })).ok).toBe(true);
    expect((await call(discover, 'get_price', { symbol: 'ETH' })).ok).toBe(true);
    // A nested call cannot shed the caller's classification.
    const nested = await registry.runInContext(discover, async () => parseEnvelope(await registry.dispatch('swap_tokens', { amountUsd: 11, confirm: true }, { context: ctx('cron', 'alice', { lifecycleStages: ['decide'] }) })) as Loose);
    expect(nested.code).toBe('STAGE_NOT_ALLOWED');
    expect((await call(ctx('cron', 'alice', { lifecycleStages: ['discover', 'decide'] }), 'swap_tokens', { amountUsd: 10, confirm: true })).ok).toBe(true);
    // A person's turn is not tightened by the stage (they approve each call).
    expect((await call(ctx('user', 'alice', { lifecycleStages: ['discover'] }), 'swap_tokens', { amountUsd: 10, confirm: true })).code).toBe('APPROVAL_REQUIRED');
    expect(executed).toEqual([10]);
    expect([isDiscoverOnly(['discover']), isDiscoverOnly(['discover', 'evaluate']), isDiscoverOnly(['discover', 'manage']), isDiscoverOnly(undefined)]).toEqual([true, true, false, false]);
  });
});
