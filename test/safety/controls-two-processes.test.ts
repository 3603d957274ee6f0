/**
 * The operator's controls across real processes on one database (issue 34, parts 1, 2, 6), on SQLite and on a
 * real PostgreSQL server: a grant created, a stop engaged and released, a tool set turned off with the real
 * `minara` command in one process are honoured by another process at its very next call (the gate reads storage
 * on every call; no cache to expire), and two processes racing calls under one grant never pass its daily cap.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { realComponent } from '../support/real-component';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres, type RealPostgres } from '../postgres/support';

const ROOT = path.join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'minara-controls-'));
const children: ChildProcess[] = [];
let own: Promise<RealPostgres> | undefined;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  if (own) (await own).stop();
});

interface Engine {
  readonly name: string;
  /** argv of the fixture before the ledger path. */
  fixtureArgs(): Promise<string[]>;
  /** env and args that point `minara` at the same database. */
  cli(): Promise<{ env: Record<string, string>; args: string[] }>;
}

function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(MINARA_|ANTHROPIC_|OPENAI_|GATEWAY_)/.test(k)) env[k] = v;
  return { ...env, NO_COLOR: '1', ...extra };
}

function child(args: string[]) {
  const p = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'controls-process.ts'), ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(p);
  const lines = createInterface({ input: p.stdout! })[Symbol.asyncIterator]();
  const next = async (prefix: string) => {
    for (;;) {
      const n = await lines.next();
      if (n.done) throw new Error(`process ended before printing "${prefix}"`);
      if (n.value.startsWith(prefix)) return n.value.slice(prefix.length).trim();
    }
  };
  return {
    ready: () => next('ready'),
    async call(user: string, amountUsd: number): Promise<string> {
      p.stdin!.write(`call ${user} ${amountUsd}\n`);
      return next('result ');
    },
    async race(user: string, n: number, amountUsd: number): Promise<number> {
      p.stdin!.write(`race ${user} ${n} ${amountUsd}\n`);
      return Number(await next('raced '));
    },
    quit: () => p.stdin!.write('quit\n'),
  };
}

/**
 * The approval key the fixture's registry holds (`fill(7)`): processes sharing a database share it, as a fleet's
 * instances must (the audit log refuses an instance keyed otherwise).
 */
const SHARED_APPROVAL_KEY = '07'.repeat(32);

