/**
 * A host application wiring @minara/agent from its factories, then running one turn offline.
 *
 *   npx tsx examples/basic/index.ts
 *
 * Storage is SQLite in a temporary folder; the model is the scripted test model, so no key is needed.
 * Swap `createScriptedModel([...])` for any AI SDK model (e.g. `anthropic('claude-sonnet-4-5')`) to go live.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { type AgentEvent, createAgentRuntime, createMemoryStore, createSkillRegistry, createToolRegistry } from '@minara/agent';
import { createFinancePack } from '@minara/agent/finance';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createScriptedModel } from '@minara/agent/testing';

export interface BasicResult {
  readonly text: string;
  readonly events: readonly AgentEvent[];
}

export async function main(options: { log?: (s: string) => void } = {}): Promise<BasicResult> {
  const log = options.log ?? ((s: string) => process.stdout.write(s));
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-basic-'));
  const storage = createSqliteStorage({ path: path.join(dir, 'minara.db') });
  try {
    // Domain tools: the finance pack on its offline paper-trading provider.
    const finance = createFinancePack({ storage, provider: 'paper' });
    const tools = finance.attach(createToolRegistry({ tools: finance.tools, hooks: finance.hooks, storage }));
    const skills = createSkillRegistry({ skills: finance.skills, tools });
    const memory = createMemoryStore({ storage, scope: { userId: 'alice' } });

    // The model: scripted here (one tool call, then an answer built from the tool result).
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] },
      (call) => {
        const last = call.prompt.at(-1);
        const part = last?.role === 'tool' ? last.content[0] : undefined;
        const envelope = part?.type === 'tool-result' && part.output.type === 'json' ? (part.output.value as { data?: { priceUsd?: number } }) : undefined;
        return { text: `ETH is at $${envelope?.data?.priceUsd?.toFixed(2) ?? '?'} on the simulated market.` };
      },
    ]);

    const runtime = createAgentRuntime({ model, tools, skills, memory, storage, scenarios: finance.scenarios });
    const events: AgentEvent[] = [];
    let text = '';
    for await (const event of runtime.run({ sessionId: 'basic-1', userId: 'alice', message: 'What is ETH trading at?' })) {
      events.push(event);
      if (event.type === 'text-delta') {
        text += event.delta;
        log(event.delta);
      }
      if (event.type === 'tool-call') log(`[tool] ${event.toolName} ${JSON.stringify(event.input)}\n`);
    }
    log('\n');
    model.assertConsumed();
    await memory.close();
    return { text, events };
  } finally {
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
