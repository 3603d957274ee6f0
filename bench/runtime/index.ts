/**
 * Runtime overhead per turn and per step, with the scripted model (zero model latency): our runtime vs a
 * plain `streamText` with the same model script and the same tool handlers, in the same process.
 * The turn is 3 steps (two tool calls, then text), with SQLite storage, the audit log and memory on.
 * Run: npm run bench -- runtime
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isStepCount, jsonSchema, streamText, type SystemModelMessage, tool, type ToolSet } from 'ai';
import { z } from 'zod';
import { createAgentRuntime, createMemoryStore, createSkillRegistry, createToolRegistry, defineSkill, defineTool, PermissionTier, silentLogger, toInstructions } from '../../src/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createScriptedModel, type ScriptEntry } from '../../src/testing/index';
import { fmt, machine, summarize, table } from '../lib/stats';

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const WARMUP = 30;
const turnScript = (): ScriptEntry[] => [
  { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 1200, outputTokens: 20 } },
  { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }], usage: { inputTokens: 1300, outputTokens: 20 } },
  { text: 'BTC is $97,000 and ETH is $3,400.', usage: { inputTokens: 1400, outputTokens: 30 } },
];
const handler = ({ symbol }: { symbol: string }) => ({ symbol, priceUsd: symbol === 'BTC' ? 97_000 : 3_400 });

/** Plain AI SDK: the same model script, the same tool list and schemas, the same system blocks, handlers called directly. */
async function plainTurn(model: ReturnType<typeof createScriptedModel>, aiTools: ToolSet, instructions: SystemModelMessage[], toolOrder: string[]) {
  const result = streamText({ model, instructions, prompt: 'prices of BTC and ETH?', tools: aiTools, toolOrder, stopWhen: isStepCount(12), toolCallConcurrency: 1 });
  for await (const _ of result.stream) {
    // drain
  }
}

const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-runtime-'));
const storage = createSqliteStorage({ path: path.join(dir, 'bench.db'), logger: silentLogger });
const tools = createToolRegistry({
  storage,
  tools: [defineTool({ name: 'get_price', toolSet: 'read', description: 'Spot price', inputSchema: z.object({ symbol: z.string() }), permissionTier: PermissionTier.READ_ONLY, execute: handler })],
});
const skills = createSkillRegistry({
  tools,
  skills: [defineSkill({ id: 'minara.core', description: 'Markets and prices', prompt: 'Quote prices with get_price.', toolNames: ['get_price'], priority: 10, activation: 'auto', routing: { keywords: ['price', 'prices'] } })],
});
const memory = createMemoryStore({ storage, scope: { userId: 'bench' } });
for (let i = 0; i < 200; i++) await memory.write({ category: 'observation', content: `user watched BTC and ETH closely in week ${i}` });

const plainModel = createScriptedModel([]);
const ourModel = createScriptedModel([]);
const runtime = createAgentRuntime({ model: ourModel, tools, skills, memory, storage, logger: silentLogger, defaultUserId: 'bench' });

// The plain side gets exactly what the runtime sends: the same system blocks, tools and tool order.
const probe = await runtime.buildSystemPromptBlocks({ sessionId: 'bench-probe', message: 'prices of BTC and ETH?' });
const plainTools: ToolSet = Object.fromEntries(
  probe.toolNames.map((name) => {
    const entry = tools.get(name)!;
    return [name, tool({ description: entry.description, inputSchema: jsonSchema(z.toJSONSchema(entry.inputSchema, { io: 'input' }) as never), execute: async (input: unknown) => entry.execute(input, {} as never) })];
  }),
);
const plainInstructions = toInstructions(probe.blocks);
const plain: number[] = [];
const ours: number[] = [];
let stepsSeen = 0;
const runPlain = async () => {
  plainModel.push(...turnScript());
  const t0 = performance.now();
  await plainTurn(plainModel, plainTools, plainInstructions, probe.toolNames);
  return performance.now() - t0;
};
// Each turn is the first turn of its own session (so histories do not grow and both sides send the same
// messages). The once-per-session work (session row, frozen memory snapshot) is timed separately.
const sessionStart: number[] = [];
const runOurs = async (i: number) => {
  ourModel.push(...turnScript());
  const s0 = performance.now();
  await runtime.buildSystemPromptBlocks({ sessionId: `bench-${i}` });
  sessionStart.push(performance.now() - s0);
  const t0 = performance.now();
  const r = await runtime.generate({ sessionId: `bench-${i}`, message: 'prices of BTC and ETH?' });
  stepsSeen = r.steps;
  return performance.now() - t0;
};
for (let i = 0; i < TURNS + WARMUP; i++) {
  // Alternate the order so neither side always runs second.
  const [a, b] = i % 2 === 0 ? [await runPlain(), await runOurs(i)] : ([await runOurs(i), await runPlain()].reverse() as [number, number]);
  if (i >= WARMUP) {
    plain.push(a);
    ours.push(b);
  }
}
await storage.close();
rmSync(dir, { recursive: true, force: true });

const p = summarize(plain);
const o = summarize(ours);
console.log(`\nbench/runtime — ${TURNS} turns of ${stepsSeen} steps (2 tool calls + text), scripted model, SQLite + audit + memory on; ${machine()}\n`);
console.log(
  table(
    ['path', 'turn p50 ms', 'turn p95 ms', 'per step p50 ms'],
    [
      ['plain streamText (same model, tools, system blocks)', fmt(p.p50), fmt(p.p95), fmt(p.p50 / 3)],
      ['createAgentRuntime().generate', fmt(o.p50), fmt(o.p95), fmt(o.p50 / 3)],
    ],
  ),
);
const ss = summarize(sessionStart.slice(WARMUP));
console.log(`\nOnce per session (not in the turn times): session row + frozen memory snapshot of 200 memories, p50 ${fmt(ss.p50)} ms, p95 ${fmt(ss.p95)} ms.`);
const addedPerStep = (o.p50 - p.p50) / 3;
console.log(`\nAdded by the runtime: ${fmt(o.p50 - p.p50)} ms per turn (p50), ${fmt(addedPerStep)} ms per step; ratio ${(o.p50 / p.p50).toFixed(2)}×.`);
console.log('The added time includes per turn: session and state reads, routing, prompt blocks, the input scanner, persistence of the messages and state,');
console.log('and per tool call: validation, the gate, one SQLite audit row. Targets: ≤ 1 ms added per step (p50); turn ≤ 1.25× plain streamText.');
