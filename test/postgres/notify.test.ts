/**
 * Change notices across instances: `meta` changes (the emergency stop) reach the other instances' listeners by
 * LISTEN/NOTIFY on a real server, polled on PGlite; `createApp` turns a remote emergency stop into a bus event.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApp, silentLogger } from '@minara/agent';
import { createPostgresStorage, type PostgresChange, type PostgresStorage } from '@minara/agent/postgres';
import { createScriptedModel } from '@minara/agent/testing';
import { realComponent } from '../support/real-component';
import { freshSchema, realServerUrl, serverBinariesAvailable, sharedPglitePool } from './support';

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH');

async function until(check: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function exchange(a: PostgresStorage, b: PostgresStorage): Promise<{ onA: PostgresChange[]; onB: PostgresChange[] }> {
  const onA: PostgresChange[] = [];
  const onB: PostgresChange[] = [];
  const offs = [a.listen('meta', (c) => onA.push(c)), b.listen('meta', (c) => onB.push(c)), b.listen('workspace', (c) => onB.push(c))];
  await new Promise((r) => setTimeout(r, 100)); // let both start listening
  await a.meta.set('emergency_stop', JSON.stringify({ engaged: true, reason: 'drill' }));
  await until(() => onA.length >= 1 && onB.length >= 1, 'the stop on both instances');
  await a.publish('workspace', 'MEMORY.md');
  await until(() => onB.length >= 2, 'the workspace notice on B');
  await b.meta.delete('emergency_stop');
  await until(() => onA.length >= 2 && onB.length >= 3, 'the release on both');
  for (const off of offs) off();
  return { onA, onB };
}

const EXPECTED = {
  onA: [
    { channel: 'meta', payload: 'emergency_stop', local: true },
    { channel: 'meta', payload: 'emergency_stop', local: false },
  ],
  onB: [
    { channel: 'meta', payload: 'emergency_stop', local: false },
    { channel: 'workspace', payload: 'MEMORY.md', local: false },
    { channel: 'meta', payload: 'emergency_stop', local: true },
  ],
};

describe('change notices on PGlite (polled)', () => {
  it('a meta change and a published notice reach the other storage on the database; the publisher sees its own as local', async () => {
    const pool = await sharedPglitePool();
    const schema = freshSchema('n');
    const a = await createPostgresStorage({ pool, schema, logger: silentLogger, pollIntervalMs: 20 });
    const b = await createPostgresStorage({ pool, schema, logger: silentLogger, pollIntervalMs: 20 });
    const { onA, onB } = await exchange(a, b);
    expect(a.changeDelivery).toBe('poll');
    expect({ onA, onB }).toEqual(EXPECTED);
    await Promise.all([a.close(), b.close()]);
  });
});

describe.runIf(available)('change notices on a real server (LISTEN/NOTIFY)', () => {
  it('delivers notices between two storages with their own pools', async () => {
    const url = realServerUrl()!;
    const schema = freshSchema('n');
    const a = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger, poolSize: 2 });
    const b = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger, poolSize: 2 });
    const { onA, onB } = await exchange(a, b);
    expect(b.changeDelivery).toBe('notify');
    expect({ onA, onB }).toEqual(EXPECTED);
    await Promise.all([a.close(), b.close()]);
  });

  it('createApp: an emergency stop engaged on another instance is emitted on this one’s bus', async () => {
    const env = { MINARA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'minara-pg-stop-')), MINARA_DATABASE_URL: realServerUrl()!, MINARA_DATABASE_SCHEMA: freshSchema('stop') };
    const open = () => createApp({ env, envFileDir: false, logger: silentLogger, model: createScriptedModel([]), workspace: false, mcp: false, web: false });
    const a = await open();
    const b = await open();
    try {
      const seen: Array<{ engaged: boolean; reason?: string | undefined }> = [];
      b.bus.on('emergency-stop:changed', (e) => seen.push(e));
      await new Promise((r) => setTimeout(r, 100));
      await a.tools.emergencyStop.engage('fleet drill');
      await until(() => seen.length > 0, 'the remote stop on B’s bus');
      expect(seen).toEqual([{ engaged: true, reason: 'fleet drill' }]);
      expect(await b.tools.emergencyStop.status()).toMatchObject({ engaged: true, reason: 'fleet drill' });
    } finally {
      await a.close();
      await b.close();
    }
  });
});
