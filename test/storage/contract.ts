/**
 * The storage contract suite: one set of behaviours every {@link Storage} engine must show. Run it from an
 * engine's test file with `runStorageContract('my-engine', factory)`; a new engine passes when this does.
 */
import { createHash } from 'node:crypto';
import type { ApprovalRecord, AuditEntryInput, GrantRecord, NewMessage, Storage } from '@minara/agent';
import { MinaraError } from '@minara/agent';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** What the suite hands a factory: a clock that ticks one second per call, so `updatedAt` always moves. */
export interface ContractFactoryOptions {
  readonly now: () => Date;
}

/** Makes a fresh, empty storage for one test. */
export type StorageFactory = (options: ContractFactoryOptions) => Storage | Promise<Storage>;

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const iso = (secondsAfterT0: number) => new Date(T0 + secondsAfterT0 * 1000).toISOString();

/** A complete audit row with overrides. */
export function auditEntry(overrides: Partial<AuditEntryInput> = {}): AuditEntryInput {
  return { at: iso(0), toolName: 'get_price', tier: 1, source: 'chat', decision: 'allowed', durationMs: 3.5, argsJson: '{"symbol":"BTC"}', ...overrides };
}

/** A complete pending approval with overrides. */
export function approvalRecord(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    id: 'apr_1',
    toolName: 'swap_tokens',
    toolCallId: 'call_1',
    inputHash: 'a'.repeat(64),
    inputJson: '{"from":"USDC","to":"ETH","amount":100}',
    tier: 3,
    source: 'chat',
    reason: 'ALWAYS_CONFIRM tool',
    status: 'pending',
    createdAt: iso(0),
    expiresAt: iso(900),
    signature: 'sig',
    ...overrides,
  };
}

/** A complete session grant with overrides. */
export function grantRecord(overrides: Partial<GrantRecord> = {}): GrantRecord {
  return { id: 'grt_1', kind: 'session', toolName: 'swap_tokens', sessionId: 's1', createdAt: iso(0), ...overrides };
}

/** A user message with overrides. */
export function message(text: string, overrides: Partial<NewMessage> = {}): NewMessage {
  return { role: 'user', json: JSON.stringify({ role: 'user', content: text }), createdAt: iso(0), ...overrides };
}

async function expectCode(promise: Promise<unknown>, code: string, messagePart?: string): Promise<MinaraError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(MinaraError.isInstance(error), `expected a MinaraError ${code}, got ${String(error)}`).toBe(true);
  const e = error as MinaraError;
  expect(e.code).toBe(code);
  if (messagePart !== undefined) expect(e.message).toContain(messagePart);
  return e;
}

/**
 * Register the contract tests for one engine. Each test gets a fresh storage from `factory`, closed after.
 *
 * @example
 * ```ts
 * runStorageContract('in-memory', ({ now }) => createInMemoryStorage({ now }));
 * ```
 */
