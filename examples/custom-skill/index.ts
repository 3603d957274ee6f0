/**
 * Writing your own skills: one in TypeScript (`defineSkill`) and one as a SKILL.md package
 * (`skills/dca-planner/SKILL.md`), registered side by side and routed deterministically (L0).
 *
 *   npx tsx examples/custom-skill/index.ts
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgentRuntime, createSkillRegistry, createToolRegistry, defineSkill, defineTool, loadSkillDirectories, PermissionTier } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

const getPrice = defineTool({
  name: 'get_price',
  toolSet: 'read',
  description: 'Spot price of a token in USD',
  inputSchema: z.object({ symbol: z.string() }),
  permissionTier: PermissionTier.READ_ONLY,
  execute: ({ symbol }) => ({ symbol, priceUsd: symbol === 'BTC' ? 97_000 : 3_400 }),
});

const getFxRate = defineTool({
  name: 'get_fx_rate',
  toolSet: 'read',
  description: 'Spot FX rate for a currency pair like EUR/USD',
  inputSchema: z.object({ pair: z.string() }),
  permissionTier: PermissionTier.READ_ONLY,
  execute: ({ pair }) => ({ pair, rate: 1.085 }),
});

/** A skill in TypeScript: a playbook, the tools it surfaces, and when it is relevant. */
export const fxDesk = defineSkill({
  id: 'fx.desk',
  description: 'Currency conversion and FX rates for a trader',
  prompt: ['## When to use', 'The user asks about exchange rates or converting between currencies.', '## Procedure', '1. Quote the rate with get_fx_rate.', '2. Show the converted amount and the rate used.'].join('\n'),
  summary: 'Quote the rate with get_fx_rate; show amount and rate.',
  toolNames: ['get_fx_rate'],
  priority: 50,
  routing: { keywords: ['fx', 'forex', 'exchange rate', 'convert', 'eur', 'usd', 'gbp'], lifecycleStages: ['discover', 'evaluate'] },
});

export async function main(options: { log?: (s: string) => void } = {}) {
  const log = options.log ?? ((s: string) => process.stdout.write(`${s}\n`));
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({ tools: [getPrice, getFxRate], storage });

  // SKILL.md packages from a folder; a malformed one is reported in `issues` and the rest still load.
  const loaded = loadSkillDirectories([fileURLToPath(new URL('./skills', import.meta.url))]);
  for (const issue of loaded.issues) log(`skill issue: ${issue.file}: ${issue.field}: ${issue.message}`);
  const skills = createSkillRegistry({ skills: [fxDesk, ...loaded.skills], tools });
  log(`skills: ${skills.list().map((s) => s.id).join(', ')}`);

  // L0 routing is deterministic: the same message always ranks the same skills, with reasons.
  const routes = {
    fx: skills.route({ message: 'convert 500 EUR to USD at the current exchange rate' }),
    dca: skills.route({ message: 'set up a recurring buy of BTC every week (DCA)' }),
  };
  for (const [name, entries] of Object.entries(routes)) log(`${name}: ${entries.map((e) => `${e.id} (${e.score}: ${e.reasons.join(' ')})`).join(', ')}`);

  // In a turn, the model activates a skill through `activate_skills`; its tools join the turn.
  const model = createScriptedModel([
    { toolCalls: [{ toolName: 'activate_skills', input: { ids: ['dca.planner'] } }] },
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
    { text: 'BTC is $97,000. How much per week, and for how long?' },
  ]);
  const runtime = createAgentRuntime({ model, tools, skills, storage });
  const turn = await runtime.generate({ sessionId: 'custom-skill-1', message: 'I want to DCA into BTC every week' });
  log(`agent: ${turn.text}`);
  return { skills, loaded, routes, turn, model };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
