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

describe('automation on PostgreSQL', () => {
  it.runIf(available)('two apps on one database: a workflow trigger key runs once, a price alert fires once, and both see the same records', async () => {
    const url = realServerUrl()!;
    const env = { MINARA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'minara-pg-auto-')), MINARA_DATABASE_URL: url, MINARA_DATABASE_SCHEMA: freshSchema('auto'), MINARA_HEARTBEAT_EVERY: '0' };
    const workflows = [{ id: 'btc-now', steps: [{ id: 'btc', kind: 'tool_call' as const, tool: 'get_price', args: { symbol: 'BTC' } }] }];
    const open = () => createApp({ env, envFileDir: false, logger: silentLogger, model: createScriptedModel([]), workspace: false, mcp: false, web: false, workflows, now: () => new Date('2026-03-02T10:00:00.000Z') });
    const [a, b] = await Promise.all([open(), open()]);
    try {
      const [x, y] = await Promise.all([a.workflows.trigger('btc-now', { key: 'evt-1' }), b.workflows.trigger('btc-now', { key: 'evt-1' })]);
      expect([x, y].filter((r) => r !== undefined)).toHaveLength(1);
      const runs = await b.workflows.runs({ workflowId: 'btc-now' });
      expect(runs).toMatchObject([{ status: 'ok', triggerKey: 'evt-1', steps: [{ id: 'btc', ok: true, input: { symbol: 'BTC' } }] }]);

      const { checkAlerts } = await import('@minara/agent/finance');
      const price = (await a.finance!.market.getPrice('ETH')).priceUsd;
      await a.storage.alerts.create({ userId: 'default', asset: 'ETH', condition: 'above', threshold: price / 2, basePrice: price, createdAt: '2026-03-02T09:00:00.000Z', expiresAt: '2026-04-01T00:00:00.000Z' });
      const delivered: string[] = [];
      const deliver = (d: { sessionId: string }) => void delivered.push(d.sessionId);
      const now = () => new Date('2026-03-02T10:00:00.000Z');
      const results = await Promise.all([checkAlerts({ storage: a.storage, market: a.finance!.market, deliver, now }), checkAlerts({ storage: b.storage, market: b.finance!.market, deliver, now })]);
      expect(results.reduce((n, r) => n + r.fired.length, 0)).toBe(1);
      expect(delivered).toEqual([expect.stringMatching(/^alert-1-[0-9a-f]{8}$/)]);
      expect(await b.storage.alerts.get('default', 1)).toMatchObject({ status: 'fired', deliverySessionId: delivered[0] });
      expect((await b.background.deliveries({ userId: 'default' }))[0]).toMatchObject({ sessionId: delivered[0], source: 'alert' });
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
