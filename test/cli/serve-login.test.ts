/**
 * `minara serve` without a token prints the one-time login link to its own terminal (and `--open` opens it), says
 * which trading mode it resolved, and the link's cookie (with the proof its redirect hands the page) is what lets a
 * browser decide.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runServe } from '../../cli/serve';

const dirs: string[] = [];
afterEach(() => {
  vi.unstubAllEnvs();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('minara serve: the one-time login link', () => {
  it('prints the link (not served by any page), --open opens it, its cookie and proof decide, and the trading mode is stated', async () => {
    for (const name of ['GATEWAY_AUTH_TOKEN', 'GATEWAY_JWT_SECRET', 'GATEWAY_JWKS_URL', 'GATEWAY_TRUST_USER_HEADER', 'MINARA_MODEL', 'MINARA_API_KEY', 'MINARA_TRADING']) vi.stubEnv(name, '');
    vi.stubEnv('MINARA_TRADING_MODE', 'paper');
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-serve-login-'));
    dirs.push(dir);
    let out = '';
    const opened: string[] = [];
    let stop!: () => void;
    const until = new Promise<void>((resolve) => (stop = resolve));
    const done = runServe({ dataDir: dir, workspace: path.join(dir, 'ws') }, { port: 0, host: '127.0.0.1', web: false, background: false, open: true, openUrl: (u) => opened.push(u), until, write: (s) => (out += s) });
    const t0 = Date.now();
    while (!out.includes('works once') && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 20));
    try {
      const link = /(http:\/\/127\.0\.0\.1:\d+\/login\?token=[A-Za-z0-9_-]+)/.exec(out)?.[1];
      expect(link, out).toBeDefined();
      expect(out).toContain('Trading mode: paper');
      expect(opened).toEqual([link]);
      const base = new URL(link!).origin;
      const anonymous = (await (await fetch(`${base}/v1/info`)).json()) as { identity: { canDecide: boolean }; tradingMode: string };
      expect(anonymous.identity.canDecide).toBe(false);
      expect(anonymous.tradingMode).toBe('paper');
      const login = await fetch(link!, { redirect: 'manual' });
      expect(login.status).toBe(303);
      const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
      const proof = /#minara-proof=(.+)$/.exec(login.headers.get('location') ?? '')?.[1] ?? '';
      const person = (await (await fetch(`${base}/v1/info`, { headers: { cookie, 'x-minara-proof': proof } })).json()) as { identity: { canDecide: boolean } };
      expect(person.identity.canDecide).toBe(true);
      // The cookie alone (every local port gets it from the browser) does not decide.
      expect(((await (await fetch(`${base}/v1/info`, { headers: { cookie } })).json()) as { identity: { canDecide: boolean } }).identity.canDecide).toBe(false);
      expect((await fetch(link!, { redirect: 'manual' })).status).toBe(403);
    } finally {
      stop();
      expect(await done).toBe(0);
    }
  }, 60_000);

  it('--open is a serve flag: elsewhere it is a usage error', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'jobs', '--open'], { cwd: path.join(import.meta.dirname, '..', '..'), encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', HOME: tmpdir() } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('option --open only applies to "minara serve"');
  }, 60_000);

  it('the REPL banner states the resolved trading mode', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-repl-mode-'));
    dirs.push(dir);
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', '--data-dir', dir, '--workspace', path.join(dir, 'ws'), '--no-background'], {
      cwd: path.join(import.meta.dirname, '..', '..'), encoding: 'utf8', input: '/exit\n', env: { PATH: process.env['PATH'] ?? '', HOME: dir, MINARA_TRADING_MODE: 'paper' },
    });
    expect(r.stdout, r.stderr).toMatch(/^minara \S+\nTrading mode: paper \(paper: simulated fills\)\n/);
  }, 60_000);
});
