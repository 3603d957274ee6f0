/**
 * Learning loop benchmarks.
 *
 * 1. The cost the loop adds at turn end: `captureTurn` of a post-turn record with one fund-moving execution
 *    (alternating opens and closes, so every other call closes a trade, attributes its outcome to the
 *    methodology in play and opens a role-memory case), and of a record with no execution (most turns).
 *    Also the turn-start side: preference graduation plus the learned prompt block.
 * 2. Compiled pages at 10k trades and 200 methodologies: a cold page (cache cleared) and a cached one.
 * 3. Memory from conversations: queueing a user turn at turn end (the only part on the turn's path), and the
 *    extraction pass per turn (batches of 20 synthetic user messages, a scripted extractor that returns one fact
 *    per two messages): the pass's own time without the model, and the tokens and list-price cost per turn of
 *    its model calls (the scripted model counts input tokens as the prompt's characters / 4).
 *
 * Run: npm run bench -- learning
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createLearningStore, createMemoryExtractor, createMemoryStore, DEFAULT_MODEL_PRICES, type MemoryStore, type PostTurnRecord, silentLogger, type Storage, type TurnExecution,
  usageCostUsd,
} from '../../src/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createInMemoryStorage, createScriptedModel, type ScriptedCall } from '../../src/testing/index';
import { fmt, machine, summarize, table, timeEach } from '../lib/stats';

const TURNS = Number(process.env.BENCH_TURNS ?? 2000);
const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-learning-'));
const T0 = Date.parse('2026-03-01T00:00:00.000Z');

const record = (i: number, executions: TurnExecution[], methodologyIds: number[]): PostTurnRecord => ({
  sessionId: `s${i}`, turnId: `t${i}`, traceId: `tr${i}`, source: 'user', userId: 'bench', text: 'ok', stopReason: 'finished', steps: 2,
  usage: { inputTokens: 1000, outputTokens: 50, cacheReadTokens: 800, cacheWriteTokens: 0 }, toolCalls: [], pendingApprovals: [], turnCount: i,
  activeSkills: ['minara.core'], methodologyIds, preferenceIds: [], executions,
});
const execution = (i: number): TurnExecution => {
  const open = i % 2 === 0;
  // Three closes in four win, so the methodology stays in play (and is proposed for graduation) throughout.
  const win = i % 8 !== 7;
  return {
    toolCallId: `c${i}`, toolName: open ? 'buy_token' : 'sell_token', input: { symbol: 'BTC', amountUsd: 100, slippageBps: 50 },
    orderFacts: { notionalUsd: 100, asset: 'BTC', side: open ? 'buy' : 'sell', quantity: 0.001 }, orderId: `o${i}`, status: 'filled',
    fill: { symbol: 'BTC', side: open ? 'buy' : 'sell', quantity: 0.001, price: open ? 100_000 : 100_000 * (win ? 1.02 : 0.99), notionalUsd: 100, feeUsd: 0.1, realizedPnlUsd: open ? -0.1 : win ? 1.9 : -1.1 },
    provider: 'paper', simulated: true, at: new Date(T0 + i * 60_000).toISOString(), role: 'minara.core',
  };
};

async function turnEnd(label: string, storage: Storage) {
  let t = T0;
  const store = createLearningStore({ storage, scope: { userId: 'bench' }, now: () => new Date((t += 1000)), logger: silentLogger });
  // As createApp wires it: with the tenant's memory, every closed trade also writes its case's memory row.
  const memory = createMemoryStore({ storage, scope: { userId: 'bench-mem' }, logger: silentLogger });
  const withMemory = createLearningStore({ storage, scope: { userId: 'bench-mem' }, memory, now: () => new Date((t += 1000)), logger: silentLogger });
  const { methodology: m2 } = await withMemory.createMethodology({ asset: 'BTC', text: 'Buy BTC breakouts above the prior day high' });
  for (let i = 0; i < 200; i++) await withMemory.captureTurn(record(-5000 - i, [execution(3_000_000 + i)], [m2.id])); // warm-up
  const withCaseMemory = await timeEach(TURNS, (i) => withMemory.captureTurn(record(2_000_000 + i, [execution(2_000_000 + i)], [m2.id])));
  if ((await withMemory.listCases({ withoutMemory: true })).length > 0) throw new Error('a case was left without its memory row');
  await memory.close();
  const { methodology } = await store.createMethodology({ asset: 'BTC', text: 'Buy BTC breakouts above the prior day high' });
  for (let i = 0; i < 200; i++) await store.captureTurn(record(-1 - i, [execution(1_000_000 + i)], [methodology.id])); // warm-up
  const withTrade = await timeEach(TURNS, (i) => store.captureTurn(record(i, [execution(i)], [methodology.id])));
  const noTrade = await timeEach(TURNS, (i) => store.captureTurn(record(TURNS + i, [], [methodology.id])));
  const m = (await store.getMethodology(methodology.id))!;
  if (m.state === 'quarantined' || m.uses < TURNS / 2) throw new Error(`the bench methodology left play: ${JSON.stringify(m)}`);
  const start = await timeEach(TURNS, async () => {
    await store.graduatePreferences();
    await store.promptContext('should I buy more BTC?');
  });
  return [
    [label, 'turn end: one execution (open or close + attribution)', ...stats(withTrade)],
    [label, 'turn end: one execution, with the case memory row of a close (as createApp)', ...stats(withCaseMemory)],
    [label, 'turn end: no execution', ...stats(noTrade)],
    [label, 'turn start: graduation + learned block', ...stats(start)],
  ];
}

function stats(samples: number[]): string[] {
  const s = summarize(samples);
  return [fmt(s.p50), fmt(s.p95)];
}

/** Compiled pages over 10k trades (5k BTC round trips; 1,000 of their cases reflected) and 200 methodologies (60 graduated). */
async function pages(label: string, storage: Storage) {
  let t = T0;
  const now = () => new Date((t += 1000));
  const store = createLearningStore({ storage, scope: { userId: 'pages' }, now, logger: silentLogger });
  const cold = createLearningStore({ storage, scope: { userId: 'pages' }, now, logger: silentLogger, compiledPageTtlMs: 0 });
  const classes = ['crypto_major', 'crypto_alt', 'crypto_meme', 'perps', 'forex'];
  const ids: number[] = [];
  for (let i = 0; i < 200; i++) {
    const { methodology } = await store.createMethodology({ assetClass: classes[i % classes.length]!, text: `Methodology ${i}: buy the breakout above level ${i}` });
    ids.push(methodology.id);
    if (i % 10 < 3) await store.graduateMethodology(methodology.id, { force: true });
  }
  for (let i = 0; i < PAGE_TRADES; i++) await store.captureTurn(record(i, [execution(i)], [ids[0]!]));
  const reflection = JSON.stringify({ classification: 'variance', rationale: 'noise', lessons: ['Size down after two losses in a row.'], methodology: null });
  for (const c of await store.listCases({ status: 'pending', limit: 1000 })) {
    await storage.learning.markCaseReflected({ userId: 'pages' }, c.id, { classification: 'variance', reflection, lessonMemoryIds: [], now: now().toISOString() });
  }
  const page = await store.compiledPage('BTC');
  if (!page.includes('### Graduated methodologies') || !page.includes('[variance]') || !page.includes('### Trades')) throw new Error('the bench page is incomplete');
  const coldRuns = await timeEach(PAGE_RUNS, () => cold.compiledPage('BTC'));
  const cachedRuns = await timeEach(PAGE_RUNS * 10, () => store.compiledPage('BTC'));
  const trades = (await store.listTrades({ limit: 1 })).length;
  if (trades !== 1) throw new Error('no trades recorded');
  store.close();
  cold.close();
  return [
    [label, `compiled page, cold (${PAGE_TRADES} trades, 200 methodologies)`, ...stats(coldRuns)],
    [label, 'compiled page, cached', ...stats(cachedRuns)],
  ];
}
const PAGE_TRADES = Number(process.env.BENCH_PAGE_TRADES ?? 10_000);
const EXTRACTION_TURNS = Number(process.env.BENCH_EXTRACTION_TURNS ?? 2000);