export function runStorageContract(name: string, factory: StorageFactory): void {
  describe(`Storage contract: ${name}`, () => {
    let storage: Storage;
    let tick: number;
    const now = () => new Date(T0 + 1_000_000 + ++tick * 1000);

    beforeEach(async () => {
      tick = 0;
      storage = await factory({ now });
    });
    afterEach(async () => {
      await storage.close();
    });

    describe('engine', () => {
      it('reports a kind and capabilities', () => {
        expect(typeof storage.kind).toBe('string');
        expect(storage.capabilities.fullText).toBe(true);
        expect(typeof storage.capabilities.vector).toBe('boolean');
        expect(typeof storage.capabilities.multiProcess).toBe('boolean');
        if (!storage.capabilities.vector) expect(storage.capabilities.vectorUnavailableReason).toEqual(expect.any(String));
      });

      it('reports schema versions as non-negative integers', async () => {
        const versions = await storage.schemaVersions();
        for (const v of Object.values(versions)) expect(Number.isInteger(v) && v >= 0).toBe(true);
      });
    });

    describe('meta', () => {
      it('creates the instance once: 32-byte key, id = first 16 hex of sha256(key)', async () => {
        const a = await storage.meta.getInstance();
        const b = await storage.meta.getInstance();
        expect(a.hmacKey).toBeInstanceOf(Uint8Array);
        expect(a.hmacKey.length).toBe(32);
        expect(a.instanceId).toBe(createHash('sha256').update(a.hmacKey).digest('hex').slice(0, 16));
        expect(b).toEqual(a);
        expect(Number.isNaN(Date.parse(a.createdAt))).toBe(false);
      });

      it('agrees on one key when asked concurrently', async () => {
        const all = await Promise.all(Array.from({ length: 5 }, () => storage.meta.getInstance()));
        for (const info of all) expect(Buffer.from(info.hmacKey).equals(Buffer.from(all[0]!.hmacKey))).toBe(true);
      });

      it('returns a copy of the key', async () => {
        const a = await storage.meta.getInstance();
        const original = Buffer.from(a.hmacKey).toString('hex');
        a.hmacKey.fill(0);
        expect(Buffer.from((await storage.meta.getInstance()).hmacKey).toString('hex')).toBe(original);
      });

      it('gets, sets, overwrites and deletes key/value flags', async () => {
        expect(await storage.meta.get('emergency_stop')).toBeUndefined();
        await storage.meta.set('emergency_stop', 'on');
        expect(await storage.meta.get('emergency_stop')).toBe('on');
        await storage.meta.set('emergency_stop', 'off');
        expect(await storage.meta.get('emergency_stop')).toBe('off');
        await storage.meta.set('other', '');
        expect(await storage.meta.get('other')).toBe('');
        await storage.meta.delete('emergency_stop');
        await storage.meta.delete('never-set');
        expect(await storage.meta.get('emergency_stop')).toBeUndefined();
        expect(await storage.meta.get('other')).toBe('');
      });

      it('rejects an empty key and a non-string value', async () => {
        await expectCode(storage.meta.set('', 'x'), 'INVALID_ARGUMENT', 'meta.set: key');
        await expectCode(storage.meta.set('k', 42 as unknown as string), 'INVALID_ARGUMENT', 'value must be a string');
        expect(await storage.meta.get('k')).toBeUndefined();
      });
    });

    describe('audit', () => {
      it('round-trips every field and leaves absent optional fields absent', async () => {
        const full = auditEntry({
          sessionId: 's1', traceId: 't1', toolCallId: 'c1', approvalId: 'apr_1', decision: 'blocked',
          code: 'TOOL_BLOCKED', reason: 'hook said no', mode: 'preview', tier: 3, durationMs: 0.25,
        });
        await storage.audit.append(full);
        await storage.audit.append(auditEntry());
        const [bare, stored] = await storage.audit.query();
        expect(stored).toStrictEqual({ ...full, kind: 'tool_call', id: stored!.id, chain: stored!.chain });
        expect(bare).toStrictEqual({ ...auditEntry(), kind: 'tool_call', id: bare!.id, chain: bare!.chain });
        expect(bare!.id).toBeGreaterThan(stored!.id);
        expect(bare!.chain).toStrictEqual({ seq: stored!.chain!.seq + 1, prevHash: stored!.chain!.hash, hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      });

      it('round-trips the outcome, the tenant, the kind and the detail; filters by user and kind', async () => {
        const outcome = { status: 'filled', orderId: 'co_buy_1', fill: { quantity: 0.5, priceUsd: 3000.25, notionalUsd: 1500.125, feeUsd: 1.5, realizedPnlUsd: -1.5, symbol: 'ETH', side: 'buy' }, txHash: '0xabc', simulated: true, provider: 'paper', orderSide: 'buy' };
        await storage.audit.append(auditEntry({ userId: 'alice', outcome, toolName: 'buy_token' }));
        await storage.audit.append(auditEntry({ userId: 'bob', kind: 'skill_activation', toolName: 'skill', detail: { skillIds: ['trading'], via: 'signal' }, traceId: 't9' }));
        await storage.audit.append(auditEntry({ kind: 'job_run', toolName: 'heartbeat', detail: { outcome: 'ok' } }));
        const [job, skill, call] = await storage.audit.query();
        expect(call).toMatchObject({ userId: 'alice', kind: 'tool_call', outcome });
        expect(skill).toMatchObject({ userId: 'bob', kind: 'skill_activation', detail: { skillIds: ['trading'], via: 'signal' } });
        expect(job!.userId).toBeUndefined();
        expect((await storage.audit.query({ userId: 'alice' })).map((r) => r.toolName)).toEqual(['buy_token']);
        expect((await storage.audit.query({ kind: 'tool_call' })).map((r) => r.toolName)).toEqual(['buy_token']);
        expect(await storage.audit.count({ kind: 'job_run' })).toBe(1);
        expect((await storage.audit.query({ order: 'oldest', limit: 2 })).map((r) => r.toolName)).toEqual(['buy_token', 'skill']);
        expect((await storage.audit.query({ afterId: call!.id, order: 'oldest' })).map((r) => r.toolName)).toEqual(['skill', 'heartbeat']);
        expect((await storage.audit.query({ beforeId: job!.id })).map((r) => r.toolName)).toEqual(['skill', 'buy_token']);
      });

      it('refuses an unknown kind and a non-object outcome, storing nothing', async () => {
        await expect(storage.audit.append(auditEntry({ kind: 'nope' as never }))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('entry.kind') });
        await expect(storage.audit.append(auditEntry({ outcome: 'filled' as never }))).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('entry.outcome') });
        expect(await storage.audit.count()).toBe(0);
        expect((await storage.audit.head()).seq).toBe(0);
      });

      it('chains every row and verifies a clean log, with the head at the newest row', async () => {
        const empty = await storage.audit.verify();
        expect(empty).toMatchObject({ ok: true, checked: 0, unchainedPrefix: 0, problems: [] });
        for (let i = 0; i < 25; i++) await storage.audit.append(auditEntry({ at: iso(i), durationMs: i / 7, userId: i % 2 ? 'alice' : undefined, outcome: i % 3 ? undefined : { status: 'ok' } }));
        const report = await storage.audit.verify();
        expect(report).toMatchObject({ ok: true, checked: 25, unchainedPrefix: 0, problems: [] });
        const [newest] = await storage.audit.query({ limit: 1 });
        expect(report.head).toMatchObject({ seq: 25, hash: newest!.chain!.hash });
        expect((await storage.audit.verify({ anchor: `10:${(await storage.audit.query({ order: 'oldest' }))[9]!.chain!.hash}` })).ok).toBe(true);
        const wrong = await storage.audit.verify({ anchor: `10:${'f'.repeat(64)}` });
        expect(wrong.problems.map((p) => p.kind)).toEqual(['anchor_mismatch']);
        await expect(storage.audit.verify({ anchor: 'nonsense' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      });

      it('queries newest first with a default limit of 100', async () => {
        for (let i = 0; i < 120; i++) await storage.audit.append(auditEntry({ at: iso(i), reason: `r${i}` }));
        const rows = await storage.audit.query();
        expect(rows).toHaveLength(100);
        expect(rows[0]!.reason).toBe('r119');
        expect(rows[99]!.reason).toBe('r20');
        for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.id).toBeGreaterThan(rows[i]!.id);
        expect(await storage.audit.query({ limit: 3 })).toHaveLength(3);
        expect(await storage.audit.count()).toBe(120);
      });

      it('filters by tool, session, trace, decision and time window (since inclusive, until exclusive)', async () => {
        await storage.audit.append(auditEntry({ at: iso(1), toolName: 'a', sessionId: 's1', traceId: 't1' }));
        await storage.audit.append(auditEntry({ at: iso(2), toolName: 'b', sessionId: 's1', traceId: 't2', decision: 'blocked' }));
        await storage.audit.append(auditEntry({ at: iso(3), toolName: 'a', sessionId: 's2', traceId: 't2', decision: 'blocked' }));
        await storage.audit.append(auditEntry({ at: iso(4), toolName: 'a', decision: 'error' }));
        const tools = async (filter: Parameters<Storage['audit']['query']>[0]) => (await storage.audit.query(filter)).map((r) => `${r.toolName}@${r.at}`);
        expect(await tools({ toolName: 'a' })).toEqual([`a@${iso(4)}`, `a@${iso(3)}`, `a@${iso(1)}`]);
        expect(await tools({ sessionId: 's1' })).toEqual([`b@${iso(2)}`, `a@${iso(1)}`]);
        expect(await tools({ traceId: 't2' })).toEqual([`a@${iso(3)}`, `b@${iso(2)}`]);
        expect(await tools({ decision: 'blocked' })).toEqual([`a@${iso(3)}`, `b@${iso(2)}`]);
        expect(await tools({ since: iso(2), until: iso(4) })).toEqual([`a@${iso(3)}`, `b@${iso(2)}`]);
        expect(await tools({ toolName: 'a', decision: 'blocked', sessionId: 's2' })).toEqual([`a@${iso(3)}`]);
        expect(await tools({ toolName: 'nope' })).toEqual([]);
        expect(await storage.audit.count({ toolName: 'a' })).toBe(3);
        expect(await storage.audit.count({ decision: 'blocked', since: iso(3) })).toBe(1);
        expect(await storage.audit.count({ sessionId: 'none' })).toBe(0);
      });

      it('returns copies', async () => {
        await storage.audit.append(auditEntry());
        const [row] = await storage.audit.query();
        (row as { toolName: string }).toolName = 'mutated';
        expect((await storage.audit.query())[0]!.toolName).toBe('get_price');
      });

      it('rejects a bad limit and a bad entry, writing nothing', async () => {
        for (const limit of [0, -1, 1.5, Number.NaN]) await expectCode(storage.audit.query({ limit }), 'INVALID_ARGUMENT', 'limit must be a positive integer');
        await expectCode(storage.audit.append({ ...auditEntry(), toolName: '' }), 'INVALID_ARGUMENT', 'entry.toolName');
        await expectCode(storage.audit.append({ ...auditEntry(), tier: 'high' as unknown as number }), 'INVALID_ARGUMENT', 'entry.tier');
        await expectCode(storage.audit.append(undefined as unknown as AuditEntryInput), 'INVALID_ARGUMENT', 'audit.append');
        expect(await storage.audit.count()).toBe(0);
      });
    });

    describe('approvals', () => {
      it('creates and gets a record with every field; absent fields stay absent', async () => {
        const full = approvalRecord({
          id: 'apr_full', sessionId: 's1', traceId: 't1', status: 'approved', decidedAt: iso(5),
          decisionReason: 'ok', decisionSignature: 'dsig', executedAt: iso(6),
        });
        await storage.approvals.create(full);
        await storage.approvals.create(approvalRecord());
        expect(await storage.approvals.get('apr_full')).toStrictEqual(full);
        expect(await storage.approvals.get('apr_1')).toStrictEqual(approvalRecord());
        expect(await storage.approvals.get('missing')).toBeUndefined();
      });

      it('rejects a duplicate id without touching the stored record', async () => {
        await storage.approvals.create(approvalRecord());
        await expectCode(storage.approvals.create(approvalRecord({ toolName: 'other' })), 'STORAGE_ERROR', 'already exists');
        expect((await storage.approvals.get('apr_1'))!.toolName).toBe('swap_tokens');
      });

      it('lists newest first, filtered by status (one or many) and session, with a limit', async () => {
        await storage.approvals.create(approvalRecord({ id: 'a', createdAt: iso(1), sessionId: 's1' }));
        await storage.approvals.create(approvalRecord({ id: 'b', createdAt: iso(3), status: 'approved', sessionId: 's1' }));
        await storage.approvals.create(approvalRecord({ id: 'c', createdAt: iso(2), status: 'denied', sessionId: 's2' }));
        await storage.approvals.create(approvalRecord({ id: 'd', createdAt: iso(2) }));
        const ids = async (q?: Parameters<Storage['approvals']['list']>[0]) => (await storage.approvals.list(q)).map((r) => r.id);
        expect(await ids()).toEqual(['b', 'd', 'c', 'a']);
        expect(await ids({ status: 'pending' })).toEqual(['d', 'a']);
        expect(await ids({ status: ['approved', 'denied'] })).toEqual(['b', 'c']);
        expect(await ids({ sessionId: 's1' })).toEqual(['b', 'a']);
        expect(await ids({ sessionId: 's1', status: 'pending' })).toEqual(['a']);
        expect(await ids({ limit: 2 })).toEqual(['b', 'd']);
        await expectCode(storage.approvals.list({ status: [] }), 'INVALID_ARGUMENT', 'status');
        await expectCode(storage.approvals.list({ status: 'bogus' as 'pending' }), 'INVALID_ARGUMENT', 'status');
        await expectCode(storage.approvals.list({ limit: 0 }), 'INVALID_ARGUMENT', 'limit');
      });

      it('applies the default limit of 100', async () => {
        for (let i = 0; i < 101; i++) await storage.approvals.create(approvalRecord({ id: `apr_${i}`, createdAt: iso(i) }));
        const rows = await storage.approvals.list();
        expect(rows).toHaveLength(100);
        expect(rows[0]!.id).toBe('apr_100');
      });

      it('transitions as a compare-and-set and applies only the given patch fields', async () => {
        await storage.approvals.create(approvalRecord());
        expect(await storage.approvals.transition('apr_1', ['pending'], 'approved', { decidedAt: iso(10), decisionReason: 'yes', decisionSignature: 'dsig' })).toBe(true);
        expect(await storage.approvals.transition('apr_1', ['pending'], 'denied')).toBe(false);
        let rec = await storage.approvals.get('apr_1');
        expect(rec).toStrictEqual({ ...approvalRecord(), status: 'approved', decidedAt: iso(10), decisionReason: 'yes', decisionSignature: 'dsig' });
        expect(await storage.approvals.transition('apr_1', ['approved'], 'executed', { executedAt: iso(11) })).toBe(true);
        expect(await storage.approvals.transition('apr_1', ['approved'], 'executed', { executedAt: iso(12) })).toBe(false);
        rec = await storage.approvals.get('apr_1');
        expect(rec!.status).toBe('executed');
        expect(rec!.executedAt).toBe(iso(11));
        expect(rec!.decisionReason).toBe('yes');
        expect(await storage.approvals.transition('missing', ['pending'], 'approved')).toBe(false);
      });

      it('accepts any of several from-statuses', async () => {
        await storage.approvals.create(approvalRecord({ status: 'approved' }));
        expect(await storage.approvals.transition('apr_1', ['pending', 'approved'], 'expired')).toBe(true);
        expect((await storage.approvals.get('apr_1'))!.status).toBe('expired');
      });

      it('lets exactly one of many concurrent transitions win', async () => {
        await storage.approvals.create(approvalRecord());
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) => storage.approvals.transition('apr_1', ['pending'], i % 2 === 0 ? 'approved' : 'denied', { decisionReason: `r${i}` })),
        );
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results.indexOf(true);
        const rec = await storage.approvals.get('apr_1');
        expect(rec!.decisionReason).toBe(`r${winner}`);
        expect(rec!.status).toBe(winner % 2 === 0 ? 'approved' : 'denied');
      });

      it('rejects bad transition arguments without changing the record', async () => {
        await storage.approvals.create(approvalRecord());
        await expectCode(storage.approvals.transition('apr_1', [], 'approved'), 'INVALID_ARGUMENT', 'from');
        await expectCode(storage.approvals.transition('apr_1', ['pending'], 'done' as 'approved'), 'INVALID_ARGUMENT', 'to must be one of');
        await expectCode(storage.approvals.transition('apr_1', ['nope' as 'pending'], 'approved'), 'INVALID_ARGUMENT', 'from[0]');
        await expectCode(storage.approvals.create(approvalRecord({ id: 'x', status: 'weird' as 'pending' })), 'INVALID_ARGUMENT', 'record.status');
        await expectCode(storage.approvals.create({ ...approvalRecord({ id: 'y' }), signature: undefined as unknown as string }), 'INVALID_ARGUMENT', 'record.signature');
        expect((await storage.approvals.get('apr_1'))!.status).toBe('pending');
        expect(await storage.approvals.list()).toHaveLength(1);
      });

      it('returns copies and keeps no reference to the input', async () => {
        const input = { ...approvalRecord() };
        await storage.approvals.create(input);
        (input as { toolName: string }).toolName = 'changed-after-create';
        const got = await storage.approvals.get('apr_1');
        (got as { status: string }).status = 'executed';
        const [listed] = await storage.approvals.list();
        (listed as { reason: string }).reason = 'mutated';
        expect(await storage.approvals.get('apr_1')).toStrictEqual(approvalRecord());
      });
    });

    describe('grants', () => {
      const stored = grantRecord({
        id: 'grt_stored', kind: 'stored', sessionId: undefined, sources: ['cron', 'webhook'],
        argLimits: { amount: { max: 500, min: 1 }, token: { oneOf: ['USDC', 'ETH', 3, true] } },
        expiresAt: iso(100), note: 'nightly rebalance',
      });

      it('creates and gets grants with nested fields', async () => {
        await storage.grants.create(stored);
        await storage.grants.create(grantRecord());
        const { sessionId: _omit, ...withoutSession } = stored;
        expect(await storage.grants.get('grt_stored')).toStrictEqual(withoutSession);
        expect(await storage.grants.get('grt_1')).toStrictEqual(grantRecord());
        expect(await storage.grants.get('missing')).toBeUndefined();
        await expectCode(storage.grants.create(grantRecord()), 'STORAGE_ERROR', 'already exists');
      });

      it('lists newest first with filters, hiding revoked grants unless asked', async () => {
        await storage.grants.create(grantRecord({ id: 'g1', createdAt: iso(1) }));
        await storage.grants.create(grantRecord({ id: 'g2', createdAt: iso(2), toolName: 'transfer' }));
        await storage.grants.create(grantRecord({ id: 'g3', createdAt: iso(3), kind: 'stored', sessionId: undefined }));
        await storage.grants.create(grantRecord({ id: 'g4', createdAt: iso(4), sessionId: 's2' }));
        const ids = async (q?: Parameters<Storage['grants']['list']>[0]) => (await storage.grants.list(q)).map((g) => g.id);
        expect(await ids()).toEqual(['g4', 'g3', 'g2', 'g1']);
        expect(await ids({ kind: 'stored' })).toEqual(['g3']);
        expect(await ids({ kind: 'session', toolName: 'swap_tokens' })).toEqual(['g4', 'g1']);
        expect(await ids({ sessionId: 's1' })).toEqual(['g2', 'g1']);
        expect(await storage.grants.revoke('g1', iso(9))).toBe(true);
        expect(await ids({ sessionId: 's1' })).toEqual(['g2']);
        expect(await ids({ sessionId: 's1', includeRevoked: true })).toEqual(['g2', 'g1']);
        await expectCode(storage.grants.list({ kind: 'other' as 'stored' }), 'INVALID_ARGUMENT', 'kind');
      });

      it('revokes once and reports whether it did', async () => {
        await storage.grants.create(grantRecord());
        expect(await storage.grants.revoke('grt_1', iso(5))).toBe(true);
        expect(await storage.grants.revoke('grt_1', iso(6))).toBe(false);
        expect(await storage.grants.revoke('missing', iso(6))).toBe(false);
        expect((await storage.grants.get('grt_1'))!.revokedAt).toBe(iso(5));
      });

      it('returns copies of nested fields and keeps no reference to the input', async () => {
        const input = { ...stored, sources: [...stored.sources!], argLimits: { amount: { max: 500 } } };
        await storage.grants.create(input);
        input.sources.push('mutated');
        (input.argLimits.amount as { max: number }).max = 1;
        const got = await storage.grants.get('grt_stored');
        (got!.sources as string[]).push('mutated-again');
        (got!.argLimits!.amount as { max: number }).max = 2;
        const again = await storage.grants.get('grt_stored');
        expect(again!.sources).toEqual(['cron', 'webhook']);
        expect(again!.argLimits).toEqual({ amount: { max: 500 } });
      });

      it('rejects a bad kind or missing field, writing nothing', async () => {
        await expectCode(storage.grants.create(grantRecord({ kind: 'forever' as 'stored' })), 'INVALID_ARGUMENT', 'grant.kind');
        await expectCode(storage.grants.create({ ...grantRecord(), toolName: undefined as unknown as string }), 'INVALID_ARGUMENT', 'grant.toolName');
        expect(await storage.grants.list({ includeRevoked: true })).toEqual([]);
      });
    });

    describe('conversations', () => {
      it('ensures a session once and returns the stored one afterwards', async () => {
        const created = await storage.conversations.ensureSession({ id: 's1', userId: 'u1', title: 'BTC', metadata: { surface: 'repl', n: 1 }, now: iso(1) });
        expect(created).toStrictEqual({ id: 's1', userId: 'u1', title: 'BTC', createdAt: iso(1), updatedAt: iso(1), metadata: { surface: 'repl', n: 1 } });
        const again = await storage.conversations.ensureSession({ id: 's1', title: 'other', now: iso(2) });
        expect(again).toStrictEqual(created);
        expect(await storage.conversations.getSession('s1')).toStrictEqual(created);
        expect(await storage.conversations.getSession('missing')).toBeUndefined();
        const bare = await storage.conversations.ensureSession({ id: 's2', now: iso(3) });
        expect(bare).toStrictEqual({ id: 's2', createdAt: iso(3), updatedAt: iso(3) });
      });

      it('agrees on one session when ensured concurrently', async () => {
        const all = await Promise.all(Array.from({ length: 5 }, (_, i) => storage.conversations.ensureSession({ id: 's1', title: `t${i}`, now: iso(i) })));
        for (const s of all) expect(s).toStrictEqual(all[0]);
      });

      it('lists sessions by updatedAt, newest first, filtered by user, with a limit', async () => {
        await storage.conversations.ensureSession({ id: 'a', userId: 'u1', now: iso(1) });
        await storage.conversations.ensureSession({ id: 'b', userId: 'u2', now: iso(2) });
        await storage.conversations.ensureSession({ id: 'c', userId: 'u1', now: iso(3) });
        const ids = async (q?: Parameters<Storage['conversations']['listSessions']>[0]) => (await storage.conversations.listSessions(q)).map((s) => s.id);
        expect(await ids()).toEqual(['c', 'b', 'a']);
        await storage.conversations.appendMessages('a', [message('hi')]); // bumps a's updatedAt to now()
        expect(await ids()).toEqual(['a', 'c', 'b']);
        expect(await ids({ userId: 'u1' })).toEqual(['a', 'c']);
        expect(await ids({ limit: 1 })).toEqual(['a']);
        await expectCode(storage.conversations.listSessions({ limit: -5 }), 'INVALID_ARGUMENT', 'limit');
      });

      it('appends with contiguous seq, returns the stored rows and bumps updatedAt', async () => {
        await storage.conversations.ensureSession({ id: 's1', now: iso(0) });
        const first = await storage.conversations.appendMessages('s1', [message('a'), message('b', { role: 'assistant', turnId: 'turn_1' })]);
        expect(first).toStrictEqual([
          { sessionId: 's1', seq: 1, ...message('a') },
          { sessionId: 's1', seq: 2, ...message('b', { role: 'assistant', turnId: 'turn_1' }) },
        ]);
        const second = await storage.conversations.appendMessages('s1', [message('c', { role: 'tool' })]);
        expect(second.map((m) => m.seq)).toEqual([3]);
        expect(await storage.conversations.appendMessages('s1', [])).toEqual([]);
        const listed = await storage.conversations.listMessages('s1');
        expect(listed).toStrictEqual([...first, ...second]);
        const session = await storage.conversations.getSession('s1');
        expect(session!.updatedAt > iso(0)).toBe(true);
        expect(session!.createdAt).toBe(iso(0));
      });

      it('keeps seq contiguous under concurrent appends', async () => {
        await storage.conversations.ensureSession({ id: 's1', now: iso(0) });
        await Promise.all(Array.from({ length: 20 }, (_, i) => storage.conversations.appendMessages('s1', [message(`${i}.a`), message(`${i}.b`)])));
        const rows = await storage.conversations.listMessages('s1');
        expect(rows.map((m) => m.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
        for (let i = 0; i < 40; i += 2) {
          const a = JSON.parse(rows[i]!.json) as { content: string };
          const b = JSON.parse(rows[i + 1]!.json) as { content: string };
          expect(b.content).toBe(a.content.replace('.a', '.b'));
        }
      });

      it('lists messages after a seq and with a limit', async () => {
        await storage.conversations.ensureSession({ id: 's1', now: iso(0) });
        await storage.conversations.appendMessages('s1', ['1', '2', '3', '4', '5'].map((t) => message(t)));
        const seqs = async (q?: { afterSeq?: number; limit?: number }) => (await storage.conversations.listMessages('s1', q)).map((m) => m.seq);
        expect(await seqs({ afterSeq: 2 })).toEqual([3, 4, 5]);
        expect(await seqs({ limit: 2 })).toEqual([1, 2]);
        expect(await seqs({ afterSeq: 1, limit: 2 })).toEqual([2, 3]);
        expect(await seqs({ afterSeq: 5 })).toEqual([]);
        expect(await storage.conversations.listMessages('missing')).toEqual([]);
        await expectCode(storage.conversations.listMessages('s1', { afterSeq: -1 }), 'INVALID_ARGUMENT', 'afterSeq');
        await expectCode(storage.conversations.listMessages('s1', { limit: 0 }), 'INVALID_ARGUMENT', 'limit');
      });

      it('refuses to append to a missing session, writing nothing', async () => {
        const e = await expectCode(storage.conversations.appendMessages('ghost', [message('x')]), 'NOT_FOUND', 'session "ghost" does not exist');
        expect(e.message).toContain('conversations.appendMessages');
        await storage.conversations.ensureSession({ id: 'ghost', now: iso(0) });
        expect(await storage.conversations.listMessages('ghost')).toEqual([]);
      });

      it('rejects a batch with one bad message as a whole', async () => {
        await storage.conversations.ensureSession({ id: 's1', now: iso(0) });
        await storage.conversations.appendMessages('s1', [message('keep')]);
        const bad = [message('ok'), { ...message('bad'), role: 'robot' as 'user' }];
        await expectCode(storage.conversations.appendMessages('s1', bad), 'INVALID_ARGUMENT', 'messages[1].role');
        await expectCode(storage.conversations.appendMessages('s1', [{ ...message('x'), json: { role: 'user' } as unknown as string }]), 'INVALID_ARGUMENT', 'messages[0].json');
        await expectCode(storage.conversations.appendMessages('s1', 'nope' as unknown as NewMessage[]), 'INVALID_ARGUMENT', 'messages must be an array');
        expect((await storage.conversations.listMessages('s1')).map((m) => m.seq)).toEqual([1]);
      });

      it('replaces the whole message list atomically', async () => {
        await storage.conversations.ensureSession({ id: 's1', now: iso(0) });
        await storage.conversations.appendMessages('s1', ['1', '2', '3'].map((t) => message(t)));
        const replaced = await storage.conversations.replaceMessages('s1', [message('summary', { role: 'system' }), message('3')]);
        expect(replaced.map((m) => m.seq)).toEqual([1, 2]);
        expect(await storage.conversations.listMessages('s1')).toStrictEqual(replaced);
        const next = await storage.conversations.appendMessages('s1', [message('4')]);
        expect(next[0]!.seq).toBe(3);
        await expectCode(storage.conversations.replaceMessages('s1', [message('x'), { ...message('y'), createdAt: 5 as unknown as string }]), 'INVALID_ARGUMENT', 'messages[1].createdAt');
        expect(await storage.conversations.listMessages('s1')).toHaveLength(3);
        await expectCode(storage.conversations.replaceMessages('ghost', []), 'NOT_FOUND', 'ghost');
        expect(await storage.conversations.replaceMessages('s1', [])).toEqual([]);
        expect(await storage.conversations.listMessages('s1')).toEqual([]);
      });

      it('deletes a session with its messages', async () => {
        await storage.conversations.ensureSession({ id: 's1', now: iso(0) });
        await storage.conversations.ensureSession({ id: 's2', now: iso(0) });
        await storage.conversations.appendMessages('s1', [message('a'), message('b')]);
        await storage.conversations.appendMessages('s2', [message('c')]);
        expect(await storage.conversations.deleteSession('s1')).toBe(true);
        expect(await storage.conversations.deleteSession('s1')).toBe(false);
        expect(await storage.conversations.getSession('s1')).toBeUndefined();
        expect(await storage.conversations.listMessages('s1')).toEqual([]);
        expect(await storage.conversations.listMessages('s2')).toHaveLength(1);
        await storage.conversations.ensureSession({ id: 's1', now: iso(1) });
        expect((await storage.conversations.appendMessages('s1', [message('fresh')]))[0]!.seq).toBe(1);
      });

      it('returns copies and keeps no reference to the input', async () => {
        const metadata = { surface: 'repl', nested: { a: 1 } };
        await storage.conversations.ensureSession({ id: 's1', metadata, now: iso(0) });
        metadata.nested.a = 99;
        const got = await storage.conversations.getSession('s1');
        (got!.metadata!.nested as { a: number }).a = 42;
        const [listed] = await storage.conversations.listSessions();
        (listed as { title?: string }).title = 'mutated';
        const [m] = await storage.conversations.appendMessages('s1', [message('a')]);
        (m as { seq: number }).seq = 99;
        const [again] = await storage.conversations.listMessages('s1');
        (again as { json: string }).json = 'mutated';
        expect((await storage.conversations.getSession('s1'))!.metadata).toEqual({ surface: 'repl', nested: { a: 1 } });
        expect((await storage.conversations.getSession('s1'))!.title).toBeUndefined();
        expect(await storage.conversations.listMessages('s1')).toStrictEqual([{ sessionId: 's1', seq: 1, ...message('a') }]);
      });
    });

    describe('jobs', () => {
      const slot = '2026-01-01T00:30:00.000Z';
      it('claims a slot once; a live lease keeps it; an expired lease is taken over; ended runs stay ended', async () => {
        const a = await storage.jobs.claimRun({ jobId: 'purge', slot, owner: 'host:1', now: iso(0), leaseUntil: iso(60) });
        expect(a).toMatchObject({ jobId: 'purge', slot, owner: 'host:1', attempt: 1, outcome: 'running', leaseUntil: iso(60) });
        expect(await storage.jobs.claimRun({ jobId: 'purge', slot, owner: 'host:2', now: iso(30), leaseUntil: iso(90) })).toBeUndefined();
        // Another slot, or another job in the same slot, is its own run.
        expect(await storage.jobs.claimRun({ jobId: 'purge', slot: '2026-01-01T01:00:00.000Z', owner: 'host:2', now: iso(30), leaseUntil: iso(90) })).toMatchObject({ attempt: 1 });
        expect(await storage.jobs.claimRun({ jobId: 'dream', slot, owner: 'host:2', now: iso(30), leaseUntil: iso(90) })).toMatchObject({ jobId: 'dream' });
        // host:1 died: past its lease the slot is interrupted and taken over (not lost, not duplicated).
        expect((await storage.jobs.interruptedRuns(iso(61))).map((r) => r.id)).toEqual([a!.id]);
        const b = await storage.jobs.claimRun({ jobId: 'purge', slot, owner: 'host:2', now: iso(61), leaseUntil: iso(120) });
        expect(b).toMatchObject({ id: a!.id, owner: 'host:2', attempt: 2, startedAt: iso(61) });
        // The old owner cannot finish or renew it any more.
        expect(await storage.jobs.renewRun(a!.id, 'host:1', iso(200))).toBe(false);
        await expect(storage.jobs.finishRun(a!.id, 'host:1', { endedAt: iso(62), outcome: 'ok' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
        expect(await storage.jobs.renewRun(a!.id, 'host:2', iso(150))).toBe(true);
        const done = await storage.jobs.finishRun(a!.id, 'host:2', { endedAt: iso(70), outcome: 'ok', detail: 'purged 3' });
        expect(done).toMatchObject({ outcome: 'ok', endedAt: iso(70), detail: 'purged 3', attempt: 2 });
        expect(done.error).toBeUndefined();
        expect(await storage.jobs.claimRun({ jobId: 'purge', slot, owner: 'host:3', now: iso(500), leaseUntil: iso(600) })).toBeUndefined();
        expect(await storage.jobs.interruptedRuns(iso(10_000))).toHaveLength(2);
      });

      it('lists runs newest first, by job and outcome; refuses bad input naming it', async () => {
        for (let i = 0; i < 3; i++) {
          const r = await storage.jobs.claimRun({ jobId: 'heartbeat', slot: `2026-01-01T0${i}:00:00.000Z`, owner: 'o', now: iso(i), leaseUntil: iso(i + 10) });
          await storage.jobs.finishRun(r!.id, 'o', { endedAt: iso(i + 1), outcome: i === 1 ? 'failed' : 'ok', ...(i === 1 ? { error: 'model down' } : {}) });
        }
        const runs = await storage.jobs.listRuns({ jobId: 'heartbeat' });
        expect(runs.map((r) => r.slot)).toEqual(['2026-01-01T02:00:00.000Z', '2026-01-01T01:00:00.000Z', '2026-01-01T00:00:00.000Z']);
        expect(await storage.jobs.listRuns({ outcome: 'failed' })).toMatchObject([{ error: 'model down' }]);
        expect(await storage.jobs.listRuns({ limit: 1 })).toHaveLength(1);
        await expect(storage.jobs.listRuns({ outcome: 'nope' as never })).rejects.toThrow(/outcome/);
        await expect(storage.jobs.claimRun({ jobId: '', slot, owner: 'o', now: iso(0), leaseUntil: iso(1) })).rejects.toThrow(/jobId/);
        const r = await storage.jobs.claimRun({ jobId: 'x', slot, owner: 'o', now: iso(0), leaseUntil: iso(1) });
        await expect(storage.jobs.finishRun(r!.id, 'o', { endedAt: iso(1), outcome: 'running' as never })).rejects.toThrow(/outcome/);
      });
    });

    describe('usage', () => {
      const entry = (turnId: string, over: Record<string, unknown> = {}) => ({
        turnId, sessionId: 's1', userId: 'u1', source: 'user', modelId: 'claude-sonnet-4-5', at: '2026-03-02T10:00:00.000Z',
        inputTokens: 1000, outputTokens: 200, cacheReadTokens: 800, cacheWriteTokens: 0, costUsd: 0.0057, ...over,
      });
      it('records a turn once and sums by day, session, user and source; refuses bad numbers naming them', async () => {
        expect(await storage.usage.record(entry('t1'))).toBe(true);
        expect(await storage.usage.record(entry('t1'))).toBe(false);
        await storage.usage.record(entry('t2', { source: 'heartbeat', sessionId: 'heartbeat-2026-03-02' }));
        await storage.usage.record(entry('t3', { at: '2026-03-03T00:00:01.000Z' }));
        await storage.usage.record(entry('t4', { userId: 'u2' }));
        expect(await storage.usage.totals({ day: '2026-03-02', userId: 'u1' })).toEqual({ turns: 2, inputTokens: 2000, outputTokens: 400, cacheReadTokens: 1600, cacheWriteTokens: 0, costUsd: expect.closeTo(0.0114, 6) });
        expect((await storage.usage.totals({ day: '2026-03-02', sources: ['heartbeat', 'cron'] })).turns).toBe(1);
        expect((await storage.usage.totals({ sessionId: 's1' })).turns).toBe(3);
        expect((await storage.usage.totals()).turns).toBe(4);
        expect(await storage.usage.totals({ day: '2030-01-01' })).toEqual({ turns: 0, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 });
        await expect(storage.usage.record(entry('t5', { outputTokens: -1 }))).rejects.toThrow(/outputTokens must be a non-negative integer/);
        await expect(storage.usage.record(entry('t6', { costUsd: Number.NaN }))).rejects.toThrow(/costUsd/);
        await expect(storage.usage.totals({ day: 'yesterday' })).rejects.toThrow(/day must be YYYY-MM-DD/);
      });

      it('reserves against a USD limit: the first turn holds what is left, later ones the largest turn; released, renewed, expired', async () => {
        const ask = (id: string, over: Record<string, unknown> = {}) =>
          storage.usage.reserve({ id, scope: 'user:u1', day: '2026-03-02', userId: 'u1', sources: ['user'], limitUsd: 1, now: '2026-03-02T10:00:00.000Z', expiresAt: '2026-03-02T10:01:00.000Z', ...over });
        // No turn recorded today: the first reservation holds all that is left, so a second waits.
        expect(await ask('r1')).toEqual({ admitted: true, spentUsd: 0, reservedUsd: 0, amountUsd: 1 });
        expect(await ask('r2')).toEqual({ admitted: false, spentUsd: 0, reservedUsd: 1, amountUsd: 0 });
        // Another user's limit, or another day, is its own.
        expect(await ask('r3', { scope: 'user:u2', userId: 'u2' })).toMatchObject({ admitted: true });
        // The turn ends: its real cost is in the ledger, its reservation released.
        await storage.usage.record(entry('t1', { costUsd: 0.25 }));
        expect(await storage.usage.releaseReservation('r1')).toBe(true);
        expect(await storage.usage.releaseReservation('r1')).toBe(false);
        // Later turns reserve the day's largest turn ($0.25) each, while spent + held < limit.
        expect(await ask('r4')).toEqual({ admitted: true, spentUsd: 0.25, reservedUsd: 0, amountUsd: 0.25 });
        expect(await ask('r5')).toMatchObject({ admitted: true, reservedUsd: 0.25 });
        expect(await ask('r6')).toMatchObject({ admitted: true, reservedUsd: 0.5 });
        expect(await ask('r7')).toMatchObject({ admitted: false, spentUsd: 0.25, reservedUsd: 0.75 });
        // A renewed reservation outlives its first lease; an expired one (a process that died) stops counting.
        expect(await storage.usage.renewReservation('r4', '2026-03-02T10:05:00.000Z')).toBe(true);
        expect(await storage.usage.renewReservation('nope', '2026-03-02T10:05:00.000Z')).toBe(false);
        expect(await ask('r8', { now: '2026-03-02T10:02:00.000Z', expiresAt: '2026-03-02T10:03:00.000Z' })).toMatchObject({ admitted: true, reservedUsd: 0.25 });
        // A scope over every user's rows of some sources (the autonomous budget): u2's heartbeat turn counts.
        await storage.usage.record(entry('t2', { userId: 'u2', source: 'heartbeat', costUsd: 0.4 }));
        const budget = (id: string) => storage.usage.reserve({ id, scope: 'autonomous', day: '2026-03-02', sources: ['heartbeat', 'cron'], limitUsd: 1, now: '2026-03-02T10:00:00.000Z', expiresAt: '2026-03-02T10:01:00.000Z' });
        expect(await budget('b1')).toEqual({ admitted: true, spentUsd: 0.4, reservedUsd: 0, amountUsd: 0.4 });
        expect(await budget('b2')).toMatchObject({ admitted: true, reservedUsd: 0.4 });
        expect(await budget('b3')).toMatchObject({ admitted: false, spentUsd: 0.4, reservedUsd: 0.8 });
        await expect(ask('r9', { limitUsd: -1 })).rejects.toThrow(/limitUsd must be a number of USD ≥ 0/);
        await expect(ask('r9', { day: 'today' })).rejects.toThrow(/day must be YYYY-MM-DD/);
        await expect(ask('r9', { sources: [] })).rejects.toThrow(/sources must be a non-empty list/);
      });
    });

    describe('workflows', () => {
      const run = (over: Record<string, unknown> = {}) => ({
        id: 'wfr_1', workflowId: 'rebalance-check', userId: 'u1', trigger: 'schedule' as const, triggerKey: 'schedule:abc@2026-03-01T01:00:00.000Z',
        owner: 'host:1', traceId: 'trc_1', startedAt: iso(0), leaseUntil: iso(60), ...over,
      });
      const step = (id: string, over: Record<string, unknown> = {}) => ({ id, kind: 'tool_call' as const, tool: 'get_price', input: { symbol: 'BTC' }, output: { ok: true, data: { priceUsd: 1 } }, ok: true, decision: 'allowed', startedAt: iso(1), durationMs: 2.5, ...over });
      it('claims a (workflow, trigger) once across callers; the holder saves steps and finishes; others cannot', async () => {
        const a = await storage.workflows.claimRun(run());
        expect(a).toMatchObject({ id: 'wfr_1', status: 'running', steps: [], skipped: [], userId: 'u1', traceId: 'trc_1' });
        // The same trigger from another process, even under another run id, is taken.
        expect(await storage.workflows.claimRun(run({ id: 'wfr_2', owner: 'host:2' }))).toBeUndefined();
        // Another trigger key, or another workflow with the same key, is its own run.
        expect(await storage.workflows.claimRun(run({ id: 'wfr_3', triggerKey: 'manual:x' }))).toMatchObject({ id: 'wfr_3' });
        expect(await storage.workflows.claimRun(run({ id: 'wfr_4', workflowId: 'other' }))).toMatchObject({ id: 'wfr_4' });
        expect(await storage.workflows.saveSteps('wfr_1', 'host:2', [step('btc')])).toBe(false);
        expect(await storage.workflows.saveSteps('wfr_1', 'host:1', [step('btc')])).toBe(true);
        expect((await storage.workflows.getRun('wfr_1'))!.steps).toEqual([step('btc')]);
        await expect(storage.workflows.finishRun('wfr_1', 'host:2', { status: 'ok', endedAt: iso(3), durationMs: 3, steps: [], skipped: [] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
        const done = await storage.workflows.finishRun('wfr_1', 'host:1', {
          status: 'failed', endedAt: iso(3), durationMs: 3000, error: 'steps[1] "buy": GRANT_REQUIRED', steps: [step('btc'), step('buy', { ok: false, code: 'GRANT_REQUIRED', error: 'needs a grant', output: { ok: false } })], skipped: ['after'],
        });
        expect(done).toMatchObject({ status: 'failed', endedAt: iso(3), durationMs: 3000, error: 'steps[1] "buy": GRANT_REQUIRED', skipped: ['after'] });
        expect(done.steps[1]).toMatchObject({ id: 'buy', ok: false, code: 'GRANT_REQUIRED', input: { symbol: 'BTC' } });
        // Ended runs stay ended.
        await expect(storage.workflows.finishRun('wfr_1', 'host:1', { status: 'ok', endedAt: iso(4), durationMs: 1, steps: [], skipped: [] })).rejects.toMatchObject({ code: 'NOT_FOUND' });
        expect(await storage.workflows.claimRun(run({ id: 'wfr_5' }))).toBeUndefined();
      });

      it('marks runs whose lease lapsed as interrupted (never run again); lists newest first by workflow, user and status; refuses bad input', async () => {
        await storage.workflows.claimRun(run());
        await storage.workflows.claimRun(run({ id: 'wfr_2', triggerKey: 'k2', userId: 'u2', leaseUntil: iso(500) }));
        await storage.workflows.claimRun(run({ id: 'wfr_3', triggerKey: 'k3', workflowId: 'other' }));
        await storage.workflows.finishRun('wfr_3', 'host:1', { status: 'ok', endedAt: iso(2), durationMs: 2, steps: [], skipped: [] });
        expect(await storage.workflows.expireRuns(iso(61))).toBe(1);
        expect(await storage.workflows.getRun('wfr_1')).toMatchObject({ status: 'interrupted', endedAt: iso(61), error: expect.stringMatching(/^interrupted/) });
        expect(await storage.workflows.saveSteps('wfr_1', 'host:1', [])).toBe(false);
        expect((await storage.workflows.listRuns()).map((r) => r.id)).toEqual(['wfr_3', 'wfr_2', 'wfr_1']);
        expect((await storage.workflows.listRuns({ userId: 'u1' })).map((r) => r.id)).toEqual(['wfr_3', 'wfr_1']);
        expect((await storage.workflows.listRuns({ workflowId: 'rebalance-check', status: 'running' })).map((r) => r.id)).toEqual(['wfr_2']);
        expect(await storage.workflows.listRuns({ limit: 1 })).toHaveLength(1);
        expect(await storage.workflows.getRun('nope')).toBeUndefined();
        await expectCode(storage.workflows.listRuns({ status: 'done' as never }), 'INVALID_ARGUMENT', 'status');
        await expectCode(storage.workflows.claimRun(run({ id: 'x', triggerKey: 'y', trigger: 'telepathy' })), 'INVALID_ARGUMENT', 'run.trigger');
        await expectCode(storage.workflows.claimRun(run({ id: 'x', triggerKey: '' })), 'INVALID_ARGUMENT', 'run.triggerKey');
        await expectCode(storage.workflows.finishRun('wfr_2', 'host:1', { status: 'running' as never, endedAt: iso(1), durationMs: 1, steps: [], skipped: [] }), 'INVALID_ARGUMENT', 'status');
      });
    });

    describe('alerts', () => {
      const alert = (over: Record<string, unknown> = {}) => ({ userId: 'u1', asset: 'ETH', condition: 'below' as const, threshold: 3000, basePrice: 3200, createdAt: iso(0), expiresAt: iso(86_400), ...over });
      it('creates per user; lists newest first by status; another user sees nothing of it', async () => {
        const a = await storage.alerts.create(alert({ note: 'buy the dip', sessionId: 's1' }));
        expect(a).toMatchObject({ userId: 'u1', asset: 'ETH', condition: 'below', threshold: 3000, basePrice: 3200, note: 'buy the dip', status: 'active', sessionId: 's1' });
        const b = await storage.alerts.create(alert({ asset: 'BTC', condition: 'move_pct', threshold: 5, basePrice: 60_000 }));
        const c = await storage.alerts.create(alert({ userId: 'u2', condition: 'above', threshold: 4000, basePrice: undefined }));
        expect(c.basePrice).toBeUndefined();
        expect(b.id).toBeGreaterThan(a.id);
        expect((await storage.alerts.list({ userId: 'u1' })).map((x) => x.id)).toEqual([b.id, a.id]);
        expect(await storage.alerts.get('u2', a.id)).toBeUndefined();
        expect(await storage.alerts.get('u1', a.id)).toMatchObject({ id: a.id });
        expect(await storage.alerts.countActive('u1')).toBe(2);
        expect((await storage.alerts.listActive()).map((x) => x.id)).toEqual([a.id, b.id, c.id]);
        expect((await storage.alerts.listActive({ afterId: a.id, limit: 1 })).map((x) => x.id)).toEqual([b.id]);
        // Another user's alert cannot be cancelled through their id.
        expect(await storage.alerts.transition('u2', a.id, 'cancelled', { endedAt: iso(5) })).toBeUndefined();
        expect((await storage.alerts.get('u1', a.id))!.status).toBe('active');
      });

      it('a transition out of active is a compare-and-set: fires once, and a fired alert cannot be cancelled', async () => {
        const a = await storage.alerts.create(alert());
        const [x, y] = await Promise.all([
          storage.alerts.transition('u1', a.id, 'fired', { endedAt: iso(10), firedPrice: 2990.5, deliverySessionId: `alert-${a.id}` }),
          storage.alerts.transition('u1', a.id, 'fired', { endedAt: iso(10), firedPrice: 2990.5, deliverySessionId: `alert-${a.id}` }),
        ]);
        expect([x, y].filter((r) => r !== undefined)).toHaveLength(1);
        expect(await storage.alerts.get('u1', a.id)).toMatchObject({ status: 'fired', endedAt: iso(10), firedPrice: 2990.5, deliverySessionId: `alert-${a.id}` });
        expect(await storage.alerts.transition('u1', a.id, 'cancelled', { endedAt: iso(11) })).toBeUndefined();
        expect(await storage.alerts.countActive('u1')).toBe(0);
        expect(await storage.alerts.listActive()).toEqual([]);
        expect((await storage.alerts.list({ userId: 'u1', status: ['fired', 'expired'] })).map((r) => r.id)).toEqual([a.id]);
        expect(await storage.alerts.list({ userId: 'u1', status: 'active' })).toEqual([]);
      });

      it('refuses bad input naming the field', async () => {
        await expectCode(storage.alerts.create(alert({ condition: 'sideways' })), 'INVALID_ARGUMENT', 'alert.condition');
        await expectCode(storage.alerts.create(alert({ threshold: -1 })), 'INVALID_ARGUMENT', 'alert.threshold');
        await expectCode(storage.alerts.create(alert({ condition: 'move_pct', basePrice: undefined })), 'INVALID_ARGUMENT', 'alert.basePrice');
        await expectCode(storage.alerts.create(alert({ userId: '' })), 'INVALID_ARGUMENT', 'alert.userId');
        await expectCode(storage.alerts.list({ userId: 'u1', status: 'gone' as never }), 'INVALID_ARGUMENT', 'status');
        await expectCode(storage.alerts.get('u1', 0), 'INVALID_ARGUMENT', 'id');
        await expectCode(storage.alerts.transition('u1', 1, 'active' as never, { endedAt: iso(1) }), 'INVALID_ARGUMENT', 'to');
      });
    });

    describe('artifacts and files', () => {
      const A = { userId: 'u1' };
      const B = { userId: 'u2' };
      it('walks one status path per artifact, scoped by user: another user reads nothing and changes nothing', async () => {
        const a = await storage.artifacts.insert(A, { id: 'x-1', kind: 'chart', title: 'BTC <b>', sessionId: 's1', turnId: 't1', createdAt: iso(0) });
        expect(a).toEqual({ id: 'x-1', userId: 'u1', kind: 'chart', status: 'running', title: 'BTC <b>', sessionId: 's1', turnId: 't1', createdAt: iso(0), updatedAt: iso(0) });
        await storage.artifacts.insert(A, { id: 'r-1', kind: 'report', createdAt: iso(1) });
        await storage.artifacts.insert(B, { id: 'x-2', kind: 'spreadsheet', createdAt: iso(2) });
        await expectCode(storage.artifacts.insert(B, { id: 'x-1', kind: 'chart', createdAt: iso(3) }), 'STORAGE_ERROR', 'x-1');
        expect(await storage.artifacts.get(B, 'x-1')).toBeUndefined();
        expect(await storage.artifacts.markCompleted(B, 'x-1', { dataJson: '{}', at: iso(4) })).toBeUndefined();
        const done = await storage.artifacts.markCompleted(A, 'x-1', { dataJson: '{"spec":{}}', at: iso(5) });
        expect(done).toMatchObject({ status: 'completed', dataJson: '{"spec":{}}', updatedAt: iso(5) });
        // Completed is terminal.
        expect(await storage.artifacts.markError(A, 'x-1', { error: 'late', at: iso(6) })).toBeUndefined();
        expect(await storage.artifacts.markError(A, 'r-1', { error: 'bad markdown', at: iso(7) })).toMatchObject({ status: 'error', error: 'bad markdown' });
        expect((await storage.artifacts.list(A)).map((r) => r.id)).toEqual(['r-1', 'x-1']);
        expect((await storage.artifacts.list(A, { kind: 'chart' })).map((r) => r.id)).toEqual(['x-1']);
        expect((await storage.artifacts.list(A, { sessionId: 's1', limit: 1 })).map((r) => r.id)).toEqual(['x-1']);
        expect((await storage.artifacts.list(B)).map((r) => r.id)).toEqual(['x-2']);
        await expectCode(storage.artifacts.insert(A, { id: 'x-3', kind: 'table' as never, createdAt: iso(0) }), 'INVALID_ARGUMENT', 'artifact.kind');
        await expectCode(storage.artifacts.get({ userId: '' }, 'x-1'), 'INVALID_ARGUMENT', 'scope.userId');
        await expectCode(storage.artifacts.list(A, { limit: 0 }), 'INVALID_ARGUMENT', 'limit');
      });

      it('keeps file metadata per user: put once, get, list newest first, delete only your own', async () => {
        const rec = { key: 'f-1.png', mediaType: 'image/png', declaredType: 'text/plain', filename: 'chart.png', sizeBytes: 10, sha256: 'a'.repeat(64), location: 'ab/f-1.png', createdAt: iso(0) };
        expect(await storage.files.put(A, rec)).toEqual({ ...rec, userId: 'u1' });
        await storage.files.put(A, { ...rec, key: 'f-2.csv', mediaType: 'text/csv', declaredType: undefined, createdAt: iso(1) });
        await expectCode(storage.files.put(B, rec), 'STORAGE_ERROR', 'f-1.png');
        expect(await storage.files.get(B, 'f-1.png')).toBeUndefined();
        expect(await storage.files.get(A, 'f-2.csv')).not.toHaveProperty('declaredType');
        expect((await storage.files.list(A)).map((f) => f.key)).toEqual(['f-2.csv', 'f-1.png']);
        expect(await storage.files.delete(B, 'f-1.png')).toBe(false);
        expect(await storage.files.delete(A, 'f-1.png')).toBe(true);
        expect(await storage.files.get(A, 'f-1.png')).toBeUndefined();
        await expectCode(storage.files.put(A, { ...rec, key: 'f-3', sizeBytes: -1 }), 'INVALID_ARGUMENT', 'record.sizeBytes');
        await expectCode(storage.files.put(A, { ...rec, key: '' }), 'INVALID_ARGUMENT', 'record.key');
      });
    });

    describe('close', () => {
      it('fails every later call with StorageError "storage is closed"; close itself is idempotent', async () => {
        await storage.conversations.ensureSession({ id: 's1', now: iso(0) });
        await storage.close();
        await storage.close();
        const calls: Array<[string, () => Promise<unknown>]> = [
          ['meta.getInstance', () => storage.meta.getInstance()],
          ['meta.get', () => storage.meta.get('k')],
          ['meta.set', () => storage.meta.set('k', 'v')],
          ['meta.delete', () => storage.meta.delete('k')],
          ['audit.append', () => storage.audit.append(auditEntry())],
          ['audit.query', () => storage.audit.query()],
          ['audit.count', () => storage.audit.count()],
          ['approvals.create', () => storage.approvals.create(approvalRecord())],
          ['approvals.get', () => storage.approvals.get('apr_1')],
          ['approvals.list', () => storage.approvals.list()],
          ['approvals.transition', () => storage.approvals.transition('apr_1', ['pending'], 'approved')],
          ['grants.create', () => storage.grants.create(grantRecord())],
          ['grants.get', () => storage.grants.get('grt_1')],
          ['grants.list', () => storage.grants.list()],
          ['grants.revoke', () => storage.grants.revoke('grt_1', iso(1))],
          ['conversations.ensureSession', () => storage.conversations.ensureSession({ id: 's9', now: iso(0) })],
          ['conversations.getSession', () => storage.conversations.getSession('s1')],
          ['conversations.listSessions', () => storage.conversations.listSessions()],
          ['conversations.appendMessages', () => storage.conversations.appendMessages('s1', [message('x')])],
          ['conversations.listMessages', () => storage.conversations.listMessages('s1')],
          ['conversations.replaceMessages', () => storage.conversations.replaceMessages('s1', [])],
          ['conversations.deleteSession', () => storage.conversations.deleteSession('s1')],
          ['jobs.listRuns', () => storage.jobs.listRuns()],
          ['jobs.claimRun', () => storage.jobs.claimRun({ jobId: 'j', slot: 's', owner: 'o', now: iso(0), leaseUntil: iso(1) })],
          ['workflows.listRuns', () => storage.workflows.listRuns()],
          ['alerts.listActive', () => storage.alerts.listActive()],
          ['artifacts.get', () => storage.artifacts.get({ userId: 'u1' }, 'x-1')],
          ['files.list', () => storage.files.list({ userId: 'u1' })],
          ['schemaVersions', () => storage.schemaVersions()],
        ];
        for (const [operation, call] of calls) {
          const e = await expectCode(call(), 'STORAGE_ERROR', 'storage is closed');
          expect(e.name, operation).toBe('StorageError');
          expect(e.message, operation).toContain(operation);
        }
      });
    });
  });
}
