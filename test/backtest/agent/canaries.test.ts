/**
 * The canary suite (issue 40): leak patterns, each planted with a sentinel token where a careless harness would let
 * the agent see it before its time. The run records every model request (the scripted model keeps them); the test
 * asserts that no request made at simulated time t carries a sentinel that only came to exist after t. Positive
 * controls (items released mid-window) prove the probes would see a leak: they must appear once their time comes.
 * The table of patterns is in docs/backtest-agent.md.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApp, defineTool, PermissionTier, silentLogger } from '@minara/agent';
import { createScriptedModel, type ScriptedCall, type ScriptedStep } from '@minara/agent/testing';
import { createAgentStrategy, type AgentStrategy, type HistoryItem } from '@minara/agent/backtest';
import type { Bar } from '@minara/agent/backtest';
import { dailyBars, driveStrategy } from './mini-driver';

const DAY = 86_400_000;
const START = Date.UTC(2021, 0, 4);
const BARS = 11; // decisions at bars 0, 3, 6, 9 (every 3 bars); bar 10 is only ever in the future
const closeOf = (index: number) => START + (index + 1) * DAY; // a bar is known at its close
const END = closeOf(BARS - 1);
const FUTURE = END + 30 * DAY;
const MID = closeOf(4); // released between decision 2 (bar 3) and decision 3 (bar 6)

interface Canary {
  readonly id: number;
  readonly pattern: string;
  readonly token: string;
  /** Simulated time from which the token may legitimately be seen (Infinity: never within the run). */
  readonly visibleFrom: number;
  /** A positive control: it must be seen once its time comes. */
  readonly control?: boolean;
}

const tok = (n: number) => `CANARY${String(n).padStart(2, '0')}X${(0x5eed * (n + 7)).toString(36).toUpperCase()}`;
const canaries: Canary[] = [];
const plant = (pattern: string, visibleFrom: number, control = false): string => {
  const token = tok(canaries.length + 1);
  canaries.push({ id: canaries.length + 1, pattern, token, visibleFrom, ...(control ? { control } : {}) });
  return token;
};

// ── market data ─────────────────────────────────────────────────────────────
const FUTURE_CLOSE = 98765.4321;
const NEXT_OPEN = 4242.4242;
const LATE_SYMBOL = 'LATECOIN';
const barPatterns: Canary[] = [];

function buildBars(): Bar[] {
  const bars = dailyBars(['BTC', 'ETH'], BARS, START).map((b) => ({ ...b }));
  const btc = bars.filter((b) => b.symbol === 'BTC');
  const eth = bars.filter((b) => b.symbol === 'ETH');
  // 1. a future bar: BTC's last close (bar 10) is a sentinel price.
  Object.assign(btc[10]!, { close: FUTURE_CLOSE, high: FUTURE_CLOSE });
  barPatterns.push({ id: 0, pattern: 'future bar (a close after the last decision)', token: String(FUTURE_CLOSE), visibleFrom: Number.POSITIVE_INFINITY });
  // 2. the next bar's open (where the engine fills) is not known at the decision.
  Object.assign(btc[1]!, { open: NEXT_OPEN, high: Math.max(btc[1]!.high, NEXT_OPEN), low: Math.min(btc[1]!.low, NEXT_OPEN) });
  barPatterns.push({ id: 0, pattern: "next bar's open (the fill price) before the fill", token: String(NEXT_OPEN), visibleFrom: closeOf(1) });
  // 3. a second symbol's future bar (multi-symbol clock).
  Object.assign(eth[10]!, { close: 31337.1337, high: 31337.1337 });
  barPatterns.push({ id: 0, pattern: "another symbol's future bar", token: '31337.1337', visibleFrom: Number.POSITIVE_INFINITY });
  // 4. a symbol that only starts trading later (listing/survivorship): its name must not appear before its first bar.
  for (let i = 7; i < BARS; i++) bars.push({ symbol: LATE_SYMBOL, time: START + i * DAY, open: 5, high: 6, low: 4, close: 5.5, volume: 1000 });
  barPatterns.push({ id: 0, pattern: 'a symbol listed later (survivorship)', token: LATE_SYMBOL, visibleFrom: closeOf(7) });
  return bars;
}

