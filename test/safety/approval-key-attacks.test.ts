import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  createApp, createToolCallContext, createToolRegistry, defaultApprovalKeyPath, defineTool, parseApprovalKey, parseEnvelope, PermissionTier, resolveApprovalKey,
} from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

// Attacks by someone who can read and write the SQLite file (issue: the signing key lives in the database it
// protects; the execution state and the stored arguments are not signed).

interface Env { ok: boolean; code?: string; approval?: { approvalId: string } }
const parse = (json: string) => parseEnvelope(json) as unknown as Env;
const hmac = (key: Uint8Array, text: string) => createHmac('sha256', key).update(text).digest('hex');

function world() {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-key-'));
  const dbPath = path.join(dir, 'minara.db');
  const storage = createSqliteStorage({ path: dbPath });
  const sent: number[] = [];
  const registry = createToolRegistry({
    storage,
    approvalKey: randomBytes(32),
    tools: [defineTool({
      name: 'withdraw_all', toolSet: 'transfer', description: 'Withdraw', permissionTier: PermissionTier.MANUAL_ONLY,
      inputSchema: z.object({ usd: z.number() }), execute: ({ usd }) => { sent.push(usd); return { sent: usd }; },
    })],
  });
  const ctx = createToolCallContext({ sessionId: 's1', source: 'user' });
  const raw = () => new Database(dbPath);
  return { dir, storage, registry, ctx, sent, raw };
}

describe('the approval key is outside the database', () => {
  it('reading the database is not enough to forge an approved MANUAL_ONLY approval', async () => {
    const { registry, ctx, sent, raw, storage } = world();
    const ask = parse(await registry.dispatch('withdraw_all', { usd: 1_000_000 }, { context: ctx, toolCallId: 'c1' }));
    const id = ask.approval!.approvalId;
    await storage.meta.getInstance(); // the database still holds an instance key; it no longer signs approvals
    const db = raw();
    const key = db.prepare('SELECT hmac_key FROM instance_meta').pluck().get() as Buffer;
    const decidedAt = new Date().toISOString();
    db.prepare("UPDATE approvals SET status = 'approved', decided_at = ?, decision_signature = ? WHERE id = ?").run(decidedAt, hmac(key, `v1|${id}|approved|${decidedAt}`), id);
    db.close();
    const r = parse(await registry.dispatch('withdraw_all', { usd: 1_000_000 }, { context: ctx, toolCallId: 'c1', approvalId: id }));
    expect(r.code).toBe('APPROVAL_INVALID');
    expect(sent).toEqual([]);
    await storage.close();
  });

  it('flipping executed back to approved does not replay a used approval', async () => {
    const { registry, ctx, sent, raw, storage } = world();
    const ask = parse(await registry.dispatch('withdraw_all', { usd: 10 }, { context: ctx, toolCallId: 'c1' }));
    const id = ask.approval!.approvalId;
    await registry.approvals.decide(id, { approved: true });
    expect(parse(await registry.dispatch('withdraw_all', { usd: 10 }, { context: ctx, toolCallId: 'c1', approvalId: id })).ok).toBe(true);
    const db = raw();
    db.prepare("UPDATE approvals SET status = 'approved' WHERE id = ?").run(id);
    db.close();
    const replay = parse(await registry.dispatch('withdraw_all', { usd: 10 }, { context: ctx, toolCallId: 'c1', approvalId: id }));
    expect(replay.code).toBe('APPROVAL_ALREADY_USED');
    // Marking a never-executed approval as executed without the key's signature is refused too.
    const ask2 = parse(await registry.dispatch('withdraw_all', { usd: 20 }, { context: ctx, toolCallId: 'c2' }));
    const db2 = raw();
    db2.prepare("UPDATE approvals SET status = 'executed', executed_at = ? WHERE id = ?").run(new Date().toISOString(), ask2.approval!.approvalId);
    db2.close();
    await expect(registry.approvals.decide(ask2.approval!.approvalId, { approved: true })).rejects.toMatchObject({ code: 'APPROVAL_INVALID' });
    expect(sent).toEqual([10]);
    await storage.close();
  });

  it('the arguments an approver is shown are the ones the signature binds', async () => {
    const { registry, ctx, sent, raw, storage } = world();
    const ask = parse(await registry.dispatch('withdraw_all', { usd: 900_000 }, { context: ctx, toolCallId: 'c1' }));
    const id = ask.approval!.approvalId;
    const db = raw();
    db.prepare('UPDATE approvals SET input_json = ? WHERE id = ?').run(JSON.stringify({ usd: 9 }), id);
    db.close();
    await expect(registry.approvals.decide(id, { approved: true })).rejects.toMatchObject({ code: 'APPROVAL_INVALID' });
    expect(sent).toEqual([]);
    await storage.close();
  });
});

