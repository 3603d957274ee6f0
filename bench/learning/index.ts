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

try {
  const sqlite = createSqliteStorage({ path: path.join(dir, 'turn-end.db') });
  const rows = [...(await turnEnd('SQLite WAL', sqlite)), ...(await turnEnd('in-memory', createInMemoryStorage()))];
  console.log(`\nLearning loop cost per turn (${TURNS} turns; ${machine()}) — ms`);
  console.log(table(['storage', 'work', 'p50 ms', 'p95 ms'], rows));
  await sqlite.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