// ── stores (history released on the simulated clock) ──────────────────────
const history: HistoryItem[] = [
  { kind: 'memory', at: FUTURE, content: `5. future-dated memory: BTC tops at 69k ${plant('future-dated memory', Number.POSITIVE_INFINITY)}`, category: 'observation' },
  { kind: 'fact', at: FUTURE, content: `6. a fact recorded later ${plant('future-dated fact', Number.POSITIVE_INFINITY)}` },
  { kind: 'trade-case', at: FUTURE, openedAt: START + DAY, content: `7. trade case: bought BTC, outcome +40% ${plant('an outcome that closes later (trade case opened in the window)', Number.POSITIVE_INFINITY)}` },
  { kind: 'methodology', at: FUTURE, text: `8. buy every dip in January ${plant('a methodology learned from a later outcome', Number.POSITIVE_INFINITY)}`, asset: 'BTC' },
  { kind: 'preference', at: FUTURE, dimension: 'position_size', text: `9. keep positions small ${plant('a preference stated later', Number.POSITIVE_INFINITY)}` },
  { kind: 'workspace-file', at: FUTURE, name: 'USER.md', content: `# User\n10. edited later ${plant('a workspace file edited later', Number.POSITIVE_INFINITY)}\n` },
  { kind: 'daily-log', at: FUTURE, summary: `11. daily log of a later day ${plant('a daily log written later', Number.POSITIVE_INFINITY)}` },
  { kind: 'alert', at: FUTURE, asset: 'BTC', condition: 'above', threshold: 123456, note: `12. alert ${plant('a price alert set later', Number.POSITIVE_INFINITY)}` },
  // Positive controls: released mid-window, they must reach the model after MID and never before.
  { kind: 'memory', at: MID, content: `13. control memory ${plant('control: memory released mid-window', MID, true)}`, category: 'observation' },
  { kind: 'methodology', at: MID, text: `14. control methodology ${plant('control: methodology released mid-window', MID, true)}`, asset: 'BTC' },
  { kind: 'workspace-file', at: MID, name: 'USER.md', content: `# User\n15. control file ${plant('control: workspace file released mid-window', MID, true)}\n` },
  { kind: 'alert', at: MID, asset: 'BTC', condition: 'below', threshold: 1, note: `16. control alert ${plant('control: price alert set mid-window', MID, true)}` },
];

// ── live-world tools (must be disabled: fail closed) ──────────────────────
const hostTool = (name: string, toolSet: string, token: string) =>
  defineTool({ name, toolSet, description: `${name} (host tool)`, inputSchema: z.object({ q: z.string().nullish() }), permissionTier: PermissionTier.READ_ONLY, execute: async () => ({ text: token }) });
const hostTools = [
  hostTool('news_search', 'web', plant('an undated search result (web search without date filter)', Number.POSITIVE_INFINITY)),
  hostTool('mcp__feeds__headlines', 'mcp:feeds', plant('an MCP tool answering from the live world', Number.POSITIVE_INFINITY)),
  hostTool('run_code', 'code', plant('run_code fetching live data', Number.POSITIVE_INFINITY)),
  hostTool('live_quote', 'read', plant('a live-only market adapter registered as a read tool', Number.POSITIVE_INFINITY)),
];

// ── the live installation next door (caches and env) ───────────────────────
const WALL_DATE = new Date().toISOString().slice(0, 10);
let liveDir = '';
const liveTokens = { memory: '', workspace: '', env: '' };

beforeAll(async () => {
  liveDir = mkdtempSync(path.join(tmpdir(), 'canary-live-'));
  liveTokens.memory = plant("the live app's memory database (a cached snapshot of today's memory)", Number.POSITIVE_INFINITY);
  liveTokens.workspace = plant("the live workspace's USER.md (today's file)", Number.POSITIVE_INFINITY);
  liveTokens.env = plant("the live process's environment (MINARA_DATA_DIR, MINARA_WORKSPACE_DIR pointing at the live installation)", Number.POSITIVE_INFINITY);
  const live = await createApp({ logger: silentLogger, envFileDir: false, env: { MINARA_DATA_DIR: liveDir }, embedder: false });
  await live.memory.write({ category: 'observation', content: `live memory ${liveTokens.memory}` });
  await live.close();
  mkdirSync(path.join(liveDir, 'workspace'), { recursive: true });
  writeFileSync(path.join(liveDir, 'workspace', 'USER.md'), `# User\n${liveTokens.workspace}\n`);
  process.env.MINARA_DATA_DIR = liveDir;
  process.env.MINARA_WORKSPACE_DIR = path.join(liveDir, 'workspace');
  process.env.CANARY_ENV_NOTE = liveTokens.env;
});
afterAll(() => {
  delete process.env.MINARA_DATA_DIR;
  delete process.env.MINARA_WORKSPACE_DIR;
  delete process.env.CANARY_ENV_NOTE;
});

