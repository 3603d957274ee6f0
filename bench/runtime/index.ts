/**
 * Runtime overhead per turn and per step, with the scripted model (zero model latency): our runtime vs a
 * plain `streamText` with the same model script, the same tools and the same system blocks, in the same
 * process. The turn is 3 steps (two tool calls, then text) with the audit log and memory on, measured on
 * SQLite (the default) and on the in-memory storage (to separate storage round trips from the pipeline).
 * When bench/peers has @mastra/core (`cd bench/peers && npm install --legacy-peer-deps --no-audit --no-fund`),
 * Mastra's Agent.stream runs in the same loop with the same model script, tool and instructions, and the bench
 * prints our added time ÷ Mastra's (issue 41's goal: ≤ 0.20×); without it that row says SKIPPED and why.
 * A last phase times each side by phases of the turn (to the first tool call, each call, between steps, after the
 * last step), read where the caller reads parts and events, and prints what each phase adds: where the added time goes.
 * The SDK is loaded from the built package in dist/ (what a consumer runs; see ../lib/sdk.ts), or from the sources
 * through tsx with BENCH_FROM=src.
 * Run: npm run build && npm run bench -- runtime
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { experimental_streamTextLowMemory, generateText, isStepCount, jsonSchema, streamText, type SystemModelMessage, tool, type ToolSet } from 'ai';
import { z } from 'zod';
import type { Storage } from '../../src/index';
import type { ScriptEntry } from '../../src/testing/index';
import { bootstrapAddedRatio, fmt, machine, type Summary, summarize, table } from '../lib/stats';
import { loadMastraPeer, type MastraPeer } from './mastra-peer';
import { loadBenchSdk } from '../lib/sdk';

const bench = await loadBenchSdk().catch((error: unknown) => {
  // A line CI's log shows (it keeps the `target:` lines), not only a stack trace on stderr.
  console.log(`target: runtime adds ≤ 0.20× what Mastra Agent.stream adds (NOT RUN: ${error instanceof Error ? error.message : String(error)})`);
  process.exit(1);
});
const { createAgentRuntime, createMemoryStore, createSkillRegistry, createToolRegistry, defineSkill, defineTool, PermissionTier, silentLogger, toInstructions } = bench.sdk;
const { createSqliteStorage } = bench.sqlite;
const { createInMemoryStorage, createScriptedModel } = bench.testing;

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const WARMUP = 30;
const MESSAGE = 'prices of BTC and ETH?';
const turnScript = (): ScriptEntry[] => [
  { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 1200, outputTokens: 20 } },
  { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }], usage: { inputTokens: 1300, outputTokens: 20 } },
  { text: 'BTC is $97,000 and ETH is $3,400.', usage: { inputTokens: 1400, outputTokens: 30 } },
];
const handler = ({ symbol }: { symbol: string }) => ({ symbol, priceUsd: symbol === 'BTC' ? 97_000 : 3_400 });

/**
 * CPU time (ms, user + system) of the whole process so far: every thread, so the SQLite checkpoint thread and V8's
 * GC helpers count too. Linux sums it from the scheduler's own nanosecond counts; a single thread's figure
 * (`process.threadCpuUsage()`, `/proc/thread-self/schedstat`) moves only at scheduler ticks here, too coarse for one turn.
 */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
/** CPU time (ms) of the process in the timed part of the side's last call (set by `stopwatch`). */
let lastCpuMs = Number.NaN;
/**
 * Start timing a turn: the returned function stops it, returns the wall time (ms) and leaves the process's CPU time
 * over the same span in `lastCpuMs`: steadier than wall time on a shared host, where another tenant's load shows in the
 * wall time and not in this.
 */
function stopwatch(): () => number {
  const c0 = processCpuMs();
  const t0 = performance.now();
  return () => {
    const ms = performance.now() - t0;
    lastCpuMs = processCpuMs() - c0;
    return ms;
  };
}