/** Synthetic user messages of a finance chat (~60–120 characters, like real ones). */
const MESSAGES = [
  'What is the price of BTC right now and how did it move today?',
  'I only trade majors, never memecoins, and I keep perps under 3x leverage',
  'buy 100 USD of ETH with at most 0.5% slippage please',
  'My daughter starts university in September so I need to keep 20k in stablecoins',
  'Show me my portfolio and the P&L of the week',
  'I prefer weekly charts, the daily ones are mostly noise to me',
  'close half of my SOL position if it drops below 140',
  'I am based in Lisbon and usually check the markets before 9am',
];

/** The cost of memory extraction: queueing at turn end, then the pass per turn with a scripted extractor. */
async function extraction(label: string, storage: Storage) {
  const stores = new Map<string, MemoryStore>();
  const memoryFor = ({ userId }: { userId: string }) => stores.get(userId) ?? stores.set(userId, createMemoryStore({ storage, scope: { userId }, logger: silentLogger })).get(userId)!;
  const answer = (call: ScriptedCall) => {
    const numbers = [...JSON.stringify(call.prompt).matchAll(/\[(\d+)\] /gu)].map((m) => Number(m[1]));
    const memories = numbers.filter((n) => n % 2 === 0).map((n) => ({ turn: n, kind: 'fact', content: `The user stated fact number ${n} of this batch ${call.index}.` }));
    return { text: JSON.stringify({ memories }) };
  };
  const model = createScriptedModel([], { modelId: 'claude-haiku-4-5' });
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  const extractor = createMemoryExtractor({
    storage, memoryFor, model, logger: silentLogger,
    recordUsage: async (u) => {
      usage.inputTokens += u.inputTokens;
      usage.outputTokens += u.outputTokens;
    },
  });
  const queue = await timeEach(EXTRACTION_TURNS, (i) => extractor.enqueue({ userId: `x${i % 10}`, sessionId: `s${i % 50}`, turnId: `t${i}`, text: `${MESSAGES[i % MESSAGES.length]} (${i})` }));
  for (let i = 0; i < EXTRACTION_TURNS / 20 + 20; i++) model.push(answer);
  const t0 = performance.now();
  const r = await extractor.run();
  const passMs = performance.now() - t0;
  if (r.turns !== EXTRACTION_TURNS || r.failed > 0) throw new Error(`the extraction bench did not drain: ${JSON.stringify(r)}`);
  for (const m of stores.values()) await m.close();
  const price = DEFAULT_MODEL_PRICES['claude-haiku-4']!;
  return {
    timing: [
      [label, 'turn end: queue the user message for extraction', ...stats(queue)],
      [label, `extraction pass per turn (batches of 20, model excluded; mean over ${EXTRACTION_TURNS})`, fmt(passMs / EXTRACTION_TURNS), '—'],
    ],
    cost: [[
      label, String(EXTRACTION_TURNS), String(r.turns / 20), (usage.inputTokens / r.turns).toFixed(1), (usage.outputTokens / r.turns).toFixed(1),
      (usageCostUsd(usage, price) / r.turns).toFixed(6), String(r.written),
    ]],
  };
}
const PAGE_RUNS = Number(process.env.BENCH_PAGE_RUNS ?? 300);