const reads: ScriptedStep = {
  toolCalls: [
    { toolName: 'get_price', input: { symbol: 'BTC' } },
    { toolName: 'get_ohlcv', input: { symbol: 'BTC', limit: 500 } },
    { toolName: 'get_ohlcv', input: { symbol: 'ETH', limit: 500 } },
    { toolName: 'search_tokens', input: { query: 'C' } },
    { toolName: 'get_portfolio', input: {} },
    { toolName: 'memory_search', input: { query: 'CANARY' } },
    { toolName: 'memory_read', input: { limit: 50 } },
    { toolName: 'alert_request', input: { op: 'list' } },
    { toolName: 'news_search', input: { q: 'BTC' } },
    { toolName: 'mcp__feeds__headlines', input: {} },
    { toolName: 'run_code', input: { q: 'fetch' } },
    { toolName: 'live_quote', input: {} },
  ],
};

const decisionTime = (call: ScriptedCall): number => {
  const text = JSON.stringify(call.prompt);
  const m = [...text.matchAll(/Today is (\d{4}-\d\d-\d\d \d\d:\d\d) UTC/g)].at(-1);
  if (!m) throw new Error(`model call #${call.index} carries no simulated date`);
  return Date.parse(`${m[1]!.replace(' ', 'T')}:00Z`);
};

describe('canary suite: no sentinel reaches a model request before its time', () => {
  let strategy: AgentStrategy;
  const model = createScriptedModel([], { modelId: 'claude-sonnet-4-5' });
  // decision 1: reads, a buy (approved), a closing word after the approval; decisions 2-4: reads, a word.
  model.push(reads, { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 1000, confirm: true, intent: 'buy BTC 1000 USD' } }] }, { text: 'Placed.' });
  for (let i = 0; i < 3; i++) model.push(reads, { text: 'Holding.' });

  beforeAll(async () => {
    const bars = buildBars();
    canaries.push(...barPatterns);
    canaries.push({ id: 0, pattern: "the wall-clock date (today's real date in a prompt)", token: WALL_DATE, visibleFrom: Number.POSITIVE_INFINITY });
    strategy = createAgentStrategy({ model, prompt: 'Review the market and decide.', schedule: { kind: 'every-n-bars', n: 3 }, history, tools: hostTools, limits: { maxTradeUsd: 5000 } });
    await driveStrategy(strategy, bars);
  });

  it('has at least 20 leak patterns, each with its own sentinel', () => {
    const leaks = canaries.filter((c) => !c.control);
    expect(leaks.length).toBeGreaterThanOrEqual(20);
    expect(new Set(canaries.map((c) => c.token)).size).toBe(canaries.length);
  });

  it('ran every decision through the model with the probes', () => {
    model.assertConsumed();
    expect(strategy.decisions).toHaveLength(4);
    expect(model.calls.length).toBe(3 + 3 * 2);
  });

  it('no model request carries a sentinel before its time', () => {
    const leaks: string[] = [];
    for (const call of model.calls) {
      const t = decisionTime(call);
      const text = JSON.stringify([call.prompt, call.tools]);
      for (const c of canaries) if (t < c.visibleFrom && text.includes(c.token)) leaks.push(`call #${call.index} at ${new Date(t).toISOString()}: ${c.pattern} (${c.token})`);
    }
    expect(leaks).toEqual([]);
  });

  it('positive controls reach the model once their time comes (the probes would see a leak)', () => {
    const seen = (token: string) => model.calls.some((call) => decisionTime(call) >= MID && JSON.stringify(call.prompt).includes(token));
    for (const c of canaries.filter((x) => x.control)) expect(seen(c.token), c.pattern).toBe(true);
    // And the bar probes see bars once they closed: the next-open sentinel appears after bar 1 closed.
    expect(model.calls.some((call) => JSON.stringify(call.prompt).includes(String(NEXT_OPEN)))).toBe(true);
    expect(model.calls.some((call) => JSON.stringify(call.prompt).includes(LATE_SYMBOL) && decisionTime(call) >= closeOf(7))).toBe(true);
  });

  it('the live-world tools were refused with their reason, never run', () => {
    for (const d of strategy.decisions) {
      for (const name of ['news_search', 'mcp__feeds__headlines', 'run_code', 'live_quote']) {
        expect(d.gate.find((g) => g.tool === name)).toMatchObject({ decision: 'blocked', rule: 'point-in-time' });
      }
    }
    const off = new Map(strategy.disabled.map((x) => [x.name, x.reason]));
    expect(off.get('news_search')).toBeDefined();
    expect(off.get('mcp__feeds__headlines')).toBeDefined();
    expect(off.get('run_code')).toBeDefined();
    expect(off.get('live_quote')).toMatch(/pointInTimeTools/);
  });
});
