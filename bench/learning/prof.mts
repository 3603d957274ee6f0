import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createLearningStore, silentLogger } from '../../src/index';
import { mkdtempSync } from 'node:fs'; import { tmpdir } from 'node:os'; import path from 'node:path';
const s = createSqliteStorage({ path: path.join(mkdtempSync(path.join(tmpdir(), 'p-')), 'x.db') });
const store = createLearningStore({ storage: s, scope: { userId: 'u' }, logger: silentLogger });
const { methodology: m } = await store.createMethodology({ asset: 'BTC', text: 'x' });
const rec = (i: number) => { const open = i % 2 === 0; const win = i % 8 !== 7; return {
  sessionId: 's', turnId: `t${i}`, traceId: 'x', source: 'user', userId: 'u', text: '', stopReason: 'finished', steps: 1, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, toolCalls: [], pendingApprovals: [], turnCount: 1, activeSkills: [], methodologyIds: [m.id], preferenceIds: [],
  executions: [{ toolCallId: 'c', toolName: 'b', input: { symbol: 'BTC', slippageBps: 50 }, orderFacts: { notionalUsd: 100, asset: 'BTC', side: open ? 'buy' : 'sell', quantity: 0.001 }, orderId: `o${i}`, fill: { symbol: 'BTC', side: open ? 'buy' : 'sell', quantity: 0.001, price: 1, notionalUsd: 100, feeUsd: 0, realizedPnlUsd: open ? 0 : win ? 1 : -1 }, provider: 'paper', simulated: true, at: new Date(1e12 + i * 1000).toISOString(), role: 'r' }] } as never; };
const t0 = performance.now();
for (let i = 0; i < 6000; i++) await store.captureTurn(rec(i));
console.log(((performance.now() - t0) / 6000).toFixed(3), 'ms/turn');
