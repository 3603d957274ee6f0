/**
 * The audit trail says what happened: each call's outcome (status, order id, fill, transaction hash, error code)
 * and tenant; the signal, skill activations, turn and job run of an autonomous turn under its trace id, so
 * "what did the 14:03 alert do" has an answer (`minara audit trace`, `GET /v1/audit/trace/:id`); list and
 * export (JSONL, CSV) through the SDK, the CLI and the gateway, tenant-scoped.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import {
  AUDIT_CSV_COLUMNS, AUDIT_GENESIS_HASH, AUDIT_KINDS, auditCsvRecord, createApp, createToolCallContext, err, exportAudit, extractAuditOutcome, type MinaraApp, ok, readAuditTrace, silentLogger,
} from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { createScriptedModel } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { runAuditCommand } from '../../cli/audit-command';

describe('extractAuditOutcome: the one normalised reading of a result', () => {
  it('reads an order: status, order id, fill, provider; a preview; a duplicate; nested results and tx hashes', () => {
    const fill = { symbol: 'ETH', side: 'buy', quantity: 0.0166, price: 3012, notionalUsd: 50, feeUsd: 0.05, realizedPnlUsd: -0.05 };
    expect(extractAuditOutcome(ok({ executed: true, orderId: 'co_buy_1', status: 'filled', fill, source: 'paper', simulated: true }), { mode: 'execute', orderFacts: { notionalUsd: 50, asset: 'ETH', side: 'buy' } })).toEqual({
      status: 'filled', orderId: 'co_buy_1', fill: { quantity: 0.0166, priceUsd: 3012, notionalUsd: 50, feeUsd: 0.05, realizedPnlUsd: -0.05, symbol: 'ETH', side: 'buy' },
      orderSide: 'buy', simulated: true, provider: 'paper',
    });
    expect(extractAuditOutcome(ok({ route: 'x', expectedAmountOut: 1 }), { mode: 'preview' })).toEqual({ status: 'preview' });
    expect(extractAuditOutcome(ok({ result: { orderId: 'o2', status: 'duplicate', transactionHash: '0xabc', fill: { qty: 1, price: 2, notional: 2, fee: 0.1 } } }))).toMatchObject({
      status: 'duplicate', orderId: 'o2', txHash: '0xabc', fill: { quantity: 1, priceUsd: 2, notionalUsd: 2, feeUsd: 0.1 },
    });
    expect(extractAuditOutcome(ok({ symbol: 'BTC', priceUsd: 97000 }))).toEqual({ status: 'ok' });
  });

  it('reads failures by decision, and redacts secrets in what it keeps', () => {
    expect(extractAuditOutcome(err('no', { code: 'GRANT_REQUIRED' }), { decision: 'blocked' })).toEqual({ status: 'blocked', errorCode: 'GRANT_REQUIRED' });
    expect(extractAuditOutcome(err('boom', { code: 'PROVIDER_ERROR' }), { decision: 'error' })).toEqual({ status: 'error', errorCode: 'PROVIDER_ERROR' });
    expect(extractAuditOutcome(err('ask', { code: 'APPROVAL_REQUIRED' }), { decision: 'approval_required' })).toMatchObject({ status: 'approval_required' });
    const leaked = extractAuditOutcome(ok({ orderId: 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789', status: 'filled' }));
    expect(leaked.orderId).toMatch(/^\[REDACTED/);
  });
});

const T0 = Date.parse('2026-11-02T14:00:00.000Z');
const dirs: string[] = [];
let app: MinaraApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** An app on SQLite with the paper finance pack, a fake clock and a 14:03 schedule entry; the scripted model works the alert. */
async function alertApp() {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-audit-'));
  dirs.push(dir);
  let t = T0;
  const model = createScriptedModel([
    { toolCalls: [{ toolName: 'activate_skills', input: { ids: ['market.watch'] } }] },
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }, { toolName: 'buy_token', input: { symbol: 'ETH', amountUsd: 20, intent: 'buy 20 USD of ETH', confirm: true } }] },
    { text: 'ETH moved; I could not buy from an alert without the trade tool set.' },
  ]);
  app = await createApp({
    envFileDir: false, env: { MINARA_PERSONALIZATION_REBUILD: 'disabled', MINARA_HEARTBEAT_EVERY: '0' }, logger: silentLogger, model, config: { dataDir: dir }, now: () => new Date(t),
  });
  writeFileSync(path.join(app.workspace!.dir, 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- cron 3 14 * * *: check ETH and buy 20 USD if it dipped\n');
  await app.background.syncSchedule();
  const a = app;
  const run = async (minutes: number) => {
    for (let i = 0; i < minutes; i++) {
      t += 60_000;
      await a.background.tick();
      await a.background.idle();
    }
  };
  return { app: a, run, dir, now: () => new Date(t) };
}

describe('"what did the 14:03 alert do"', () => {
  it('the trace holds the signal, the skills it activated, each call with its result, the turn and the job run, in order', async () => {
    const { app: a, run } = await alertApp();
    await run(5);
    const [job] = await a.storage.audit.query({ kind: 'job_run' });
    expect(job).toMatchObject({ toolName: expect.stringMatching(/^schedule:/), decision: 'allowed', detail: { outcome: 'ok', slot: '2026-11-02T14:03:00.000Z' } });
    const trace = await readAuditTrace(a.storage, job!.traceId!);
    expect(trace.map((r) => `${r.kind}:${r.toolName}`)).toEqual([
      `signal:${job!.toolName}`, 'skill_activation:market.watch', 'tool_call:activate_skills', 'tool_call:buy_token', 'tool_call:get_price', 'turn:turn', `job_run:${job!.toolName}`,
    ]);
    expect(trace[0]).toMatchObject({ source: 'cron', userId: 'default', at: '2026-11-02T14:03:00.000Z' });
    expect(JSON.parse(trace[0]!.argsJson)).toEqual({ message: 'check ETH and buy 20 USD if it dipped' });
    // The alert's message matched a scenario that preloads the market skill; a cron turn is not offered activate_skills
    // or the trade tools, and those attempts are rows too (refused before the gate), with their arguments.
    expect(trace[1]!.detail).toMatchObject({ skillIds: ['market.watch'], via: 'scenario' });
    expect(trace[2]).toMatchObject({ decision: 'blocked', code: 'TOOL_NOT_OFFERED', outcome: { status: 'blocked', errorCode: 'TOOL_NOT_OFFERED' } });
    // (The refused call is recorded as the model's stream reports it, before the result of the call beside it.)
    expect(trace[3]).toMatchObject({ decision: 'blocked', code: 'TOOL_NOT_OFFERED', source: 'cron' });
    expect(JSON.parse(trace[3]!.argsJson)).toMatchObject({ symbol: 'ETH', amountUsd: 20, confirm: true });
    expect(trace[4]!.outcome).toMatchObject({ status: 'ok', simulated: true });
    expect(trace[5]!.detail).toMatchObject({ stopReason: 'finished', toolsUsed: expect.arrayContaining(['get_price']) });
    for (const r of trace) expect(r.chain?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect((await a.storage.audit.verify()).ok).toBe(true);

    // The CLI tells the same story.
    let out = '';
    expect(await runAuditCommand({}, ['trace', job!.traceId!], { app: a, write: (s) => void (out += s) })).toBe(0);
    expect(out).toContain(`Trace ${job!.traceId}: 7 row(s)`);
    expect(out).toMatch(/signal schedule:\w+ from cron: check ETH/);
    expect(out).toContain('skills market.watch (via scenario)');
    expect(out).toMatch(/buy_token .* → blocked: blocked TOOL_NOT_OFFERED/);
    expect(out).toMatch(/job schedule:\w+ ok: answered in/);
  });

  it('an executed order records its fill, order id and tenant; list, export and verify through the CLI', async () => {
    const { app: a, now } = await alertApp();
    await a.tools.grants.create({ toolName: 'buy_token', sources: ['cron'], argLimits: { amountUsd: { max: 50 } } });
    const context = createToolCallContext({ sessionId: 'alice-s', source: 'cron', userId: 'alice', traceId: 't_fill' });
    const done = await a.tools.dispatchDetailed('buy_token', { symbol: 'ETH', amountUsd: 20, intent: 'buy 20 USD of ETH', confirm: true }, { context, toolCallId: 'c1' });
    expect(done.envelope.ok).toBe(true);
    const rows = await a.storage.audit.query({ traceId: 't_fill', toolName: 'buy_token', order: 'oldest' });
    expect(rows.map((r) => r.decision)).toEqual(['executing', 'allowed']);
    const filled = rows[1]!;
    expect(filled).toMatchObject({
      userId: 'alice', toolName: 'buy_token',
      outcome: { status: 'filled', orderId: expect.stringMatching(/^co_buy_token_/), orderSide: 'buy', simulated: true, provider: 'paper', fill: { symbol: 'ETH', side: 'buy', notionalUsd: 20 } },
    });
    expect(filled.outcome!.fill!.quantity).toBeGreaterThan(0);
    expect(filled.outcome!.fill!.priceUsd).toBeGreaterThan(0);
    expect(filled.outcome!.fill!.feeUsd).toBeGreaterThan(0);
    expect(rows[0]!.outcome).toBeUndefined();

    let out = '';
    const write = (s: string) => void (out += s);
    expect(await runAuditCommand({}, ['list'], { app: a, user: 'alice', write })).toBe(0);
    expect(out).toMatch(/tool_call\s+alice\s+buy_token .* → allowed: filled co_buy_token_\S+ [\d.]+ ETH @ \$[\d,.]+ = \$20 fee \$[\d.]+ \(paper\)/);
    out = '';
    expect(await runAuditCommand({}, ['list'], { app: a, tool: 'buy_token', since: '1h', json: true, write, now })).toBe(0);
    expect((JSON.parse(out) as unknown[]).length).toBe(2);
    out = '';
    expect(await runAuditCommand({}, ['export'], { app: a, format: 'csv', user: 'alice', write })).toBe(0);
    const csv = parse(out, { columns: true }) as Record<string, string>[];
    expect(Object.keys(csv[0]!)).toEqual([...AUDIT_CSV_COLUMNS]);
    expect(csv[1]).toMatchObject({ tool_name: 'buy_token', user_id: 'alice', status: 'filled', fill_symbol: 'ETH', fill_notional_usd: '20', decision: 'allowed' });
    out = '';
    expect(await runAuditCommand({}, ['export'], { app: a, format: 'jsonl', trace: 't_fill', write })).toBe(0);
    const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { chain: { seq: number } });
    expect(lines).toHaveLength(3); // executing, the finance safety stack's row, the outcome
    expect(lines[1]!.chain.seq).toBe(lines[0]!.chain.seq + 1);
    out = '';
    expect(await runAuditCommand({}, ['verify'], { app: a, write })).toBe(0);
    expect(out).toMatch(/Audit chain intact: \d+ chained row\(s\) verified\.\nKeyed links \(HMAC-SHA256, key outside the database\) from seq 1\.\n[^\n]*\nHead: \d+:[0-9a-f]{64}/);
    const head = /Head: (\S+)/.exec(out)![1]!;
    out = '';
    expect(await runAuditCommand({}, ['verify'], { app: a, anchor: head, json: true, write })).toBe(0);
    expect(JSON.parse(out)).toMatchObject({ ok: true });
    const file = path.join(path.dirname(a.workspace!.dir), 'audit.jsonl');
    expect(await runAuditCommand({}, ['export'], { app: a, format: 'jsonl', out: file, write, writeErr: () => undefined })).toBe(0);
    expect(readFileSync(file, 'utf8').trim().split('\n').length).toBe(await a.storage.audit.count());
    // Bad input is refused naming the flag, and nothing runs.
    let errText = '';
    expect(await runAuditCommand({}, ['list'], { app: a, since: 'last tuesday', writeErr: (s) => void (errText += s) })).toBe(2);
    expect(errText).toContain('--since');
    expect(await runAuditCommand({}, ['export'], { app: a, format: 'xml', writeErr: (s) => void (errText += s) })).toBe(2);
    expect(errText).toContain('--format');
  });
});

describe('GET /v1/audit is tenant-scoped', () => {
  async function gatewayApp() {
    const { app: a } = await alertApp();
    for (const [userId, tool] of [['alice', 'get_price'], ['bob', 'get_portfolio'], ['bob', 'get_price']] as const) {
      await a.tools.dispatchDetailed(tool, { symbol: 'ETH' }, { context: createToolCallContext({ sessionId: `${userId}-s`, source: 'user', userId, traceId: `t_${userId}` }) });
    }
    const gateway = createGateway({ runtime: a.runtime, storage: a.storage, tools: a.tools, logger: silentLogger, trustUserHeader: true });
    const get = async (p: string, user: string, roles?: string) => {
      const res = await gateway.fetch(new Request(`http://127.0.0.1${p}`, { headers: { 'x-minara-user': user, ...(roles ? { 'x-minara-roles': roles } : {}) } }));
      return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
    };
    return { get };
  }

  it('attack: a tenant lists, filters, exports and traces only their own rows; another user\'s rows and verify are refused', async () => {
    const { get } = await gatewayApp();
    const mine = JSON.parse((await get('/v1/audit', 'alice')).text) as { rows: Array<{ userId: string; toolName: string }> };
    expect(mine.rows.map((r) => `${r.userId}:${r.toolName}`)).toEqual(['alice:get_price']);
    expect(await get('/v1/audit?user=bob', 'alice')).toMatchObject({ status: 403 });
    const traced = JSON.parse((await get('/v1/audit/trace/t_bob', 'alice')).text) as { rows: unknown[] };
    expect(traced.rows).toEqual([]);
    const csv = await get('/v1/audit?format=csv', 'alice');
    expect(csv.type).toContain('text/csv');
    expect(csv.text).not.toContain('bob');
    expect((parse(csv.text, { columns: true }) as unknown[]).length).toBe(1);
    const jsonl = await get('/v1/audit?format=jsonl&tool=get_portfolio', 'alice');
    expect(jsonl.text).toBe('');
    expect(await get('/v1/audit/verify', 'alice')).toMatchObject({ status: 403 });
    expect(await get('/v1/audit?since=yesterday', 'alice')).toMatchObject({ status: 400, text: expect.stringContaining('since') });
    expect(await get('/v1/audit?kind=nope', 'alice')).toMatchObject({ status: 400, text: expect.stringContaining('kind') });
  });

  it('an operator sees every tenant, filters by user and trace, and verifies the chain', async () => {
    const { get } = await gatewayApp();
    const all = JSON.parse((await get('/v1/audit', 'ops', 'operator')).text) as { rows: Array<{ userId?: string }> };
    expect(new Set(all.rows.map((r) => r.userId))).toEqual(new Set(['alice', 'bob']));
    const bob = JSON.parse((await get('/v1/audit?user=bob&limit=1', 'ops', 'operator')).text) as { rows: Array<{ toolName: string; id: number }>; next: number };
    expect(bob.rows.map((r) => r.toolName)).toEqual(['get_price']);
    const older = JSON.parse((await get(`/v1/audit?user=bob&before=${bob.next}`, 'ops', 'operator')).text) as { rows: Array<{ toolName: string }> };
    expect(older.rows.map((r) => r.toolName)).toEqual(['get_portfolio']);
    const trace = JSON.parse((await get('/v1/audit/trace/t_bob', 'ops', 'operator')).text) as { rows: unknown[] };
    expect(trace.rows).toHaveLength(2);
    const verify = await get('/v1/audit/verify', 'ops', 'operator');
    expect(JSON.parse(verify.text)).toMatchObject({ ok: true, checked: 3 });
  });
});

describe('the public names', () => {
  it('AUDIT_KINDS, AUDIT_GENESIS_HASH and auditCsvRecord (one cell per AUDIT_CSV_COLUMNS)', () => {
    expect(AUDIT_KINDS).toEqual(expect.arrayContaining(['tool_call', 'signal', 'skill_activation', 'turn', 'job_run', 'breaker', 'grant', 'stop']));
    expect(AUDIT_GENESIS_HASH).toBe('0'.repeat(64));
    const cells = auditCsvRecord({ id: 3, at: 'x', toolName: 't', tier: 1, source: 'user', decision: 'allowed', durationMs: 1, argsJson: '{}', outcome: { status: 'filled', fill: { priceUsd: 2 } } });
    expect(cells).toHaveLength(AUDIT_CSV_COLUMNS.length);
    expect(cells[AUDIT_CSV_COLUMNS.indexOf('fill_price_usd')]).toBe(2);
    expect(cells[AUDIT_CSV_COLUMNS.indexOf('kind')]).toBe('tool_call');
  });
});

describe('exportAudit', () => {
  it('pages through every row oldest first and refuses an unknown format', async () => {
    const { app: a } = await alertApp();
    for (let i = 0; i < 7; i++) await a.storage.audit.append({ at: new Date(T0 + i).toISOString(), toolName: `t${i}`, tier: 1, source: 'user', decision: 'allowed', durationMs: 1, argsJson: '{"note":"=HYPERLINK(1)"}' });
    let text = '';
    expect(await exportAudit({ storage: a.storage, format: 'csv', pageSize: 3, write: (s) => void (text += s) })).toBe(7);
    const rows = parse(text, { columns: true }) as Record<string, string>[];
    expect(rows.map((r) => r.tool_name)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5', 't6']);
    await expect(exportAudit({ storage: a.storage, format: 'xml' as never, write: () => undefined })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