interface Measured {
  /** The main phase's times per round (index i of each is one round), wall and CPU, for the ratio's interval. */
  rounds: { wall: { plain: number[]; ours: number[]; mastra: number[] }; cpu: { plain: number[]; ours: number[]; mastra: number[] } };
  /** CPU time of the process per turn of the main phase's sides. */
  cpu: { plain: Summary; ours: Summary; mastra: Summary | undefined };
  plain: Summary;
  /**
   * The plain turn called as the runtime calls the AI SDK: its single-consumer `streamText`
   * (`experimental_streamTextLowMemory`) with telemetry off, as when nothing can receive the SDK's events
   * (src/runtime/turn/stream-model.ts, src/runtime/ai-telemetry.ts): what our turn adds over this is its own work.
   */
  plainQuiet: Summary;
  ours: Summary;
  /** The non-streaming path: plain `generateText`, and our turn with `modelCall: 'generate'`. */
  plainGen: Summary;
  oursGen: Summary;
  session: Summary;
  steps: number;
  /** Mastra's Agent.stream turn, or why it did not run. */
  mastra: Summary | string;
  mastraVersion?: string;
  /**
   * With SQLite only, in a phase of its own: Mastra's Agent.stream with its own memory on LibSQL (its SQLite
   * storage), our turn and the plain one in the same rounds; or why it did not run.
   */
  mastraStored?: { plain: Summary; ours: Summary; mastra: Summary } | string;
  /**
   * Per phase of the turn (PHASES), the plain side's and our side's p50 (ms), from a phase of its own; with SQLite,
   * also our turn on SQLite `:memory:` in the same rounds (`fileless`).
   */
  breakdown: { plain: number[]; ours: number[]; fileless?: number[] };
}

/**
 * The phases of the 3-step turn, each between two points both sides show their caller: the plain side's stream
 * parts and our turn's events (`runtime.run`), timed where the caller reads them. What each phase holds on our side
 * is in its label; the plain side's share of it is the AI SDK's own work for the same step.
 */
const PHASES = [
  ['to the first tool call', 'open the turn, session and state reads, routing, prompt, input scan, history, the user message stored; step 1 of the model'],
  ['1st call: tool-call → tool-result', 'dispatch: validation, gate, the handler, the audit row (held for the turn\'s end: get_price is side-effect free)'],
  ['to the 2nd tool call', 'step 1 ends, step 2 of the model'],
  ['2nd call: tool-call → tool-result', 'dispatch, as above'],
  ['to the answer', 'step 2 ends, step 3 of the model to its first text'],
  ['to the last step end', 'the rest of the answer; step 3 ends'],
  ['after the last step', 'the turn stored (messages, session state, usage row, the calls\' audit rows), post-turn work, turn-end'],
] as const;

/**
 * The phase boundaries of one turn from the sequence of part or event types the caller read (each with the time it
 * was read, ms from the start): the 1st and 2nd tool-call and tool-result, the first text, the last step end, the end.
 */
function phaseTimes(seen: ReadonlyArray<readonly [string, number]>, stepEnd: string, endMs: number): number[] {
  const at = (type: string, nth: number) => seen.filter(([t]) => t === type)[nth]?.[1] ?? Number.NaN;
  const lastStepEnd = seen.filter(([t]) => t === stepEnd).at(-1)?.[1] ?? Number.NaN;
  const marks = [0, at('tool-call', 0), at('tool-result', 0), at('tool-call', 1), at('tool-result', 1), at('text-delta', 0), lastStepEnd, endMs];
  return marks.slice(1).map((m, i) => m - marks[i]!);
}

/**
 * TURNS + WARMUP rounds of every side, the order rotated each round so no side always runs first or last; each
 * side's times (ms) without its warm-up rounds, and (into `cpu`, when given) each side's CPU times.
 */
async function rounds(sides: ReadonlyArray<() => Promise<number>>, cpu?: number[][]): Promise<number[][]> {
  const samples = sides.map((): number[] => []);
  for (let i = 0; i < TURNS + WARMUP; i++) {
    for (let k = 0; k < sides.length; k++) {
      const side = (i + k) % sides.length;
      const ms = await sides[side]!();
      if (i >= WARMUP) {
        samples[side]!.push(ms);
        cpu?.[side]?.push(lastCpuMs);
      }
    }
  }
  return samples;
}

