/**
 * A fleet on one PostgreSQL server, with real processes: two gateways (an approval requested through A is
 * approved through B and executes exactly once; an emergency stop engaged on A blocks a fund-moving call on
 * B at once), and two schedulers (each slot of a job due every second runs once between them; kill -9 one
 * and the other keeps running the slots).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '@minara/agent';
import { createPostgresStorage } from '@minara/agent/postgres';
import { realComponent } from '../support/real-component';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres, type RealPostgres } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH');
const ROOT = path.join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'minara-fleet-'));
let own: Promise<RealPostgres> | undefined;
const serverUrl = async (): Promise<string> => realServerUrl() ?? (await (own ??= startRealPostgres())).url;
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (own) (await own).stop();
});

function start(fixture: string, args: string[], env: Record<string, string> = {}): { child: ChildProcess; lines: AsyncIterator<string>; exited: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', fixture), ...args], {
    cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, ...env },
  });
  children.push(child);
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return { child, lines, exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
}

async function expectLine(lines: AsyncIterator<string>, prefix: string): Promise<string> {
  for (;;) {
    const next = await lines.next();
    if (next.done) throw new Error(`process ended before printing "${prefix}"`);
    if (next.value.startsWith(prefix)) return next.value;
  }
}

type Json = Record<string, any>;
const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-minara-user': 'u1', 'x-minara-scopes': 'approvals:decide' }, body: JSON.stringify(body) });
const chat = (id: string, text: string) => ({ id, trigger: 'submit-message', messages: [{ id: `u-${id}`, role: 'user', parts: [{ type: 'text', text }] }] });

describe.runIf(available)('a fleet on one PostgreSQL database (real processes)', () => {
  it('two gateways: an approval requested on A is approved on B and executes exactly once; an emergency stop on A blocks B', async () => {
    const url = await serverUrl();
    const schema = freshSchema('fleet');
    await (await createPostgresStorage({ connectionString: url, schema, logger: silentLogger })).close(); // migrate once up front
    const ledger = path.join(dir, 'ledger.log');
    const swap = { toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } };
    const env = { TEST_APPROVAL_KEY: randomBytes(32).toString('hex') };
    const text = (t: string) => ({ text: t });
    // A requests both approvals; B resumes the first; either resumes the second (a race), so both have spare answers.
    const a = start('gateway-process.ts', [url, schema, ledger, 'A', JSON.stringify([{ toolCalls: [swap] }, { toolCalls: [swap] }, text('Swapped.'), text('Swapped.')])], env);
    const b = start('gateway-process.ts', [url, schema, ledger, 'B', JSON.stringify([text('Swapped 50 USDC to ETH.'), text('Swapped.'), text('Swapped.')])], env);
    const c = start('gateway-process.ts', [url, schema, ledger, 'C', JSON.stringify([{ toolCalls: [swap] }, text('Blocked.')])], env);
    const [urlA, urlB, urlC] = (await Promise.all([a, b, c].map(async (p) => (await expectLine(p.lines, 'url ')).slice(4)))) as [string, string, string];
    const ledgerLines = () => (existsSync(ledger) ? readFileSync(ledger, 'utf8').trim().split('\n').filter((l) => l !== '') : []);
    const pendingOn = async (base: string) => ((await (await fetch(`${base}/v1/approvals?status=pending`, { headers: { 'x-minara-user': 'u1' } })).json()) as Json).approvals as Json[];

    // Requested through A, approved through B: executes once (on B, which resumed the turn); A cannot use it again.
    await (await post(`${urlA}/v1/chat`, chat('trade-1', 'swap 50 USDC to ETH'))).text();
    const [first] = await pendingOn(urlB);
    expect(first).toMatchObject({ toolName: 'swap_tokens', sessionId: 'trade-1', status: 'pending' });
    const onB = await post(`${urlB}/v1/approvals/${first!.id}`, { approved: true });
    expect(onB.status).toBe(200);
    expect(((await onB.json()) as Json).approval).toMatchObject({ id: first!.id, status: 'executed' });
    expect(ledgerLines()).toEqual(['B swap:USDC->ETH:50']);
    expect((await post(`${urlA}/v1/approvals/${first!.id}`, { approved: true })).status).toBe(409);
    expect(ledgerLines()).toHaveLength(1);

    // A second approval, approved on A and B at the same moment: the swap still runs exactly once.
    await (await post(`${urlA}/v1/chat`, chat('trade-2', 'swap 50 USDC to ETH again'))).text();
    const [second] = await pendingOn(urlA);
    const race = await Promise.all([post(`${urlA}/v1/approvals/${second!.id}`, { approved: true }), post(`${urlB}/v1/approvals/${second!.id}`, { approved: true })]);
    expect(race.some((r) => r.status === 200)).toBe(true);
    expect(ledgerLines()).toHaveLength(2);
    const storage = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger });
    expect((await storage.approvals.get(second!.id))?.status).toBe('executed');
    await storage.close();

    // Emergency stop engaged through A: C's very next fund-moving call is blocked.
    a.child.stdin!.write('stop fleet drill\n');
    await expectLine(a.lines, 'stopped');
    const blocked = await (await post(`${urlC}/v1/chat`, chat('trade-3', 'swap again'))).text();
    expect(blocked).toContain('EMERGENCY_STOP');
    expect(ledgerLines()).toHaveLength(2);
    c.child.stdin!.write('quit\n');
    a.child.stdin!.write('quit\n');
    b.child.stdin!.write('quit\n');
    expect(await Promise.all([a.exited, b.exited, c.exited])).toEqual([0, 0, 0]);
  }, 60_000);

  it('two schedulers: each slot of a job due every second runs once between them; after kill -9 of one, the other runs every slot', async () => {
    const url = await serverUrl();
    const schema = freshSchema('sched');
    await (await createPostgresStorage({ connectionString: url, schema, logger: silentLogger })).close();
    const log = path.join(dir, 'runs.log');
    const a = start('runner-process.ts', [url, schema, log, 'a', '60000']);
    const b = start('runner-process.ts', [url, schema, log, 'b', '6000']);
    await Promise.all([expectLine(a.lines, 'started'), expectLine(b.lines, 'started')]);
    // Both run for ~3 s, then a dies hard; b keeps going to its 6 s.
    await new Promise((r) => setTimeout(r, 3_000));
    a.child.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    expect(await b.exited).toBe(0);
    expect(existsSync(log)).toBe(true);
    const lines = readFileSync(log, 'utf8').trim().split('\n').map((l) => l.split(' ') as [string, string]);
    const slots = lines.map(([slot]) => slot);
    // Every slot ran exactly once across the two processes (a job due every second for ~6 s: about 6 runs, not 12).
    expect(new Set(slots).size).toBe(slots.length);
    expect(slots.length).toBeGreaterThanOrEqual(4);
    expect(slots.length).toBeLessThanOrEqual(8);
    // After the kill, b ran the slots on its own.
    const afterKill = lines.filter(([slot]) => Date.parse(slot) > killedAt + 1_000);
    expect(afterKill.length).toBeGreaterThanOrEqual(1);
    expect(afterKill.every(([, who]) => who === 'b')).toBe(true);
    const storage = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger });
    const runs = await storage.jobs.listRuns({ jobId: 'tick', limit: 100 });
    await storage.close();
    expect(new Set(runs.map((r) => r.slot)).size).toBe(runs.length);
    expect(runs.filter((r) => r.outcome === 'ok').length).toBe(slots.length);
  }, 60_000);
});
