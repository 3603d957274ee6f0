/**
 * Learning loop benchmarks.
 *
 * 1. The cost the loop adds at turn end: `captureTurn` of a post-turn record with one fund-moving execution
 *    (alternating opens and closes, so every other call closes a trade, attributes its outcome to the
 *    methodology in play and opens a role-memory case), and of a record with no execution (most turns).
 *    Also the turn-start side: preference graduation plus the learned prompt block.
 * 2. Compiled pages at 10k trades and 200 methodologies: a cold page (cache cleared) and a cached one.
 *
 * Run: npm run bench -- learning
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createLearningStore, type PostTurnRecord, silentLogger, type Storage, type TurnExecution } from '../../src/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createInMemoryStorage } from '../../src/testing/index';
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
} finally {
  rmSync(dir, { recursive: true, force: true });
}