const getPrice = { name: 'get_price', description: 'Spot price', inputSchema: z.object({ symbol: z.string() }) };

/** Our side on one storage: the get_price tool, one skill, 200 memories and the runtime, with its own scripted model. */
async function buildOurs(storage: Storage) {
  const tools = createToolRegistry({
    storage,
    // As the SDK's own get_price (src/finance/read-tools.ts): READ_ONLY and side-effect free, so the turn keeps its
    // calls in the call journal in memory and writes no journal record (docs/runtime.md, "Seventh round").
    tools: [defineTool({ ...getPrice, toolSet: 'read', permissionTier: PermissionTier.READ_ONLY, sideEffects: false, execute: handler })],
  });
  const skills = createSkillRegistry({
    tools,
    skills: [defineSkill({ id: 'minara.core', description: 'Markets and prices', prompt: 'Quote prices with get_price.', toolNames: ['get_price'], priority: 10, activation: 'auto', routing: { keywords: ['price', 'prices'] } })],
  });
  const memory = createMemoryStore({ storage, scope: { userId: 'bench' } });
  for (let i = 0; i < 200; i++) await memory.write({ category: 'observation', content: `user watched BTC and ETH closely in week ${i}` });
  const model = createScriptedModel([]);
  const runtime = createAgentRuntime({ model, tools, skills, memory, storage, logger: silentLogger, defaultUserId: 'bench' });
  return { tools, memory, model, runtime };
}

/** One turn of our side read event by event: its phase times go into `phases`; returns the turn's wall time (ms). */
async function phasedTurn(ours: Awaited<ReturnType<typeof buildOurs>>, sessionId: string, phases: number[][]): Promise<number> {
  ours.model.push(...turnScript());
  await ours.runtime.buildSystemPromptBlocks({ sessionId });
  const seen: Array<readonly [string, number]> = [];
  const t0 = performance.now();
  for await (const event of ours.runtime.run({ sessionId, message: MESSAGE })) seen.push([event.type, performance.now() - t0]);
  const ms = performance.now() - t0;
  phases.push(phaseTimes(seen, 'step-end', ms));
  return ms;
}

/**
 * Everything for one storage. With `fileless` (a SQLite storage on `:memory:`: the same engine, schema and code with
 * no file, so no WAL frame is written and no lock taken), the breakdown phase also runs our turn on it: what the file
 * itself costs in each phase of a SQLite turn.
 */
