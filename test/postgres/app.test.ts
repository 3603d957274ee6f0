import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, createApp, loadConfig, silentLogger } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { realComponent } from '../support/real-component';
import { freshSchema, realServerUrl, serverBinariesAvailable } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH');

describe('MINARA_DATABASE_URL', () => {
  it('is read from env, checked as a postgres URL (the value is never echoed), and SQLite stays the default', () => {
    expect(loadConfig({ env: {} }).databaseUrl).toBeUndefined();
    expect(loadConfig({ env: { MINARA_DATABASE_URL: 'postgres://u:p@db:5432/minara', MINARA_DATABASE_SCHEMA: 'fleet_a' } })).toMatchObject({
      databaseUrl: 'postgres://u:p@db:5432/minara', databaseSchema: 'fleet_a',
    });
    let error: unknown;
    try {
      loadConfig({ env: { MINARA_DATABASE_URL: 'mysql://root:hunter2@db/x' } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).fields).toEqual(['databaseUrl']);
    expect((error as Error).message).toMatch(/databaseUrl \(MINARA_DATABASE_URL\): must be a postgres:\/\//);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it.runIf(available)('createApp keeps its state in PostgreSQL: a turn written by one app is read by another on the same database', async () => {
    const url = realServerUrl();
    expect(url, 'the global setup starts a server when the binaries are on PATH').toBeDefined();
    const env = { MINARA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'minara-pg-app-')), MINARA_DATABASE_URL: url, MINARA_DATABASE_SCHEMA: freshSchema('app') };
    const a = await createApp({ env, envFileDir: false, logger: silentLogger, model: createScriptedModel([{ text: 'hello from A' }]), workspace: false, mcp: false, web: false });
    try {
      expect(a.storage.kind).toBe('postgres');
      await a.runtime.generate({ sessionId: 's1', message: 'hi' });
    } finally {
      await a.close();
    }
    const b = await createApp({ env, envFileDir: false, logger: silentLogger, model: createScriptedModel([]), workspace: false, mcp: false, web: false });
    try {
      const messages = await b.storage.conversations.listMessages('s1');
      expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(messages[1]!.json).toContain('hello from A');
    } finally {
      await b.close();
    }
  });
});
