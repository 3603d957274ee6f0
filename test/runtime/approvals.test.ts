import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createToolRegistry } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { recordEvents } from '@minara/agent/testing';
import { financeTools, setup } from './helpers';

const swap = { toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } };

describe('approvals across turns and restarts', () => {
  it('a confirmation ends the turn with a persisted, signed approval request; a new runtime on the same database resumes it', async () => {
    const db = path.join(mkdtempSync(path.join(tmpdir(), 'minara-rt-')), 'minara.db');
    const storage1 = createSqliteStorage({ path: db });
    const first = setup([{ toolCalls: [swap] }, { text: 'should not be reached' }], { storage: storage1 });
    const r1 = await recordEvents(first.runtime.run({ sessionId: 'trade-1', message: 'swap 50 USDC to ETH' }));
    const request = r1.ofType('approval-request')[0]!;
    expect(request).toMatchObject({ toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true }, tier: 2 });
    const end1 = r1.ofType('turn-end')[0]!;
    expect(end1.stopReason).toBe('approval-required');
    expect(end1.pendingApprovals.map((p) => p.approvalId)).toEqual([request.approvalId]);
    expect(first.model.calls).toHaveLength(1);
    expect(first.ledger.calls).toEqual([]);
    await storage1.close();

    // "Restart": new storage connection, new registry, new runtime, new model.
    const storage2 = createSqliteStorage({ path: db });
    const second = setup([{ text: 'Done: swapped 50 USDC to ETH.' }], { storage: storage2 });
    const r2 = await recordEvents(second.runtime.run({ sessionId: 'trade-1', approvals: [{ approvalId: request.approvalId, approved: true }] }));
    expect(r2.ofType('tool-result')[0]).toMatchObject({ toolName: 'swap_tokens', output: { ok: true, data: { filled: true } } });
    expect(r2.ofType('turn-end')[0]!.stopReason).toBe('finished');
    expect(second.ledger.calls).toEqual(['swap:USDC->ETH:50']);
    // The model saw the outcome in place of the APPROVAL_REQUIRED result.
    const toolMessages = JSON.stringify(second.model.calls[0]!.prompt.filter((m) => m.role === 'tool'));
    expect(toolMessages).toContain('"filled":true');
    expect(toolMessages).not.toContain('APPROVAL_REQUIRED');
    const audit = await storage2.audit.query({ toolName: 'swap_tokens' });
    expect(audit.map((a) => a.decision).sort()).toEqual(['approval_required', 'approved', 'executing']);
    // The same approval cannot be used again.
    const third = setup([{ text: 'nope' }], { storage: storage2 });
    const r3 = await recordEvents(third.runtime.run({ sessionId: 'trade-1', approvals: [{ approvalId: request.approvalId, approved: true }] }));
    expect(r3.ofType('tool-blocked')[0]!.code).toBe('APPROVAL_ALREADY_USED');
    expect(third.ledger.calls).toEqual([]);
    await storage2.close();
  });

  it('a denial executes nothing and the model is told', async () => {
    const { runtime, ledger, model } = setup([{ toolCalls: [swap] }, { text: 'Understood, I did not swap.' }]);
    const { pendingApprovals } = await runtime.generate({ sessionId: 'd1', message: 'swap' });
    const r = await recordEvents(runtime.run({ sessionId: 'd1', approvals: [{ approvalId: pendingApprovals[0]!.approvalId, approved: false, reason: 'changed my mind' }] }));
    expect(r.ofType('tool-blocked')[0]).toMatchObject({ code: 'APPROVAL_DENIED' });
    expect(ledger.calls).toEqual([]);
    expect(JSON.stringify(model.calls[1]!.prompt)).toContain('APPROVAL_DENIED');
    expect(r.text).toBe('Understood, I did not swap.');
  });

  it('the resumed call is re-checked against the current policy: an emergency stop engaged meanwhile wins', async () => {
    const { runtime, ledger, tools } = setup([{ toolCalls: [swap] }, { text: 'blocked, sorry' }]);
    const { pendingApprovals } = await runtime.generate({ sessionId: 'p1', message: 'swap' });
    await tools.emergencyStop.engage('market halt');
    const r = await recordEvents(runtime.run({ sessionId: 'p1', approvals: [{ approvalId: pendingApprovals[0]!.approvalId, approved: true }] }));
    expect(r.ofType('tool-blocked')[0]!.code).toBe('EMERGENCY_STOP');
    expect(ledger.calls).toEqual([]);
  });

  it('an approval from another session is refused', async () => {
    const { runtime } = setup([{ toolCalls: [swap] }, { text: 'x' }]);
    const { pendingApprovals } = await runtime.generate({ sessionId: 'owner', message: 'swap' });
    const r = await recordEvents(runtime.run({ sessionId: 'intruder', message: 'hi', approvals: [{ approvalId: pendingApprovals[0]!.approvalId, approved: true }] }));
    expect(r.ofType('error')[0]!.code).toBe('APPROVAL_INVALID');
  });

  it('pending approvals are listed in the dynamic prompt tail of the next turn', async () => {
    const { runtime, model } = setup([{ toolCalls: [swap] }, { text: 'still waiting' }]);
    await runtime.generate({ sessionId: 'w1', message: 'swap' });
    await runtime.generate({ sessionId: 'w1', message: 'what now?' });
    const system = model.calls[1]!.prompt.filter((m) => m.role === 'system').map((m) => String(m.content));
    expect(system.some((t) => t.includes("Waiting for the user's confirmation") && t.includes('swap_tokens'))).toBe(true);
  });

  it('a fund-moving call after analysis in the same turn asks for a fresh approval even with a session grant', async () => {
    const storage = setup([]).storage;
    const ledger = { calls: [] as string[], sessions: [] as string[] };
    const tools = createToolRegistry({ tools: financeTools(ledger), storage });
    const a = setup([{ toolCalls: [swap] }], { storage, tools });
    const { pendingApprovals } = await a.runtime.generate({ sessionId: 'b1', message: 'swap' });
    const b = setup([{ text: 'ok' }, { toolCalls: [{ toolName: 'tool_invoke', input: { name: 'analyze_token', args: { symbol: 'ETH' } } }] }, { toolCalls: [swap] }], { storage, tools });
    await b.runtime.generate({ sessionId: 'b1', approvals: [{ approvalId: pendingApprovals[0]!.approvalId, approved: true }] });
    expect(ledger.calls).toEqual(['swap:USDC->ETH:50']);
    const r = await recordEvents(b.runtime.run({ sessionId: 'b1', message: 'analyse ETH then swap again' }));
    expect(r.ofType('approval-request')[0]!.reason).toMatch(/analysis/);
    expect(ledger.calls).toHaveLength(1);
  });
});

describe('approvals across OS processes', () => {
  it('a turn stops for approval in one process and the approved call runs in another', async () => {
    const { execFile } = await import('node:child_process');
    const { promisify } = await import('node:util');
    const { existsSync, readFileSync } = await import('node:fs');
    const run = promisify(execFile);
    const fixture = new URL('./fixtures/turn-process.ts', import.meta.url).pathname;
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-xproc-'));
    const db = path.join(dir, 'minara.db');
    const marker = path.join(dir, 'opened.log');
    const a = JSON.parse((await run(process.execPath, ['--import', 'tsx', fixture, 'request', db, marker])).stdout) as { stopReason: string; pending: string[] };
    expect(a.stopReason).toBe('approval-required');
    expect(existsSync(marker)).toBe(false);
    const b = JSON.parse((await run(process.execPath, ['--import', 'tsx', fixture, 'resume', db, marker, a.pending[0]!])).stdout) as { stopReason: string; text: string };
    expect(b).toMatchObject({ stopReason: 'finished', text: 'Your ETH position is open.' });
    expect(readFileSync(marker, 'utf8')).toMatch(/^opened ETH 100/);
  }, 60_000);
});