async function measure(storage: Storage, mastraStorageUrl?: string, fileless?: Storage): Promise<Measured> {
  const ourSide = await buildOurs(storage);
  const { tools, memory, runtime, model: ourModel } = ourSide;
  const plainModel = createScriptedModel([]);

  // The plain side gets exactly what the runtime sends: the same system blocks, tools and tool order.
  const probe = await runtime.buildSystemPromptBlocks({ sessionId: 'bench-probe', message: MESSAGE });
  const plainTools: ToolSet = Object.fromEntries(
    probe.toolNames.map((name) => {
      const entry = tools.get(name)!;
      return [name, tool({ description: entry.description, inputSchema: jsonSchema(z.toJSONSchema(entry.inputSchema, { io: 'input' }) as never), execute: async (input: unknown) => entry.execute(input, {} as never) })];
    }),
  );
  const instructions: SystemModelMessage[] = toInstructions(probe.blocks);
  // Mastra's Agent.stream with its own copy of the scripted model, the same instructions, tool and script.
  const mastraModel = createScriptedModel([]);
  const peer = await loadMastraPeer({ model: mastraModel, instructions, tool: { ...getPrice, execute: handler } });
  const runMastra = async (mastra: MastraPeer) => {
    mastraModel.push(...turnScript());
    const stop = stopwatch();
    await mastra.turn(MESSAGE);
    return stop();
  };
  // Like for like with our SQLite turn: Mastra persisting the conversation in its own SQLite storage (LibSQL), each
  // turn on a new thread as each of ours starts a new session.
  const storedModel = createScriptedModel([]);
  const stored = mastraStorageUrl === undefined ? undefined : await loadMastraPeer({ model: storedModel, instructions, tool: { ...getPrice, execute: handler }, storageUrl: mastraStorageUrl });
  let thread = 0;
  const runMastraStored = async (mastra: MastraPeer) => {
    storedModel.push(...turnScript());
    const stop = stopwatch();
    await mastra.turn(MESSAGE, `bench-${thread++}`);
    return stop();
  };

  // What every plain side asks the AI SDK for: the runtime's system blocks, tools, tool order and step limit.
  const plainCall = (model: ReturnType<typeof createScriptedModel>) => ({ model, instructions, prompt: MESSAGE, tools: plainTools, toolOrder: probe.toolNames, stopWhen: isStepCount(12), toolCallConcurrency: 1 });
  const runPlain = async () => {
    plainModel.push(...turnScript());
    const stop = stopwatch();
    const result = streamText(plainCall(plainModel));
    for await (const _ of result.stream) {
      // drain
    }
    return stop();
  };
  const quietModel = createScriptedModel([]);
  const runPlainQuiet = async () => {
    quietModel.push(...turnScript());
    const stop = stopwatch();
    const result = experimental_streamTextLowMemory({ ...plainCall(quietModel), telemetry: { isEnabled: false }, onStepEnd: () => {} });
    for await (const _ of result.stream) {
      // drain
    }
    return stop();
  };
  const plainGenModel = createScriptedModel([]);
  const runPlainGen = async () => {
    plainGenModel.push(...turnScript());
    const stop = stopwatch();
    await generateText(plainCall(plainGenModel));
    return stop();
  };
  // Each turn is the first turn of its own session, so histories do not grow and both sides send the same
  // messages. The once-per-session work (session row, frozen memory snapshot) is timed separately.
  const sessionStart: number[] = [];
  let steps = 0;
  const runOurs = async (i: number) => {
    ourModel.push(...turnScript());
    const s0 = performance.now();
    await runtime.buildSystemPromptBlocks({ sessionId: `bench-${i}` });
    sessionStart.push(performance.now() - s0);
    const stop = stopwatch();
    const r = await runtime.generate({ sessionId: `bench-${i}`, message: MESSAGE });
    steps = r.steps;
    return stop();
  };
  const runOursGen = async (i: number) => {
    ourModel.push(...turnScript());
    await runtime.buildSystemPromptBlocks({ sessionId: `bench-g${i}` });
    const stop = stopwatch();
    await runtime.generate({ sessionId: `bench-g${i}`, message: MESSAGE, modelCall: 'generate' });
    return stop();
  };
  let session = 0;
  const mainSides: Array<() => Promise<number>> = [runPlain, () => runOurs(session++), runPlainGen, () => runOursGen(session)];
  if (typeof peer !== 'string') mainSides.push(() => runMastra(peer));
  mainSides.push(runPlainQuiet);
  const cpu = mainSides.map((): number[] => []);
  const samples = await rounds(mainSides, cpu);
  const [plain = [], ours = [], plainGen = [], oursGen = []] = samples;
  const mastra = typeof peer === 'string' ? [] : samples[4]!;
  const plainQuiet = samples.at(-1)!;
  const sessionStarts = sessionStart.slice(WARMUP, TURNS + WARMUP);
  // The like-for-like peer in a phase of its own (with our turn and the plain one again), so its storage's work (a
  // native client with its own threads) never runs inside the rows the targets read.
  const [storedPlain = [], storedOurs = [], mastraStored = []] =
    stored !== undefined && typeof stored !== 'string' ? await rounds([runPlain, () => runOurs(session++), () => runMastraStored(stored)]) : [];
  // The breakdown, in a phase of its own: the plain turn's parts and our turn's events, each timed as the caller reads it.
  const plainPhases: number[][] = [], ourPhases: number[][] = [];
  const breakdownSides: Array<() => Promise<number>> = [
    async () => {
      plainModel.push(...turnScript());
      const seen: Array<readonly [string, number]> = [];
      const t0 = performance.now();
      const result = streamText(plainCall(plainModel));
      for await (const part of result.stream) seen.push([part.type, performance.now() - t0]);
      const ms = performance.now() - t0;
      plainPhases.push(phaseTimes(seen, 'finish-step', ms));
      return ms;
    },
    () => phasedTurn(ourSide, `bench-${session++}`, ourPhases),
  ];
  const filelessSide = fileless === undefined ? undefined : await buildOurs(fileless);
  const filelessPhases: number[][] = [];
  if (filelessSide) breakdownSides.push(() => phasedTurn(filelessSide, `bench-${session++}`, filelessPhases));
  await rounds(breakdownSides);
  const phaseP50 = (samples: number[][]) => PHASES.map((_, k) => summarize(samples.slice(WARMUP).map((p) => p[k]!)).p50);
  await memory.close();
  await filelessSide?.memory.close();
  return {
    breakdown: { plain: phaseP50(plainPhases), ours: phaseP50(ourPhases), ...(filelessSide ? { fileless: phaseP50(filelessPhases) } : {}) },
    cpu: { plain: summarize(cpu[0]!), ours: summarize(cpu[1]!), mastra: typeof peer === 'string' ? undefined : summarize(cpu[4]!) },
    rounds: { wall: { plain, ours, mastra }, cpu: { plain: cpu[0]!, ours: cpu[1]!, mastra: typeof peer === 'string' ? [] : cpu[4]! } },
    plain: summarize(plain),
    plainQuiet: summarize(plainQuiet),
    ours: summarize(ours),
    plainGen: summarize(plainGen),
    oursGen: summarize(oursGen),
    session: summarize(sessionStarts),
    steps,
    mastra: typeof peer === 'string' ? peer : summarize(mastra),
    ...(typeof peer === 'string' ? {} : { mastraVersion: peer.version }),
    ...(stored === undefined
      ? {}
      : { mastraStored: typeof stored === 'string' ? stored : { plain: summarize(storedPlain), ours: summarize(storedOurs), mastra: summarize(mastraStored) } }),
  };
}

