/**
 * Finance pack benchmarks.
 *
 * 1. A scripted trade turn end to end, measured on the path the runtime takes (the runtime itself is not
 *    used): route (skill registry `route` + scenario classifier), preview dispatch, the confirm dispatch that
 *    raises the approval request, `approvals.decide`, the execution dispatch with `approvalId` (safety stack,
 *    paper fill), and the audit query for the turn's trace.
 * 2. Paper provider order throughput (direct `executeSpot`, alternating buy/sell), in-memory and SQLite.
 *
 * Run: npm run bench -- finance
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createSkillRegistry, createToolCallContext, createToolRegistry, type Storage } from '../../src/index';
import { createFinancePack } from '../../src/finance/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createInMemoryStorage } from '../../src/testing/index';
import { fmt, machine, summarize, table } from '../lib/stats';

const TURNS = Number(process.env.BENCH_TURNS ?? 300);
const ORDERS = Number(process.env.BENCH_ORDERS ?? 3000);
const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-finance-'));

async function tradeTurns(label: string, storage: Storage) {
  const pack = createFinancePack({ storage, seed: { balances: { USDC: 1e9 } }, limits: { maxTradeUsd: 1e9, maxTotalExposureUsd: 1e12, maxAssetConcentrationPct: 100, maxDailyLossUsd: 1e12 } });
  const tools = pack.attach(createToolRegistry({ tools: pack.tools, hooks: pack.hooks, storage }));
  const skills = createSkillRegistry({ skills: pack.skills, tools, env: {} });
  const stages: Record<string, number[]> = { route: [], preview: [], request: [], decide: [], execute: [], audit: [], total: [] };
  const run = async (i: number, record: boolean) => {
    const ctx = createToolCallContext({ sessionId: `bench-${i}`, source: 'user', traceId: `t_${label}_${i}` });
    const args = { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH' };
    const t = [performance.now()];
    skills.route({ message: 'buy 50 USD of ETH' });
    pack.scenarios.classify('buy 50 USD of ETH', { source: 'user' });
    t.push(performance.now());
    const preview = JSON.parse(await tools.dispatch('buy_token', args, { context: ctx, toolCallId: `p${i}` }));
    if (!preview.ok) throw new Error(JSON.stringify(preview));
    t.push(performance.now());
    const req = JSON.parse(await tools.dispatch('buy_token', { ...args, confirm: true }, { context: ctx, toolCallId: `c${i}` }));
    if (req.code !== 'APPROVAL_REQUIRED') throw new Error(JSON.stringify(req));
    t.push(performance.now());
    await tools.approvals.decide(req.approval.approvalId, { approved: true });
    t.push(performance.now());
    const done = JSON.parse(await tools.dispatch('buy_token', { ...args, confirm: true }, { context: ctx, toolCallId: `c${i}`, approvalId: req.approval.approvalId }));
    if (!done.ok) throw new Error(JSON.stringify(done));
    t.push(performance.now());
    await tools.queryAudit({ traceId: ctx.traceId });
    t.push(performance.now());
    if (!record) return;
    const names = ['route', 'preview', 'request', 'decide', 'execute', 'audit'];
    names.forEach((n, k) => stages[n]!.push(t[k + 1]! - t[k]!));
    stages.total!.push(t[t.length - 1]! - t[0]!);
  };
  for (let i = 0; i < 30; i++) await run(-1 - i, false);
  for (let i = 0; i < TURNS; i++) await run(i, true);
  return Object.entries(stages).map(([stage, s]) => {
    const sum = summarize(s);
    return [label, stage, fmt(sum.p50), fmt(sum.p95)];
  });
}

async function orderThroughput(label: string, storage: Storage) {
  const pack = createFinancePack({ storage, seed: { balances: { USDC: 1e12 } } });
  const p = pack.trading;
  await p.getAccount();
  for (let i = 0; i < 200; i++) await p.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 10, clientOrderId: `w${i}` });
  const t0 = performance.now();
  for (let i = 0; i < ORDERS; i++) {
    if (i % 2 === 0) await p.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 100, clientOrderId: `o${i}` });
    else await p.executeSpot({ from: 'ETH', to: 'USDC', amountUsd: 50, clientOrderId: `o${i}` });
  }
  const wall = performance.now() - t0;
  const t1 = performance.now();
  for (let i = 0; i < ORDERS; i++) await p.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 100, clientOrderId: `o${i - (i % 2)}` }); // replays
  const replay = performance.now() - t1;
  return [label, String(ORDERS), (ORDERS / (wall / 1000)).toFixed(0), fmt(wall / ORDERS), (ORDERS / (replay / 1000)).toFixed(0)];
}

try {
  const sqliteA = createSqliteStorage({ path: path.join(dir, 'turns.db') });
  const sqliteB = createSqliteStorage({ path: path.join(dir, 'orders.db') });
  const turnRows = [...(await tradeTurns('in-memory', createInMemoryStorage())), ...(await tradeTurns('SQLite WAL', sqliteA))];
  console.log(`\nScripted trade turn (${TURNS} turns; ${machine()}) — ms per stage`);
  console.log(table(['storage', 'stage', 'p50 ms', 'p95 ms'], turnRows));
  const orderRows = [await orderThroughput('in-memory', createInMemoryStorage()), await orderThroughput('SQLite WAL', sqliteB)];
  console.log(`\nPaper provider orders (${ORDERS} alternating buy/sell; then the same ids replayed)`);
  console.log(table(['storage', 'orders', 'orders/s', 'ms/order', 'replays/s'], orderRows));
  await sqliteA.close();
  await sqliteB.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
