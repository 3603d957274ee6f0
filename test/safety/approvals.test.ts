import { describe, expect, it } from 'vitest';
import { ApprovalError, createToolCallContext, createToolRegistry, hashToolInput, MinaraError } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { parse, sampleTools } from '../tools/helpers';

function setup() {
  let now = new Date('2026-03-01T12:00:00Z');
  const log: string[] = [];
  const storage = createInMemoryStorage();
  const registry = createToolRegistry({ tools: sampleTools(log), storage, now: () => now, approvalTtlMs: 60_000 });
  const ctx = createToolCallContext({ sessionId: 's1' });
  const request = async (args: unknown = { address: '0xabc', amount: 5 }) => {
    const r = parse(await registry.dispatch('withdraw', args, { context: ctx, toolCallId: 'call-1' }));
    expect(r.code).toBe('APPROVAL_REQUIRED');
    return r.approval!.approvalId;
  };
  const execute = async (approvalId: string, args: unknown = { address: '0xabc', amount: 5 }, toolCallId?: string) =>
    parse(await registry.dispatch('withdraw', args, { context: createToolCallContext({ sessionId: 's1' }), approvalId, ...(toolCallId ? { toolCallId } : {}) }));
  return { storage, registry, log, request, execute, advance: (ms: number) => { now = new Date(now.getTime() + ms); } };
}

describe('approvals', () => {
  it('persist a signed request bound to tool, call id and input hash', async () => {
    const { registry, request } = setup();
    const id = await request();
    const rec = await registry.approvals.get(id);
    expect(rec).toMatchObject({ toolName: 'withdraw', toolCallId: 'call-1', status: 'pending', inputHash: hashToolInput({ address: '0xabc', amount: 5 }), tier: 4, sessionId: 's1' });
    expect(rec!.signature).toMatch(/^[0-9a-f]{64}$/);
    expect((await registry.approvals.list({ status: 'pending' })).map((a) => a.id)).toEqual([id]);
  });

  it('approved → executed once; a replay is refused', async () => {
    const { registry, request, execute, log } = setup();
    const id = await request();
    await registry.approvals.decide(id, { approved: true, reason: 'ok by me' });
    expect((await execute(id, undefined, 'call-1')).ok).toBe(true);
    expect(log).toEqual(['withdraw:0xabc:5']);
    expect((await registry.approvals.get(id))!.status).toBe('executed');
    const replay = await execute(id);
    expect(replay.code).toBe('APPROVAL_ALREADY_USED');
    expect(log).toHaveLength(1);
    const audit = await registry.queryAudit({ toolName: 'withdraw' });
    expect(audit.map((a) => a.decision).sort()).toEqual(['approval_required', 'approved', 'blocked']);
  });

  it('a denied approval executes nothing and is audited as denied', async () => {
    const { registry, request, execute, log } = setup();
    const id = await request();
    await registry.approvals.decide(id, { approved: false, reason: 'no' });
    const r = await execute(id);
    expect(r).toMatchObject({ ok: false, code: 'APPROVAL_DENIED', retryable: false });
    expect(log).toEqual([]);
    expect((await registry.queryAudit({ decision: 'denied' }))).toHaveLength(1);
  });

  it('refuses an undecided, unknown, expired, or input-altered approval', async () => {
    const { registry, request, execute, advance, log } = setup();
    const id = await request();
    expect((await execute(id)).code).toBe('APPROVAL_NOT_DECIDED');
    expect((await execute('apr_does_not_exist')).code).toBe('APPROVAL_NOT_FOUND');
    await registry.approvals.decide(id, { approved: true });
    expect((await execute(id, { address: '0xEVIL', amount: 5 })).code).toBe('APPROVAL_INVALID');
    expect((await execute(id, { address: '0xabc', amount: 500 })).code).toBe('APPROVAL_INVALID');
    expect((await execute(id, undefined, 'another-call')).code).toBe('APPROVAL_INVALID');
    advance(61_000);
    expect((await execute(id)).code).toBe('APPROVAL_EXPIRED');
    expect((await registry.approvals.get(id))!.status).toBe('expired');
    expect(log).toEqual([]);
  });

  it('cannot be decided after expiry', async () => {
    const { registry, request, advance } = setup();
    const id = await request();
    advance(61_000);
    await expect(registry.approvals.decide(id, { approved: true })).rejects.toMatchObject({ code: 'APPROVAL_EXPIRED' });
  });

  it('an approval for one tool cannot run another', async () => {
    const { registry, request, log } = setup();
    const id = await request();
    await registry.approvals.decide(id, { approved: true });
    const r = parse(await registry.dispatch('open_perps_position', { symbol: 'BTC', sizeUsd: 1 }, { approvalId: id, context: createToolCallContext({ sessionId: 's1' }) }));
    expect(r.code).toBe('APPROVAL_INVALID');
    expect(log).toEqual([]);
  });

  it('refuses forged records: a row inserted without the instance key, or a status flipped in storage', async () => {
    const { registry, storage, request, execute, log } = setup();
    // Forged row: correct shape, made-up signature.
    await storage.approvals.create({
      id: 'apr_forged', toolName: 'withdraw', toolCallId: 'x', inputHash: hashToolInput({ address: '0xabc', amount: 5 }), inputJson: '{}', tier: 4,
      source: 'user', reason: 'r', status: 'approved', createdAt: '2026-03-01T12:00:00.000Z', expiresAt: '2099-01-01T00:00:00.000Z',
      signature: 'f'.repeat(64), decidedAt: '2026-03-01T12:00:00.000Z', decisionSignature: 'e'.repeat(64),
    });
    expect((await execute('apr_forged')).code).toBe('APPROVAL_INVALID');
    // Genuine request, but approved by writing storage directly instead of through decide().
    const id = await request();
    await storage.approvals.transition(id, ['pending'], 'approved', { decidedAt: new Date().toISOString(), decisionSignature: '0'.repeat(64) });
    expect((await execute(id)).code).toBe('APPROVAL_INVALID');
    expect(log).toEqual([]);
    await expect(registry.approvals.decide('apr_forged', { approved: true })).rejects.toSatisfy((e) => ApprovalError.prototype.isPrototypeOf(e as object) || MinaraError.isInstance(e));
  });

  it('two concurrent consumers: exactly one executes', async () => {
    const { registry, request, execute, log } = setup();
    const id = await request();
    await registry.approvals.decide(id, { approved: true });
    const results = await Promise.all([execute(id), execute(id), execute(id)]);
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(log).toHaveLength(1);
  });

  it('validates decide() input', async () => {
    const { registry, request } = setup();
    const id = await request();
    await expect(registry.approvals.decide(id, { approved: 'yes' as never })).rejects.toThrow(/approved/);
    await registry.approvals.decide(id, { approved: true });
    await expect(registry.approvals.decide(id, { approved: false })).rejects.toThrow(/already approved/);
  });
});