describe('resolveApprovalKey', () => {
  it('takes MINARA_APPROVAL_KEY (hex or base64) and never echoes a malformed one', () => {
    const hex = randomBytes(32).toString('hex');
    const r = resolveApprovalKey({ env: { MINARA_APPROVAL_KEY: hex }, dataDir: '/nonexistent/data' });
    expect(r.source).toBe('env');
    expect(Buffer.from(r.key).toString('hex')).toBe(hex);
    expect(Buffer.from(parseApprovalKey(randomBytes(32).toString('base64'))).length).toBe(32);
    expect(() => parseApprovalKey('s3cr3t-too-short')).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID', message: expect.not.stringContaining('s3cr3t') }));
  });

  it('creates a 0600 key file beside (not inside) the data dir on first run, and reads the same key after', () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'minara-kf-')), 'data');
    const first = resolveApprovalKey({ env: {}, dataDir });
    expect(first.source).toBe('created');
    expect(first.path).toBe(defaultApprovalKeyPath(dataDir));
    expect(path.dirname(first.path!)).toBe(path.dirname(dataDir));
    expect(statSync(first.path!).mode & 0o777).toBe(0o600);
    const again = resolveApprovalKey({ env: {}, dataDir });
    expect(again.source).toBe('file');
    expect(Buffer.from(again.key).equals(Buffer.from(first.key))).toBe(true);
    expect(readFileSync(first.path!, 'utf8').trim()).toHaveLength(64);
  });

  it('refuses a key file other users can read, and production without a key', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-kf-'));
    const file = path.join(dir, 'k');
    writeFileSync(file, randomBytes(32).toString('hex'));
    chmodSync(file, 0o644);
    expect(() => resolveApprovalKey({ env: { MINARA_APPROVAL_KEY_FILE: file }, dataDir: dir })).toThrow(/chmod 600/);
    expect(() => resolveApprovalKey({ env: { NODE_ENV: 'production' }, dataDir: path.join(dir, 'data') })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
  });

  it('in production a fund-moving tool is refused without a key, and createApp does not start', async () => {
    const tool = defineTool({
      name: 'pay', toolSet: 'trade', description: 'x', inputSchema: z.object({ usd: z.number() }), permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
      orderFacts: ({ usd }) => ({ notionalUsd: usd, asset: 'USD', side: 'transfer' }), preview: () => 'p', execute: () => 1,
    });
    expect(() => createToolRegistry({ tools: [tool], production: true })).toThrow(/approval key outside the database/);
    expect(() => createToolRegistry({ tools: [tool], production: true, approvalKey: randomBytes(32) })).not.toThrow();
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'minara-prod-')), 'data');
    await expect(createApp({ env: { NODE_ENV: 'production', MINARA_DATA_DIR: dataDir }, envFileDir: false, model: createScriptedModel([]) })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });
});

describe('attack 9 (issue 33): in production every tool of tier ALWAYS_CONFIRM or above needs the key outside the database', () => {
  const forgeWithDatabaseKey = async (storage: ReturnType<typeof createInMemoryStorage>) => (await storage.meta.getInstance()).hmacKey;

  it('a MANUAL_ONLY tool that is not fund-moving, an ALWAYS_CONFIRM tool and a tool whose tier tierFor raises are refused without a key', () => {
    const wire = defineTool({ name: 'wire', toolSet: 'ops', description: 'Wire money out', inputSchema: z.object({ to: z.string() }), permissionTier: PermissionTier.MANUAL_ONLY, execute: () => 'sent' });
    const lever = defineTool({ name: 'set_leverage', toolSet: 'ops', description: 'x', inputSchema: z.object({ x: z.number() }), permissionTier: PermissionTier.ALWAYS_CONFIRM, execute: () => 1 });
    const release = defineTool({
      name: 'release_stop', toolSet: 'system', description: 'x', inputSchema: z.object({ action: z.enum(['status', 'release']) }), permissionTier: PermissionTier.READ_ONLY,
      tierFor: (i) => (i.action === 'release' ? PermissionTier.MANUAL_ONLY : PermissionTier.READ_ONLY), emergencyStopControl: true, execute: () => 1,
    });
    for (const tool of [wire, lever, release]) {
      expect(() => createToolRegistry({ tools: [tool], production: true }), tool.name).toThrow(/approval key outside the database/);
      expect(() => createToolRegistry({ tools: [tool], production: true, approvalKey: randomBytes(32) }), tool.name).not.toThrow();
      expect(() => createToolRegistry({ tools: [tool] }), tool.name).not.toThrow();
    }
    // Registered later (an MCP server's tier-4 tool): refused the same way.
    const registry = createToolRegistry({ tools: [], production: true });
    expect(() => registry.register(wire)).toThrow(/approval key outside the database/);
  });

  it('a call a hook raises to ALWAYS_CONFIRM does not run on an approval forged with the database key', async () => {
    const ran: string[] = [];
    const storage = createInMemoryStorage();
    const note = defineTool({ name: 'note', toolSet: 'ops', description: 'x', inputSchema: z.object({ text: z.string() }), permissionTier: PermissionTier.READ_ONLY, execute: ({ text }) => { ran.push(text); return 'ok'; } });
    const registry = createToolRegistry({
      storage, production: true, tools: [note],
      hooks: [{ name: 'raise', before: (call) => (call.tool.name === 'note' ? { raiseTier: PermissionTier.ALWAYS_CONFIRM, reason: 'notes are sensitive today' } : undefined) }],
    });
    const ctx = createToolCallContext({ sessionId: 's-prod', source: 'user' });
    const first = await registry.dispatchDetailed('note', { text: 'x' }, { context: ctx, toolCallId: 'c1' });
    expect(first.envelope).toMatchObject({ ok: false, code: 'TOOL_BLOCKED' });
    expect(first.approval).toBeUndefined();
    expect(await forgeWithDatabaseKey(storage)).toBeTruthy(); // the database key exists, and signs nothing that runs
    expect(ran).toEqual([]);
  });
});

