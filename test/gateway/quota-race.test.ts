/**
 * The USD-per-day quota under concurrency. The attack: `usdPerDay: 1`, turns costing $10; sequential requests give
 * 200, 429, 429, but ten parallel requests in ten sessions were all admitted ($100 spent), because admission read
 * the spend before the turn and reserved nothing. Now admission reserves the turn's estimated cost in storage until
 * the turn ends, so parallel turns cannot take the spend past the limit by more than one turn's cost.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgentRuntime, createMemoryStore, createToolRegistry, createWorkspace, silentLogger, type Storage } from '@minara/agent';
import { createGateway, serveGateway, type ServedGateway, USER_TURN_SOURCES } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody } from './helpers';

const TURN_USD = 10;
let served: ServedGateway | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

/** A gateway whose every turn costs $10 (one output token at $10 per token), each turn streaming slowly. */
async function start(usdPerDay: number, storage: Storage = createInMemoryStorage()) {
  const model = createScriptedModel(
    Array.from({ length: 40 }, () => ({ text: 'one two three four five six', usage: { inputTokens: 0, outputTokens: 1 } })),
    { chunkDelayMs: 20 },
  );
  const tools = createToolRegistry({ storage, tools: [] });
  const memoryFor = (userId: string) => createMemoryStore({ storage, scope: { userId } });
  const runtime = createAgentRuntime({
    model, tools, storage, logger: silentLogger, memory: (scope) => memoryFor(scope.userId), surface: 'gateway',
    prices: { 'scripted-model': { inputPerMTok: 0, outputPerMTok: TURN_USD * 1e6 } },
  });
  const workspace = createWorkspace({ dir: mkdtempSync(path.join(tmpdir(), 'minara-quota-')), heartbeat: false });
  const gateway = createGateway({ runtime, storage, tools, memoryFor, workspace, logger: silentLogger, trustUserHeader: true, quotas: { usdPerDay } });
  served = await serveGateway({ gateway, port: 0 });
  const url = served.url;
  const chat = async (id: string) => {
    const res = await fetch(`${url}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-minara-user': 'alice' }, body: JSON.stringify(chatBody(id, 'hello')) });
    await res.text();
    return res.status;
  };
  const spent = async () => (await storage.usage.totals({ day: new Date().toISOString().slice(0, 10), userId: 'alice', sources: USER_TURN_SOURCES })).costUsd;
  return { chat, spent };
}

describe('USD-per-day quota under parallel turns', () => {
  it('sequential: 200, 429, 429', async () => {
    const { chat, spent } = await start(1);
    expect([await chat('s-1'), await chat('s-2'), await chat('s-3')]).toEqual([200, 429, 429]);
    expect(await spent()).toBe(TURN_USD);
  });

  it('ten parallel requests in ten sessions: the spend stays within the limit plus one turn', async () => {
    const { chat, spent } = await start(1);
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => chat(`p-${i}`)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
    expect(await spent()).toBeLessThanOrEqual(1 + TURN_USD);
  });

  it('with turns already costed today, parallel turns each reserve the largest one: ≤ limit + one turn', async () => {
    const limit = 35;
    const { chat, spent } = await start(limit);
    expect(await chat('w-0')).toBe(200); // $10 known: later turns reserve $10 each
    const statuses = await Promise.all(Array.from({ length: 10 }, (_, i) => chat(`w-${i + 1}`)));
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(await spent()).toBeLessThanOrEqual(limit + TURN_USD);
    // Every reservation was settled: nothing is held once the turns ended.
    expect(await chat('w-after')).toBe(429);
  });
});