async function minara(engine: Engine, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { env, args: extra } = await engine.cli();
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args, ...extra], { cwd: ROOT, env: cleanEnv({ MINARA_APPROVAL_KEY: SHARED_APPROVAL_KEY, ...env }), encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const sqlite = (): Engine => {
  const dataDir = mkdtempSync(path.join(dir, 'sqlite-'));
  return {
    name: 'SQLite',
    fixtureArgs: async () => ['sqlite', path.join(dataDir, 'minara.db')],
    cli: async () => ({ env: {}, args: ['--data-dir', dataDir] }),
  };
};
const pgAvailable = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH');
const postgres = (): Engine => {
  const schema = freshSchema('ctl');
  const dataDir = mkdtempSync(path.join(dir, 'pg-'));
  const url = async () => realServerUrl() ?? (await (own ??= startRealPostgres())).url;
  return {
    name: 'PostgreSQL',
    fixtureArgs: async () => ['postgres', await url(), schema],
    cli: async () => ({ env: { MINARA_DATABASE_URL: await url(), MINARA_DATABASE_SCHEMA: schema }, args: ['--data-dir', dataDir] }),
  };
};

const engines: Array<[string, () => Engine, boolean]> = [['SQLite', sqlite, true], ['PostgreSQL', postgres, pgAvailable]];

for (const [name, make, available] of engines) {
  describe.runIf(available)(`operator controls across processes (${name})`, () => {
    it('a grant, a user\'s stop, the global stop and a capability switch set by `minara` apply at the other process\'s next call', async () => {
      const engine = make();
      const ledger = path.join(dir, `ledger-${name}-1.log`);
      // The CLI creates the grant first (and, on a fresh schema, migrates it).
      const created = await minara(engine, ['grants', 'create', '--user', 'alice', '--tools', 'swap_tokens', '--sources', 'cron', '--cap-per-call', '50', '--cap-per-day', '500', '--expires', '7d']);
      expect(created.code, created.stderr).toBe(0);
      expect(created.stdout).toMatch(/^Created grt_/);
      expect((await minara(engine, ['grants', 'create', '--user', 'bob', '--tool-sets', 'trade', '--cap-per-call', '50', '--cap-per-day', '500', '--expires', '7d'])).code).toBe(0);
      const agent = child([...(await engine.fixtureArgs()), ledger]);
      await agent.ready();
      expect(await agent.call('alice', 10)).toBe('ok');
      expect(await agent.call('alice', 60)).toBe('GRANT_CAP_EXCEEDED');

      const stopped = await minara(engine, ['stop', '--user', 'alice', '--reason', 'drill']);
      expect(stopped.code).toBe(0);
      expect(stopped.stdout).toContain("alice's stop: ENGAGED");
      // The other process's very next call, after `minara stop` has returned: blocked for alice only.
      expect(await agent.call('alice', 10)).toBe('EMERGENCY_STOP');
      expect(await agent.call('bob', 10)).toBe('ok');
      expect((await minara(engine, ['stop', '--global'])).code).toBe(0);
      expect(await agent.call('bob', 10)).toBe('EMERGENCY_STOP');
      expect((await minara(engine, ['stop', '--global', '--release'])).code).toBe(0);
      expect(await agent.call('bob', 10)).toBe('ok');
      expect(await agent.call('alice', 10)).toBe('EMERGENCY_STOP');
      expect((await minara(engine, ['stop', '--user', 'alice', '--release'])).code).toBe(0);
      expect(await agent.call('alice', 10)).toBe('ok');

      const off = await minara(engine, ['tools', 'disable', 'trade', '--user', 'bob', '--reason', 'review']);
      expect(off.stdout).toContain('Turned "trade" off for bob.');
      expect(await agent.call('bob', 10)).toBe('TOOL_SET_DISABLED');
      expect(await agent.call('alice', 10)).toBe('ok');
      expect((await minara(engine, ['tools', 'enable', 'trade', '--user', 'bob'])).code).toBe(0);
      expect(await agent.call('bob', 10)).toBe('ok');

      const listed = await minara(engine, ['grants', 'list', '--user', 'alice']);
      expect(listed.stdout).toMatch(/today spent \$30\.00, left \$470\.00/);
      const id = /^(grt_\S+)/.exec(listed.stdout)![1]!;
      expect((await minara(engine, ['grants', 'revoke', id])).stdout).toBe(`Revoked ${id}.\n`);
      expect(await agent.call('alice', 10)).toBe('GRANT_REQUIRED');
      agent.quit();
      expect(readFileSync(ledger, 'utf8').trim().split('\n')).toHaveLength(6);
    }, 240_000);

    it('two processes racing calls under one grant never pass its daily cap together', async () => {
      const engine = make();
      const ledger = path.join(dir, `ledger-${name}-2.log`);
      expect((await minara(engine, ['grants', 'create', '--user', 'alice', '--tools', 'swap_tokens', '--cap-per-call', '10', '--cap-per-day', '55', '--expires', '1d'])).code).toBe(0);
      const a = child([...(await engine.fixtureArgs()), ledger]);
      const b = child([...(await engine.fixtureArgs()), ledger]);
      await Promise.all([a.ready(), b.ready()]);
      const [okA, okB] = await Promise.all([a.race('alice', 12, 10), b.race('alice', 12, 10)]);
      // $55 a day fits five $10 calls, whichever process made them.
      expect(okA + okB).toBe(5);
      expect(existsSync(ledger) ? readFileSync(ledger, 'utf8').trim().split('\n') : []).toHaveLength(5);
      expect(await a.call('alice', 5)).toBe('ok');
      expect(await b.call('alice', 1)).toBe('GRANT_CAP_EXCEEDED');
      a.quit();
      b.quit();
    }, 240_000);
  });
}
