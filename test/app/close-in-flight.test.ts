/**
 * `app.close()` while a webhook turn is finishing (issue 37, part 5): it crashed the process with
 * `StorageError: jobs.finishRun: storage is closed`. Now close waits (with a bound) for running turns and the
 * work that follows them, aborts what outlives the bound, and only then closes storage.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApp, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createGateway, signWebhook } from '@minara/agent/gateway';
import { createScriptedModel } from '@minara/agent/testing';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
});

const SECRET = 'whsec-0123456789abcdef';

async function setup(chunkDelayMs: number, closeTimeoutMs?: number) {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-close-'));
  dirs.push(dir);
  const words = Array.from({ length: 20 }, (_, i) => `word${i} `).join('');
  const app = await createApp({
    envFileDir: false, env: {}, logger: silentLogger, config: { dataDir: dir }, browser: false,
    model: createScriptedModel([{ text: words }], { chunkDelayMs }),
    ...(closeTimeoutMs !== undefined ? { closeTimeoutMs } : {}),
  });
  const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, logger: silentLogger, webhooks: { alerts: { secret: SECRET } } });
  const body = JSON.stringify({ message: 'BTC dropped 5%' });
  const ts = Math.floor(Date.now() / 1000);
  const r = await gateway.fetch(new Request('http://127.0.0.1/v1/signals/webhook/alerts', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-minara-timestamp': String(ts), 'x-minara-signature': signWebhook(SECRET, ts, body), 'idempotency-key': 'evt-1' }, body,
  }));
  expect(r.status).toBe(202);
  const { sessionId } = (await r.json()) as { sessionId: string };
  return { app, dir, sessionId };
}

describe('app.close() with a webhook turn in flight', () => {
  it('waits for the turn and its bookkeeping, then closes storage: no crash, the run is recorded finished', async () => {
    const { app, dir, sessionId } = await setup(5);
    await app.close();
    // Let anything still scheduled run: an unhandled rejection would be reported here.
    await new Promise((r) => setTimeout(r, 200));
    expect(unhandled).toEqual([]);
    const storage = createSqliteStorage({ path: path.join(dir, 'minara.db') });
    try {
      const runs = await storage.jobs.listRuns({ jobId: 'webhook:alerts' });
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ outcome: 'ok' });
      const messages = await storage.conversations.listMessages(sessionId);
      expect(messages.at(-1)?.role).toBe('assistant');
    } finally {
      await storage.close();
    }
  });

  it('a turn that outlives closeTimeoutMs is aborted (not left to hit a closed storage)', async () => {
    const { app, dir, sessionId } = await setup(200, 50);
    await app.close();
    await new Promise((r) => setTimeout(r, 300));
    expect(unhandled).toEqual([]);
    // No new turn starts on a closed runtime.
    expect(() => app.runtime.run({ sessionId: 'after', message: 'hi' })).toThrow(expect.objectContaining({ code: 'RUNTIME_CLOSED' }));
    const storage = createSqliteStorage({ path: path.join(dir, 'minara.db') });
    try {
      const [run] = await storage.jobs.listRuns({ jobId: 'webhook:alerts' });
      expect(run?.detail).toMatch(new RegExp(`^${sessionId}: (aborted|error)`));
      expect(run?.endedAt).toBeDefined();
    } finally {
      await storage.close();
    }
  });
});
