/**
 * The daily budget of autonomous spend under concurrency. The attack: `dailyBudgetUsd: 1`, autonomous turns costing
 * $10; ten signed webhook deliveries at once were all admitted, because the budget was read before each turn and
 * nothing was reserved. Now each autonomous turn reserves its estimated cost until it ends
 * (`app.reserveAutonomousTurn`, `createAutonomousBudget`), so parallel turns pass the budget by at most one turn.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp, createAutonomousBudget, silentLogger } from '@minara/agent';
import { createGateway, serveGateway, signWebhook } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../gateway/helpers';

const SECRET = 'whsec_0123456789abcdef';
const TURN_USD = 10;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('daily budget of autonomous spend under parallel turns', () => {
  it('ten parallel webhook turns: the spend stays within the budget plus one turn', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-budget-race-'));
    dirs.push(dir);
    const model = createScriptedModel(
      Array.from({ length: 20 }, () => ({ text: 'one two three four five six', usage: { inputTokens: 0, outputTokens: 1 } })),
      { modelId: 'priced-model', chunkDelayMs: 20 },
    );
    const app = await createApp({
      envFileDir: false, env: {}, logger: silentLogger, model, finance: false, mcp: false, web: false, config: { dataDir: dir },
      prices: { 'priced-model': { inputPerMTok: 0, outputPerMTok: TURN_USD * 1e6 } },
      dailyBudgetUsd: 1,
    });
    const gateway = createGateway({
      runtime: app.runtime, storage: app.storage, tools: app.tools, logger: silentLogger, webhooks: { alerts: { secret: SECRET } },
      admitAutonomousTurn: (c) => app.admitAutonomousTurn(c),
      reserveAutonomousTurn: (c) => app.reserveAutonomousTurn(c),
    });
    const served = await serveGateway({ gateway, port: 0 });
    try {
      const send = async (i: number) => {
        const body = JSON.stringify({ message: `alert ${i}` });
        const ts = Math.floor(Date.now() / 1000);
        const res = await fetch(`${served.url}/v1/signals/webhook/alerts`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-minara-timestamp': String(ts), 'x-minara-signature': signWebhook(SECRET, ts, body), 'idempotency-key': `k-${i}` },
          body,
        });
        await res.text();
        return res.status;
      };
      const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => send(i)));
      expect(statuses.filter((s) => s === 202)).toHaveLength(1);
      expect(statuses.filter((s) => s === 429)).toHaveLength(9);
      const day = new Date().toISOString().slice(0, 10);
      await waitFor(async () => (await app.storage.usage.totals({ day, sources: ['webhook'] })).turns === 1);
      await waitFor(async () => (await app.storage.jobs.listRuns({ jobId: 'webhook:alerts' }))[0]?.outcome === 'ok');
      expect((await app.storage.usage.totals({ day, sources: ['webhook'] })).costUsd).toBeLessThanOrEqual(1 + TURN_USD);
      // The turn ended: its reservation is gone and the spent budget refuses the next one with the reason.
      const next = await app.reserveAutonomousTurn();
      expect(next.refusal).toMatch(/^daily budget spent: \$10\.0000 of \$1\.00 on autonomous turns today/);
    } finally {
      await served.close();
      await app.close();
    }
  });

  it('createAutonomousBudget: parallel reservations admit one turn before any is costed; released, the next one runs', async () => {
    const storage = createInMemoryStorage();
    const budget = createAutonomousBudget({ storage, dailyBudgetUsd: 5, sources: ['cron'], now: () => new Date() });
    const all = await Promise.all(Array.from({ length: 10 }, () => budget.reserve()));
    const admitted = all.filter((a) => a.refusal === undefined);
    expect(admitted).toHaveLength(1);
    expect(all.filter((a) => a.refusal !== undefined)[0]!.refusal).toMatch(/autonomous turns still running hold \$5\.0000 of \$5\.00/);
    await admitted[0]!.release();
    const again = await budget.reserve();
    expect(again.refusal).toBeUndefined();
    await again.release();
  });
});
