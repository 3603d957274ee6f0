import { mkdtempSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, loadEnv, MinaraError } from '@minara/agent';

describe('loadEnv', () => {
  it('reads .env without overriding the shell and records sources', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-env-'));
    writeFileSync(path.join(dir, '.env'), 'MINARA_MODEL=anthropic:claude\nSHARED=from-file\n# comment\nQUOTED="a b"\n');
    const env: Record<string, string | undefined> = { SHARED: 'from-shell' };
    const r = loadEnv({ cwd: dir, env });
    expect(r.loaded).toBe(true);
    expect(env).toEqual({ SHARED: 'from-shell', MINARA_MODEL: 'anthropic:claude', QUOTED: 'a b' });
    expect(r.sources).toEqual({ MINARA_MODEL: 'file', SHARED: 'shell', QUOTED: 'file' });
    expect([...r.fromFile].sort()).toEqual(['MINARA_MODEL', 'QUOTED']);
    expect(r.shadowedByShell).toEqual(['SHARED']);
  });

  it('uses process.loadEnvFile for process.env and keeps shell values', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-env-'));
    const key = `MINARA_TEST_${process.pid}`;
    writeFileSync(path.join(dir, '.env'), `${key}=file\nHOME=/nope\n`);
    const home = process.env.HOME;
    const r = loadEnv({ cwd: dir });
    expect(process.env[key]).toBe('file');
    expect(process.env.HOME).toBe(home);
    expect(r.sources.HOME).toBe('shell');
    delete process.env[key];
  });

  it('reports a missing file without failing', () => {
    const r = loadEnv({ cwd: mkdtempSync(path.join(tmpdir(), 'minara-env-')), env: {} });
    expect(r).toMatchObject({ loaded: false, fromFile: [] });
  });
});

describe('loadConfig', () => {
  it('applies defaults, env and overrides in that order', () => {
    expect(loadConfig({ env: {} })).toMatchObject({ dataDir: path.join(os.homedir(), '.minara'), logLevel: 'warn', gatewayPort: 8080, maxSteps: 12, audit: true });
    const c = loadConfig({ env: { MINARA_DATA_DIR: '/tmp/m', GATEWAY_PORT: '9000', MINARA_AUDIT: '0' }, overrides: { logLevel: 'debug' } });
    expect(c).toMatchObject({ dataDir: '/tmp/m', workspaceDir: '/tmp/m/workspace', dbPath: '/tmp/m/minara.db', gatewayPort: 9000, logLevel: 'debug', audit: false });
    expect(loadConfig({ env: { MINARA_WORKSPACE_DIR: '~/ws' } }).workspaceDir).toBe(path.join(os.homedir(), 'ws'));
  });

  it('names each bad field and its env variable', () => {
    try {
      loadConfig({ env: { GATEWAY_PORT: 'eighty', MINARA_MODEL: 'claude', MINARA_LOG_LEVEL: 'loud' } });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      expect(MinaraError.isInstance(e)).toBe(true);
      const err = e as ConfigError;
      expect(err.code).toBe('CONFIG_INVALID');
      // A malformed MINARA_MODEL is not a startup error: the app starts not configured and says why (modelConfigStatus).
      expect([...err.fields].sort()).toEqual(['gatewayPort', 'logLevel']);
      expect(err.message).toMatch(/gatewayPort \(GATEWAY_PORT\)/);
    }
    expect(() => loadConfig({ env: { GATEWAY_AUTH_TOKEN: 'short' } })).toThrow(/gatewayAuthToken.*16/);
  });
});