const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-runtime-'));
const sqlite = createSqliteStorage({ path: path.join(dir, 'bench.db'), logger: silentLogger });
// The same engine without the file, for the breakdown's last columns: what WAL writes and locks cost per phase.
const filelessSqlite = createSqliteStorage({ path: ':memory:', logger: silentLogger });
const onSqlite = await measure(sqlite, `file:${path.join(dir, 'mastra.db')}`, filelessSqlite);
await sqlite.close();
await filelessSqlite.close();
rmSync(dir, { recursive: true, force: true });
const inMemory = await measure(createInMemoryStorage());

console.log(`\nbench/runtime — ${TURNS} turns of ${onSqlite.steps} steps (2 tool calls + text), scripted model, audit + memory on; the SDK from ${bench.from === 'dist' ? 'dist/ (the built package)' : 'src/ through tsx (BENCH_FROM=src)'}; ${machine()}\n`);
const added = (r: Measured) => r.ours.p50 - r.plain.p50;
const mastraAdded = (r: Measured) => (typeof r.mastra === 'string' ? Number.NaN : r.mastra.p50 - r.plain.p50);
const rows: Array<Array<string | number>> = [];
for (const [label, r] of [['SQLite', onSqlite], ['in-memory', inMemory]] as const) {
  rows.push([`plain streamText (same model, tools, system blocks)`, label, fmt(r.plain.p50), fmt(r.plain.p95), '', '', '']);
  rows.push([`… plain, called as the runtime calls the AI SDK`, label, fmt(r.plainQuiet.p50), fmt(r.plainQuiet.p95), '', '', '']);
  rows.push([`createAgentRuntime().generate`, label, fmt(r.ours.p50), fmt(r.ours.p95), fmt(added(r)), fmt(added(r) / 3), `${(r.ours.p50 / r.plain.p50).toFixed(2)}×`]);
  if (typeof r.mastra === 'string') rows.push([`Mastra Agent.stream — SKIPPED`, label, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a']);
  else rows.push([`Mastra ${r.mastraVersion} Agent.stream (no storage)`, label, fmt(r.mastra.p50), fmt(r.mastra.p95), fmt(mastraAdded(r)), fmt(mastraAdded(r) / 3), `${(r.mastra.p50 / r.plain.p50).toFixed(2)}×`]);
  if (typeof r.mastraStored === 'string') rows.push([`Mastra Agent.stream + Memory on LibSQL — SKIPPED`, label, 'n/a', 'n/a', 'n/a', 'n/a', 'n/a']);
  else if (r.mastraStored !== undefined) {
    const m = r.mastraStored;
    rows.push([`… own phase: plain streamText`, label, fmt(m.plain.p50), fmt(m.plain.p95), '', '', '']);
    rows.push([`… own phase: createAgentRuntime().generate`, label, fmt(m.ours.p50), fmt(m.ours.p95), fmt(m.ours.p50 - m.plain.p50), fmt((m.ours.p50 - m.plain.p50) / 3), `${(m.ours.p50 / m.plain.p50).toFixed(2)}×`]);
    rows.push([`… own phase: Mastra ${r.mastraVersion} Agent.stream + Memory on LibSQL`, label, fmt(m.mastra.p50), fmt(m.mastra.p95), fmt(m.mastra.p50 - m.plain.p50), fmt((m.mastra.p50 - m.plain.p50) / 3), `${(m.mastra.p50 / m.plain.p50).toFixed(2)}×`]);
  }
  rows.push([`plain generateText (not streamed)`, label, fmt(r.plainGen.p50), fmt(r.plainGen.p95), '', '', '']);
  rows.push([`createAgentRuntime().generate({ modelCall: 'generate' })`, label, fmt(r.oursGen.p50), fmt(r.oursGen.p95), fmt(r.oursGen.p50 - r.plainGen.p50), fmt((r.oursGen.p50 - r.plainGen.p50) / 3), `${(r.oursGen.p50 / r.plainGen.p50).toFixed(2)}×`]);
}
console.log(table(['path', 'storage', 'turn p50 ms', 'turn p95 ms', 'added per turn p50 ms', 'added per step p50 ms', 'turn ratio p50'], rows));
// Where the added time goes: each phase's p50 on each side (a phase of its own, after the rounds above).
const phaseRows = PHASES.map(([label, what], k) => {
  const plainMs = onSqlite.breakdown.plain[k]!;
  const sqliteMs = onSqlite.breakdown.ours[k]!;
  const memoryMs = inMemory.breakdown.ours[k]!;
  const filelessMs = onSqlite.breakdown.fileless?.[k] ?? Number.NaN;
  return [label, what, fmt(plainMs), fmt(sqliteMs), fmt(sqliteMs - onSqlite.breakdown.plain[k]!), fmt(memoryMs), fmt(memoryMs - inMemory.breakdown.plain[k]!), fmt(filelessMs), fmt(sqliteMs - filelessMs)];
});
const phaseSum = (r: Measured, side: 'plain' | 'ours' | 'fileless') => (r.breakdown[side] ?? [Number.NaN]).reduce((a, b) => a + b, 0);
phaseRows.push([
  'sum of the phases', '', fmt(phaseSum(onSqlite, 'plain')), fmt(phaseSum(onSqlite, 'ours')), fmt(phaseSum(onSqlite, 'ours') - phaseSum(onSqlite, 'plain')), fmt(phaseSum(inMemory, 'ours')),
  fmt(phaseSum(inMemory, 'ours') - phaseSum(inMemory, 'plain')), fmt(phaseSum(onSqlite, 'fileless')), fmt(phaseSum(onSqlite, 'ours') - phaseSum(onSqlite, 'fileless')),
]);
console.log('\nWhere the added time goes: each phase between two points the caller reads (plain: stream parts; ours: runtime.run events),');
console.log(`p50 ms over ${TURNS} turns of each side in a phase of their own (the plain column is the SQLite run's; the in-memory run has its own).`);
console.log("The last two columns: our turn on SQLite ':memory:' (the same engine, schema and code, no file: no WAL frame written, no lock");
console.log('taken) in the SQLite run\'s rounds, and what the file adds over it: the system calls of its commits and read transactions.');
console.log(table(['phase', 'what our turn does in it', 'plain', 'SQLite', 'SQLite adds', 'in-memory', 'in-memory adds', "SQLite ':memory:'", 'the file adds'], phaseRows));
console.log(`\nOnce per session (not in the turn times): session row + frozen memory snapshot of 200 memories — SQLite p50 ${fmt(onSqlite.session.p50)} ms, in-memory p50 ${fmt(inMemory.session.p50)} ms.`);
console.log("The generate rows are the non-streaming path (runtime.run({ modelCall: 'generate' }), what agent backtests use), against plain generateText.");
console.log('The "called as the runtime calls the AI SDK" row is the plain turn through the SDK\'s single-consumer streamText');
console.log('(experimental_streamTextLowMemory, no tee, no replay) with telemetry: { isEnabled: false }, as the runtime calls it when no');
console.log('AI SDK integration is registered and nothing subscribes to its tracing channel.');
console.log('Targets: ≤ 1 ms added per step (p50); turn ≤ 1.25× plain streamText; what we add ≤ 0.20× what Mastra adds.');
if (typeof onSqlite.mastra === 'string') console.log(`\n*** Mastra row SKIPPED: ${onSqlite.mastra} ***`);
if (typeof onSqlite.mastraStored === 'string') console.log(`\n*** Mastra + LibSQL row SKIPPED: ${onSqlite.mastraStored} ***`);
console.log('The Mastra rows: "no storage" keeps nothing between turns (the target compares both of our storages with it); "Memory on');
console.log('LibSQL" is Mastra persisting each turn\'s messages and reading the last 10 back, as its docs set it up (no semantic');
console.log('recall, no audit rows, no call journal): the like-for-like peer of our SQLite turn, run in a phase of its own (the');
console.log('"own phase" rows, with our SQLite turn and the plain one again) and printed beside the target, not in it.');
// Lines for CI logs (.ci/run greps them): what the runtime adds to a turn over plain streamText, per storage, and
// that against what Mastra's Agent.stream adds over the same plain streamText in the same process.
const load = `load average ${loadavg()[0]!.toFixed(2)}`;
console.log(
  `target: runtime adds ≤ 1 ms per step over plain streamText (p50; SQLite ${fmt(added(onSqlite))} ms per turn = ${fmt(added(onSqlite) / 3)} per step ${added(onSqlite) / 3 <= 1 ? 'met' : 'NOT met'}, ` +
    `in-memory ${fmt(added(inMemory))} ms per turn; plain ${fmt(onSqlite.plain.p50)} ms) — ${TURNS} turns, ${load}`,
);
if (typeof onSqlite.mastra === 'string') {
  console.log(`target: runtime adds ≤ 0.20× what Mastra Agent.stream adds (SKIPPED: ${onSqlite.mastra})`);
} else {
  const ratio = (r: Measured) => added(r) / mastraAdded(r);
  // The same ratio in CPU time of the process (p50 per turn): steadier than the wall ratio on a shared host.
  const cpuAdded = (r: Measured) => r.cpu.ours.p50 - r.cpu.plain.p50;
  const cpuRatio = (r: Measured) => cpuAdded(r) / ((r.cpu.mastra?.p50 ?? Number.NaN) - r.cpu.plain.p50);
  // 95 % bootstrap intervals over whole rounds: how far the samples' own noise (Mastra's most of all) moves each ratio.
  const interval = (r: Measured, kind: 'wall' | 'cpu') => {
    const { low, high } = bootstrapAddedRatio({ ours: r.rounds[kind].ours, base: r.rounds[kind].plain, peer: r.rounds[kind].mastra });
    return `95% ${low.toFixed(2)}–${high.toFixed(2)}`;
  };
  console.log(
    `target: runtime adds ≤ 0.20× what Mastra ${onSqlite.mastraVersion} Agent.stream adds (p50; SQLite ${fmt(added(onSqlite))} / ${fmt(mastraAdded(onSqlite))} ms = ${ratio(onSqlite).toFixed(2)}× (${interval(onSqlite, 'wall')}) ${ratio(onSqlite) <= 0.2 ? 'met' : 'NOT met'}, ` +
      `in-memory ${fmt(added(inMemory))} / ${fmt(mastraAdded(inMemory))} ms = ${ratio(inMemory).toFixed(2)}×; ` +
      `CPU: SQLite ${fmt(cpuAdded(onSqlite))} ms = ${cpuRatio(onSqlite).toFixed(2)}× (${interval(onSqlite, 'cpu')}), in-memory ${fmt(cpuAdded(inMemory))} ms = ${cpuRatio(inMemory).toFixed(2)}×) — ${TURNS} turns, ${load}`,
  );
}
// One line for CI's log: the ratio without what the runtime saves in how it calls the AI SDK, so the log shows both readings.
if (typeof onSqlite.mastra !== 'string') {
  const quietAdded = (r: Measured) => r.ours.p50 - r.plainQuiet.p50;
  console.log(
    `same SDK call on both (not the target): over the plain turn called as the runtime calls the AI SDK (single-consumer stream, telemetry off; ${fmt(onSqlite.plainQuiet.p50)} ms), SQLite adds ${fmt(quietAdded(onSqlite))} ms = ` +
      `${(quietAdded(onSqlite) / mastraAdded(onSqlite)).toFixed(2)}× what Mastra adds, in-memory ${fmt(quietAdded(inMemory))} ms = ${(quietAdded(inMemory) / mastraAdded(inMemory)).toFixed(2)}× — ${TURNS} turns, ${load}`,
  );
}
// One line for CI's log: what each phase adds, SQLite then in-memory, so a regression shows which part of the turn moved.
const phasesRan = [onSqlite, inMemory].every((r) => [...r.breakdown.plain, ...r.breakdown.ours].every((ms) => Number.isFinite(ms) && ms >= 0));
/** Each phase's label and `over[k] − under[k]` (ms), for a CI line. */
const perPhase = (over: readonly number[], under: readonly number[]) => PHASES.map(([label], k) => `${label.split(':')[0]} ${fmt(over[k]! - under[k]!)}`).join(', ');
const addedPerPhase = (r: Measured) => perPhase(r.breakdown.ours, r.breakdown.plain);
if (!phasesRan) console.log('breakdown: NOT RUN (the parts or events of a turn did not come in the order the phases expect: tool-call, tool-result, twice, then text)');
else {
  console.log(`breakdown (p50 ms added per phase; not a target): SQLite ${addedPerPhase(onSqlite)}; in-memory ${addedPerPhase(inMemory)} — ${TURNS} turns, ${load}`);
  const fileless = onSqlite.breakdown.fileless;
  if (fileless !== undefined && fileless.every((ms) => Number.isFinite(ms) && ms >= 0)) {
    console.log(`the file (not a target): SQLite on a file takes ${fmt(phaseSum(onSqlite, 'ours') - phaseSum(onSqlite, 'fileless'))} ms per turn more than on ':memory:' (${perPhase(onSqlite.breakdown.ours, fileless)}) — ${TURNS} turns, ${load}`);
  }
}
if (onSqlite.mastraStored !== undefined && typeof onSqlite.mastraStored !== 'string') {
  const m = onSqlite.mastraStored;
  const oursAdded = m.ours.p50 - m.plain.p50;
  const storedAdded = m.mastra.p50 - m.plain.p50;
  console.log(
    `like for like (not the target): SQLite turn adds ${fmt(oursAdded)} ms, Mastra ${onSqlite.mastraVersion} Agent.stream with Memory on LibSQL adds ${fmt(storedAdded)} ms = ${(oursAdded / storedAdded).toFixed(2)}× (own phase) — ${TURNS} turns, ${load}`,
  );
}
