/**
 * MEMORY_CONSOLIDATION_ENABLED wires the LLM fact consolidator into createApp's memory stores.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp, silentLogger } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

async function run(env: Record<string, string>) {
  const model = createScriptedModel([{ text: JSON.stringify({ decisions: [] }) }, { text: JSON.stringify({ decisions: [] }) }, { text: JSON.stringify({ decisions: [] }) }]);
  const app = await createApp({ envFileDir: false, env, logger: silentLogger, model, finance: false, workspace: false, config: { dataDir: mkdtempSync(path.join(tmpdir(), 'minara-cons-')) } });
  try {
    await app.memory.recordFact('The user prefers limit orders on BTC.');
    await app.memory.recordFact('The user prefers limit orders for BTC trades.');
    await app.memory.consolidatePending();
    return model.calls.length;
  } finally {
    await app.close();
  }
}

describe('MEMORY_CONSOLIDATION_ENABLED', () => {
  it('off by default: no model call; on: the consolidator asks the model about similar facts', async () => {
    expect(await run({})).toBe(0);
    expect(await run({ MEMORY_CONSOLIDATION_ENABLED: '1' })).toBeGreaterThan(0);
  });
});