try {
  const sqlite = createSqliteStorage({ path: path.join(dir, 'turn-end.db') });
  const rows = [...(await turnEnd('SQLite WAL', sqlite)), ...(await turnEnd('in-memory', createInMemoryStorage()))];
  console.log(`\nLearning loop cost per turn (${TURNS} turns; ${machine()}) — ms`);
  console.log(table(['storage', 'work', 'p50 ms', 'p95 ms'], rows));
  await sqlite.close();
  const pagesDb = createSqliteStorage({ path: path.join(dir, 'pages.db') });
  const pageRows = [...(await pages('SQLite WAL', pagesDb)), ...(await pages('in-memory', createInMemoryStorage()))];
  console.log(`\nCompiled pages (${machine()}) — ms`);
  console.log(table(['storage', 'work', 'p50 ms', 'p95 ms'], pageRows));
  await pagesDb.close();
  const extractionDb = createSqliteStorage({ path: path.join(dir, 'extraction.db') });
  const ex = [await extraction('SQLite WAL', extractionDb), await extraction('in-memory', createInMemoryStorage())];
  console.log(`\nMemory extraction (${machine()}) — ms`);
  console.log(table(['storage', 'work', 'p50 ms', 'p95 ms'], ex.flatMap((e) => e.timing)));
  console.log('\nMemory extraction: the model calls per turn (scripted extractor; input tokens = prompt characters / 4; USD at the claude-haiku-4 list price)');
  console.log(table(['storage', 'turns', 'model calls', 'input tokens / turn', 'output tokens / turn', 'USD / turn', 'facts kept'], ex.flatMap((e) => e.cost)));
  await extractionDb.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