describe('audit before the side effect', () => {
  function payTool(execute: () => unknown) {
    return defineTool({
      name: 'pay', toolSet: 'trade', description: 'Pay', inputSchema: z.object({ usd: z.number() }), permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
      orderFacts: ({ usd }) => ({ notionalUsd: usd, asset: 'USD', side: 'transfer', destination: 'acct-1' }), preview: () => 'p', execute,
    });
  }

  it('an `executing` row is in the database, readable from another connection, while the handler is still running', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-exec-'));
    const dbPath = path.join(dir, 'minara.db');
    const storage = createSqliteStorage({ path: dbPath });
    let release!: () => void;
    const started = new Promise<void>((resolveStarted) => {
      const handlerGate = new Promise<void>((r) => { release = r; });
      const registry = createToolRegistry({ storage, approvalKey: randomBytes(32), tools: [payTool(async () => { resolveStarted(); await handlerGate; return { paid: true }; })] });
      const ctx = createToolCallContext({ sessionId: 's1', source: 'user' });
      void (async () => {
        const ask = parse(await registry.dispatch('pay', { usd: 5, confirm: true }, { context: ctx, toolCallId: 'c1' }));
        await registry.approvals.decide(ask.approval!.approvalId, { approved: true });
        await registry.dispatch('pay', { usd: 5, confirm: true }, { context: ctx, toolCallId: 'c1', approvalId: ask.approval!.approvalId });
      })();
    });
    await started;
    // The "kill" moment: the handler is mid-flight. Another process opening the file sees the row.
    const other = new Database(dbPath, { readonly: true });
    const rows = other.prepare("SELECT decision, approval_id FROM audit_log WHERE tool_name = 'pay' ORDER BY id").all() as Array<{ decision: string; approval_id: string | null }>;
    other.close();
    expect(rows.map((r) => r.decision)).toEqual(['approval_required', 'executing']);
    expect(rows[1]!.approval_id).not.toBeNull();
    release();
    await new Promise((r) => setTimeout(r, 20));
    expect((await storage.audit.query({ toolName: 'pay' })).map((r) => r.decision).sort()).toEqual(['approval_required', 'approved', 'executing']);
    await storage.close();
  });

  it('a handler that throws leaves `executing` then `error`; an audit log that cannot be written stops the call', async () => {
    const { createInMemoryStorage } = await import('@minara/agent/testing');
    const storage = createInMemoryStorage();
    const registry = createToolRegistry({ storage, tools: [payTool(() => { throw new Error('bank down'); })] });
    const ctx = createToolCallContext({ sessionId: 's1', source: 'user' });
    const ask = parse(await registry.dispatch('pay', { usd: 5, confirm: true }, { context: ctx, toolCallId: 'c1' }));
    await registry.approvals.decide(ask.approval!.approvalId, { approved: true });
    await registry.dispatch('pay', { usd: 5, confirm: true }, { context: ctx, toolCallId: 'c1', approvalId: ask.approval!.approvalId });
    expect((await storage.audit.query({ toolName: 'pay' })).map((r) => r.decision).reverse()).toEqual(['approval_required', 'executing', 'error']);

    let ran = 0;
    const broken = createInMemoryStorage();
    const failing = { ...broken, audit: { ...broken.audit, append: async () => { throw new Error('disk full'); } } };
    const r2 = createToolRegistry({ storage: failing, tools: [payTool(() => { ran++; return 1; })] });
    const ask2 = parse(await r2.dispatch('pay', { usd: 5, confirm: true }, { context: ctx, toolCallId: 'c1' }));
    await r2.approvals.decide(ask2.approval!.approvalId, { approved: true });
    const out = parse(await r2.dispatch('pay', { usd: 5, confirm: true }, { context: ctx, toolCallId: 'c1', approvalId: ask2.approval!.approvalId }));
    expect(out.code).toBe('TOOL_BLOCKED');
    expect(ran).toBe(0);
  });
});
