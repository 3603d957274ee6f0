/**
 * Automation benchmarks.
 *
 * 1. What storing a workflow run costs: a two-step workflow (two READ_ONLY tool calls through the registry, audit on)
 *    run with `runtime.runWorkflow` (not stored) and with `startStoredWorkflow` (claimed, each step saved, finished).
 * 2. One price-alert check (`checkAlerts`): 1,000 active alerts over 20 assets that do not fire (the steady state:
 *    one page read, 20 price reads, no writes), and no alerts at all.
 *
 * Run: npm run bench -- automation
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier, silentLogger, startStoredWorkflow, type Storage, type WorkflowDefinition } from '../../src/index';
import { checkAlerts, type MarketDataProvider } from '../../src/finance/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createInMemoryStorage, createScriptedModel } from '../../src/testing/index';
import { fmt, machine, summarize, table, timeEach } from '../lib/stats';

const RUNS = Number(process.env.BENCH_RUNS ?? 1000);
const CHECKS = Number(process.env.BENCH_CHECKS ?? 200);
const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-automation-'));
const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const ASSETS = Array.from({ length: 20 }, (_, i) => `A${i}`);
const market: MarketDataProvider = { name: 'bench', simulated: true, getPrice: async (symbol) => ({ symbol, priceUsd: 100, source: 'bench', simulated: true, at: new Date(T0).toISOString() }) };

async function workflows(label: string, storage: Storage) {
  const tools = createToolRegistry({
    storage,
    tools: [defineTool({ name: 'get_price', toolSet: 'read', description: 'Price', permissionTier: PermissionTier.READ_ONLY, inputSchema: z.object({ symbol: z.string() }), execute: ({ symbol }) => ({ symbol, priceUsd: 100 }) })],
  });
  const runtime = createAgentRuntime({ model: createScriptedModel([]), tools, storage, logger: silentLogger });
  const definition: WorkflowDefinition = { id: 'bench', steps: [{ id: 'a', kind: 'tool_call', tool: 'get_price', args: { symbol: 'BTC' } }, { id: 'b', kind: 'tool_call', tool: 'get_price', args: { symbol: 'ETH' } }] };
  let n = 0;
  const generateId = (p: string) => `${p}_${++n}`;
  for (let i = 0; i < 100; i++) await runtime.runWorkflow(definition); // warm-up
  const plain = await timeEach(RUNS, () => runtime.runWorkflow(definition));
  const stored = await timeEach(RUNS, async (i) => {
    const started = await startStoredWorkflow({ runtime, storage, definition, trigger: 'manual', triggerKey: `k${i}`, userId: 'bench', owner: 'bench:1', now: () => new Date(T0), generateId });
    await started!.done;
  });
  return [
    [label, 'workflow, 2 tool steps, not stored', fmt(summarize(plain).p50), fmt(summarize(plain).p95)],
    [label, 'workflow, 2 tool steps, stored run', fmt(summarize(stored).p50), fmt(summarize(stored).p95)],
  ];
}

async function alerts(label: string, storage: Storage) {
  const empty = await timeEach(CHECKS, () => checkAlerts({ storage, market, now: () => new Date(T0) }));
  for (let i = 0; i < 1000; i++) {
    await storage.alerts.create({ userId: `u${i % 50}`, asset: ASSETS[i % ASSETS.length]!, condition: 'above', threshold: 1_000_000, basePrice: 100, createdAt: new Date(T0).toISOString(), expiresAt: new Date(T0 + 86_400_000).toISOString() });
  }
  const full = await timeEach(CHECKS, () => checkAlerts({ storage, market, now: () => new Date(T0) }));
  return [
    [label, 'alert check, no alerts', fmt(summarize(empty).p50), fmt(summarize(empty).p95)],
    [label, 'alert check, 1,000 active over 20 assets (none fire)', fmt(summarize(full).p50), fmt(summarize(full).p95)],
  ];
}

try {
  const rows: Array<Array<string | number>> = [];
  const sqlite = createSqliteStorage({ path: path.join(dir, 'bench.db'), vector: false });
  rows.push(...(await workflows('SQLite WAL', sqlite)), ...(await alerts('SQLite WAL', sqlite)));
  await sqlite.close();
  const memory = createInMemoryStorage();
  rows.push(...(await workflows('in-memory', memory)), ...(await alerts('in-memory', memory)));
  console.log(`automation (${machine()}; ${RUNS} runs, ${CHECKS} checks)\n`);
  console.log(table(['storage', 'work', 'p50 ms', 'p95 ms'], rows));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
