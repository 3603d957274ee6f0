import { randomBytes } from 'node:crypto';
import { accessSync, constants as fsConstants, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createApp } from '../../app/create-app';
import type { CreateAppOptions, MinaraApp } from '../../app/types';
import { MinaraError } from '../../errors/minara-error';
import type { FinanceLimits } from '../../finance/limits';
import type { ModelPrice } from '../../llm/pricing';
import type { AgentEvent, PendingApproval } from '../../runtime/events';
import type { Skill, SkillDefinition } from '../../skills/types';
import type { ToolEntry } from '../../tools/types';
import { createInMemoryStorage } from '../../storage/in-memory/index';
import { APPROVAL_KEY_BYTES } from '../../safety/approval-key';
import { silentLogger } from '../../util/logger';
import { createWorkspace } from '../../workspace/workspace';
import { type BacktestClock, type BacktestTradingProvider, createBacktestMarket, createBacktestTradingProvider, listedSymbols } from '../market';
import type { OrderIntent, PointInTimeView, Strategy, StrategyContext, StrategyReport } from '../types';
import { clockOfSource } from './adapters';
import { createFillCapture, type FillCapture } from './fill-capture';
import { createPromptLog, type PromptLog } from './prompt-log';
import { createCostLedger, type CostLedger } from './costs';
import { orderOf, ruleOf, summarizeEvents, wouldHavePnl, type AgentDecision, type BlockedAgentOrder } from './decision-log';
import { scheduleHistory, type HistoryItem, type HistoryReleaser } from './history';
import { compileSchedule, type AgentSchedule } from './schedule';
import { BACKTEST_TOOL_SETS, disabledTools, pointInTimeHook, type DisabledTool } from './tool-policy';

/**
 * How the simulated person answers approval requests during a run (stated in run_config.json, never silent):
 * `approve-within-limits` approves an order up to `maxOrderUsd` (default: the run's `maxTradeUsd`, else any size
 * the gate let through) and denies the rest; `deny` denies every one. Each decision is in decisions.jsonl.
 */
export type ApprovalPolicy = { readonly mode: 'approve-within-limits'; readonly maxOrderUsd?: number | undefined } | { readonly mode: 'deny' };

/** Options of {@link createAgentStrategy}. */
export interface AgentStrategyOptions {
  /** The model (any AI SDK v4 language model: a provider's, a cassette, the scripted model). */
  readonly model: LanguageModelV4;
  /** What the user asks at every decision (the simulated date and any schedule instruction are put before it). */
  readonly prompt: string;
  /** @default { kind: 'every-bar' } */
  readonly schedule?: AgentSchedule | undefined;
  /** @default { mode: 'approve-within-limits' } */
  readonly approvals?: ApprovalPolicy | undefined;
  /** The finance pack's limits, enforced by the live gate on every order the agent places. */
  readonly limits?: Partial<FinanceLimits> | undefined;
  /** Memory, learning, workspace and alerts as they came to exist, released as the clock reaches each (point in time). */
  readonly history?: readonly HistoryItem[] | undefined;
  /** The learning loop (capture, methodologies, preferences in the prompt). @default true */
  readonly learning?: boolean | undefined;
  /** Prices over `DEFAULT_MODEL_PRICES` for llm_costs.csv. */
  readonly prices?: Readonly<Record<string, ModelPrice>> | undefined;
  /** Stop deciding once the model cost reaches this many USD (the run finishes with the decisions made; the report says when). */
  readonly budgetUsd?: number | undefined;
  /** Extra tools the host states answer from the simulated clock (every other unknown tool is disabled for the run). */
  readonly pointInTimeTools?: readonly string[] | undefined;
  /** Host tools for the agent; each is disabled for the run unless named in `pointInTimeTools`. */
  readonly tools?: readonly ToolEntry[] | undefined;
  /** Extra skills for the agent. */
  readonly skills?: ReadonlyArray<Skill | SkillDefinition> | undefined;
  /**
   * The markdown workspace (identity files, daily log, heartbeat) in a temporary directory, as live. `false` runs
   * without one (faster; `workspace-file` and `daily-log` history items are then refused). @default true
   */
  readonly workspace?: boolean | undefined;
  /** @default 'backtest' */
  readonly userId?: string | undefined;
  /** Model steps per decision. @default 8 */
  readonly maxSteps?: number | undefined;
  /** Called after each decision. */
  readonly onDecision?: ((decision: AgentDecision) => void) | undefined;
}

/** The agent as a backtest strategy, with what it recorded. */
export interface AgentStrategy extends Strategy {
  readonly decisions: readonly AgentDecision[];
  readonly blocked: readonly BlockedAgentOrder[];
  readonly costs: CostLedger;
  /** Tools and features off for the run, with reasons (filled once the app is built, at the first decision). */
  readonly disabled: readonly DisabledTool[];
  /** Why decisions stopped early, if they did: `budget` spent, or `budget-unpriced` (a budget on a model with no price). */
  readonly stopped: { readonly reason: 'budget' | 'budget-unpriced'; readonly at: string } | undefined;
}

interface RunState {
  app: MinaraApp | undefined;
  dataDir: string | undefined;
  clock: number;
  view: PointInTimeView | undefined;
  lastView: PointInTimeView | undefined;
  previousNow: number | undefined;
  /** The engine's point-in-time view as the adapters read it (open only during a decision). */
  viewClock: BacktestClock;
  trading: BacktestTradingProvider;
  /** The agent's queued orders until the engine fills them (the learning loop records the fills). */
  fills: FillCapture;
  /** The model the runtime calls, noting the system prompt each decision was given. */
  prompts: PromptLog;
  history: HistoryReleaser | undefined;
  disabled: DisabledTool[];
  stopped: { reason: 'budget' | 'budget-unpriced'; at: string } | undefined;
  ctx: StrategyContext | undefined;
}

const iso = (ms: number) => new Date(ms).toISOString();
const MAX_APPROVAL_ROUNDS = 4;

function checkOptions(o: AgentStrategyOptions): void {
  if (!o || typeof o.model !== 'object' || o.model === null || o.model.specificationVersion !== 'v4') throw new MinaraError('INVALID_ARGUMENT', 'createAgentStrategy: model must be an AI SDK v4 language model object (a provider model, createCassetteModel or createScriptedModel)');
  if (typeof o.prompt !== 'string' || o.prompt.trim() === '') throw new MinaraError('INVALID_ARGUMENT', 'createAgentStrategy: prompt must be a non-empty string (what the user asks at every decision)');
  if (o.budgetUsd !== undefined && !(o.budgetUsd > 0)) throw new MinaraError('INVALID_ARGUMENT', `createAgentStrategy: budgetUsd must be a positive number of USD, got ${String(o.budgetUsd)}`);
  if (o.workspace === false) {
    const i = (o.history ?? []).findIndex((h) => h.kind === 'workspace-file' || h.kind === 'daily-log');
    if (i >= 0) throw new MinaraError('INVALID_ARGUMENT', `createAgentStrategy: history[${i}] is a ${o.history![i]!.kind}, which needs the workspace (workspace: false was given)`);
  }
  const mode = o.approvals?.mode ?? 'approve-within-limits';
  if (mode !== 'approve-within-limits' && mode !== 'deny') throw new MinaraError('INVALID_ARGUMENT', `createAgentStrategy: approvals.mode must be 'approve-within-limits' or 'deny', got ${String(mode)}`);
}

/**
 * Where the run's temporary data directory goes: the memory file system (`/dev/shm`, Linux) when it is a writable
 * directory, else the OS temp directory. The workspace rewrites HEARTBEAT.md at every decision, and on a disk file
 * system replacing a file waits for its data to be written out (ext4 flushes on rename and truncate even without
 * fsync): about 3 ms a decision on this machine's disk, a tenth of that in memory. The directory is removed when the
 * run ends either way.
 */
function scratchRoot(): string {
  const shm = '/dev/shm';
  try {
    accessSync(shm, fsConstants.W_OK | fsConstants.X_OK);
    if (statSync(shm).isDirectory()) return shm;
  } catch {
    // Not there (macOS, Windows) or not writable: the OS temp directory.
  }
  return tmpdir();
}

/** Build the run's app: fresh in-memory stores, the simulated clock, the backtest market and trading, no live-world tools. */
async function buildApp(o: AgentStrategyOptions, state: RunState, extra: ReadonlySet<string>): Promise<MinaraApp> {
  state.dataDir = mkdtempSync(join(scratchRoot(), 'minara-agent-bt-'));
  const now = () => new Date(state.clock);
  // The run's own scratch workspace, where createApp would seed it: exclusive (only this run writes it and it is
  // deleted at the end), so prompts read its files from memory between the run's own writes, and nothing is fsynced.
  const workspace = o.workspace === false ? false : createWorkspace({ dir: join(state.dataDir, 'workspace'), now, logger: silentLogger, exclusive: true });
  if (workspace) {
    await workspace.seed();
    // A brand-new workspace gets the first-run onboarding (BOOTSTRAP.md: "ask the operator their name…"): a
    // backtest has no operator to onboard, so it is archived before the first decision, as onboarding would.
    await workspace.completeBootstrap();
  }
  const options: CreateAppOptions = {
    env: { MINARA_DATA_DIR: state.dataDir, MINARA_BREAKERS: 'off' },
    envFileDir: false,
    // The run's own approval key, in memory: the default would write `<dataDir>.approval-key` beside the data
    // directory, outside what the run removes when it ends.
    approvalKey: randomBytes(APPROVAL_KEY_BYTES),
    storage: createInMemoryStorage(),
    model: state.prompts.model,
    now,
    logger: silentLogger,
    userId: o.userId ?? 'backtest',
    finance: { market: createBacktestMarket(state.viewClock), provider: state.trading, ...(o.limits ? { limits: o.limits } : {}), autopilot: false },
    research: false,
    web: false,
    browser: false,
    mcp: false,
    artifacts: false,
    backtest: false,
    files: false,
    embedder: false,
    memoryExtraction: 'off',
    breakers: false,
    hooks: [pointInTimeHook(extra)],
    ...(o.skills ? { skills: o.skills } : {}),
    ...(o.tools ? { tools: o.tools } : {}),
    ...(o.learning === false ? { learning: false } : {}),
    workspace,
    ...(o.prices ? { prices: o.prices } : {}),
    runtime: { maxSteps: o.maxSteps ?? 8 },
  };
  const app = await createApp(options);
  state.disabled = disabledTools(app.tools, extra);
  state.history = scheduleHistory(app, o.history ?? [], options.userId!);
  return app;
}

async function collect(run: AsyncIterable<AgentEvent>): Promise<AgentEvent[]> {
  const out: AgentEvent[] = [];
  for await (const e of run) out.push(e);
  return out;
}

/** Close the run's app and remove its temporary data directory (idempotent). */
async function release(state: RunState): Promise<void> {
  const app = state.app;
  state.app = undefined;
  await app?.close();
  if (state.dataDir) rmSync(state.dataDir, { recursive: true, force: true });
  state.dataDir = undefined;
}

/** The simulated person's answer to one approval request. */
function approve(o: AgentStrategyOptions, p: PendingApproval, view: PointInTimeView): { approved: boolean; reason: string } {
  const policy = o.approvals ?? { mode: 'approve-within-limits' as const };
  if (policy.mode === 'deny') return { approved: false, reason: 'backtest approval policy: deny' };
  const cap = policy.maxOrderUsd ?? o.limits?.maxTradeUsd ?? Number.POSITIVE_INFINITY;
  const size = orderOf(p.toolName, p.input, view)?.notionalUsd ?? Number.NaN;
  if (Number.isFinite(size) && size <= cap) return { approved: true, reason: Number.isFinite(cap) ? `backtest approval policy: within ${cap} USD` : 'backtest approval policy: approve what the limits allow' };
  return { approved: false, reason: Number.isFinite(size) ? `backtest approval policy: ${size.toFixed(2)} USD is above ${cap} USD` : 'backtest approval policy: the order size could not be read' };
}

/** The decision message: the simulated date first, then the schedule's instructions, then the user's prompt. */
function messageFor(o: AgentStrategyOptions, view: PointInTimeView, n: number, instructions: readonly string[]): string {
  const when = iso(view.now).replace('T', ' ').slice(0, 16);
  const lines = [`[Backtest decision ${n}] Today is ${when} UTC. Symbols: ${listedSymbols(view).join(', ')}.`, ...instructions.map((i) => `Scheduled: ${i}`), o.prompt];
  return lines.join('\n');
}

/** The agent's sections of the run folder: llm_costs.csv, decisions.jsonl, agent_blocked_orders.csv, config and metrics. */
function agentReport(r: { readonly options: AgentStrategyOptions; readonly decisions: readonly AgentDecision[]; readonly blocked: BlockedAgentOrder[]; readonly costs: CostLedger; readonly state: RunState; readonly extra: ReadonlySet<string> }): StrategyReport {
  const { options, decisions, blocked, costs, state, extra } = r;
  for (const b of blocked) if (b.wouldHavePnlUsd === null) b.wouldHavePnlUsd = wouldHavePnl(b, state.lastView);
  const byRule: Record<string, number> = {};
  const pnlByRule: Record<string, number> = {};
  for (const b of blocked) {
    byRule[b.rule] = (byRule[b.rule] ?? 0) + 1;
    pnlByRule[b.rule] = Math.round(((pnlByRule[b.rule] ?? 0) + (b.wouldHavePnlUsd ?? 0)) * 1e6) / 1e6;
  }
  const metrics: Record<string, number | string | null> = {
    decisions: decisions.length,
    llmCostUsd: costs.unpriced > 0 ? 'unpriced' : costs.totalUsd,
    llmCostPricedUsd: costs.totalUsd,
    unpricedDecisions: costs.unpriced,
    agentBlockedOrders: blocked.length,
    stoppedEarly: state.stopped ? `${state.stopped.reason} at ${state.stopped.at}` : null,
  };
  for (const [rule, count] of Object.entries(byRule)) {
    metrics[`agentBlocked.${rule}`] = count;
    metrics[`agentBlockedWouldHavePnlUsd.${rule}`] = pnlByRule[rule] ?? 0;
  }
  const blockedCsv = ['decision,time,tool,symbol,side,notional_usd,rule,would_have_pnl_usd,detail', ...blocked.map((b) => [b.decision, b.time, b.toolName, b.symbol, b.side, Number.isFinite(b.notionalUsd) ? b.notionalUsd.toFixed(2) : '', b.rule, b.wouldHavePnlUsd ?? '', JSON.stringify(b.detail)].join(','))].join('\n');
  return {
    extraFiles: {
      'llm_costs.csv': costs.toCsv(),
      'decisions.jsonl': decisions.map((d) => JSON.stringify(d)).join('\n') + (decisions.length > 0 ? '\n' : ''),
      'agent_blocked_orders.csv': `${blockedCsv}\n`,
      'system_prompts.jsonl': state.prompts.file(),
    },
    config: {
      agent: {
        model: `${options.model.provider}:${options.model.modelId}`,
        prompt: options.prompt,
        schedule: options.schedule ?? { kind: 'every-bar' },
        approvals: options.approvals ?? { mode: 'approve-within-limits' },
        learning: options.learning !== false,
        budgetUsd: options.budgetUsd ?? null,
        historyItems: options.history?.length ?? 0,
        pointInTimeTools: [...extra],
        disabledTools: state.disabled,
        stopped: state.stopped ?? null,
      },
    },
    metrics,
  };
}

/**
 * The agent as a backtest strategy: at each scheduled bar it runs one turn of the real runtime (`createApp` with
 * the finance pack on the backtest's point-in-time market and trading adapters, the same tools, skills, memory and
 * learning loop as live) with the simulated date in the message; the spot orders the agent places become
 * {@link OrderIntent}s the engine fills at the next bar. Approvals follow the stated {@link ApprovalPolicy}; every
 * blocked or denied order is recorded with its rule and the P&L it would have made. Tools that cannot answer from
 * the simulated clock are disabled for the run (see `disabled`), and history is released only as the clock reaches it.
 *
 * @example
 * ```ts
 * const strategy = createAgentStrategy({ model, prompt: 'Decide whether to buy or sell BTC today.', schedule: { kind: 'every-n-bars', n: 5 } });
 * const result = await runBacktest({ bars, strategy });
 * ```
 */
export function createAgentStrategy(options: AgentStrategyOptions): AgentStrategy {
  checkOptions(options);
  const schedule = compileSchedule(options.schedule ?? { kind: 'every-bar' });
  const extra = new Set(options.pointInTimeTools ?? []);
  const costs = createCostLedger(options.prices);
  const decisions: AgentDecision[] = [];
  const blocked: BlockedAgentOrder[] = [];
  const viewClock = clockOfSource(() => state.view);
  const state: RunState = { app: undefined, dataDir: undefined, clock: 0, view: undefined, lastView: undefined, previousNow: undefined, viewClock, trading: createBacktestTradingProvider(viewClock), fills: createFillCapture(), prompts: createPromptLog(options.model), history: undefined, disabled: [], stopped: undefined, ctx: undefined };
  const userId = options.userId ?? 'backtest';

  const runDecision = async (view: PointInTimeView, instructions: readonly string[]): Promise<OrderIntent[]> => {
    state.clock = view.now;
    state.view = view;
    state.lastView = view;
    const app = (state.app ??= await buildApp(options, state, extra));
    // The engine's fills since the last decision reach the learning loop first, each stamped at its fill time.
    await state.fills.flush(async ({ record, at }) => {
      state.clock = at;
      await app.learningFor(userId)?.captureTurn(record);
    });
    state.clock = view.now;
    await state.history!.releaseUpTo(view.now);
    const n = decisions.length + 1;
    const message = messageFor(options, view, n, instructions);
    const sessionId = `backtest-${n}`;
    // Nobody watches a backtest's text arrive: the model's non-streaming call (a fraction of the CPU per step).
    const base = { sessionId, userId, allowedToolSets: BACKTEST_TOOL_SETS, surface: 'backtest', modelCall: 'generate' } as const;
    const events = await collect(app.runtime.run({ ...base, message }));
    const gate: Array<AgentDecision['gate'][number]> = [];
    for (let round = 0; round < MAX_APPROVAL_ROUNDS; round++) {
      const end = events.findLast((e) => e.type === 'turn-end');
      if (!end || end.type !== 'turn-end' || end.stopReason !== 'approval-required' || end.pendingApprovals.length === 0) break;
      const answers = end.pendingApprovals.map((p) => ({ p, ...approve(options, p, view) }));
      for (const a of answers) {
        gate.push({ tool: a.p.toolName, decision: a.approved ? 'approved' : 'denied', rule: a.approved ? 'approval' : 'approval-denied', reason: a.reason });
        const order = orderOf(a.p.toolName, a.p.input, view);
        if (!a.approved && order) blocked.push({ decision: n, time: iso(view.now), toolName: a.p.toolName, ...order, rule: 'approval-denied', detail: a.reason, wouldHavePnlUsd: null });
      }
      events.push(...(await collect(app.runtime.run({ ...base, approvals: answers.map((a) => ({ approvalId: a.p.approvalId, approved: a.approved, reason: a.reason })) }))));
    }
    // A model that cannot answer (a cassette miss above all) fails the run: never a silent empty decision.
    const failed = events.find((e) => e.type === 'error');
    if (failed && failed.type === 'error' && (failed.code === 'CASSETTE_MISS' || /cassette miss/.test(failed.message))) {
      throw new MinaraError('CASSETTE_MISS', `decision ${n} at ${iso(view.now)}: ${failed.message}`);
    }
    const summary = summarizeEvents(events);
    for (const b of summary.blocked) {
      const rule = ruleOf(b.code, b.reason);
      gate.push({ tool: b.toolName, decision: 'blocked', rule, reason: b.reason });
      const order = orderOf(b.toolName, b.input, view);
      if (order) blocked.push({ decision: n, time: iso(view.now), toolName: b.toolName, ...order, rule, detail: b.reason, wouldHavePnlUsd: null });
    }
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
    let modelId = `${options.model.provider}:${options.model.modelId}`;
    let stopReason = 'finished';
    for (const e of events) {
      if (e.type !== 'turn-end') continue;
      usage.inputTokens += e.usage.inputTokens;
      usage.outputTokens += e.usage.outputTokens;
      usage.cacheReadTokens += e.usage.cacheReadTokens;
      usage.cacheWriteTokens += e.usage.cacheWriteTokens;
      if (e.modelId) modelId = e.modelId;
      stopReason = e.stopReason;
    }
    const cost = costs.add({ decision: n, time: iso(view.now), modelId, ...usage });
    state.fills.hold(events);
    const intents = state.trading.drain();
    const context = state.prompts.take();
    const decision: AgentDecision = { decision: n, index: view.index, time: iso(view.now), message, ...(context ? { context } : {}), saw: summary.saw, said: summary.said, did: summary.did, gate, intents, stopReason, costUsd: cost.costUsd };
    decisions.push(decision);
    options.onDecision?.(decision);
    state.view = undefined;
    if (options.budgetUsd !== undefined && costs.totalUsd >= options.budgetUsd) state.stopped = { reason: 'budget', at: iso(view.now) };
    // A budget cannot be kept on a model with no price: stop rather than spend blind (fail closed).
    if (options.budgetUsd !== undefined && cost.costUsd === 'unpriced') state.stopped = { reason: 'budget-unpriced', at: iso(view.now) };
    return intents;
  };

  const report = (): StrategyReport => agentReport({ options, decisions, blocked, costs, state, extra });

  return {
    name: 'agent',
    params: { model: `${options.model.provider}:${options.model.modelId}`, schedule: options.schedule ?? { kind: 'every-bar' }, approvals: options.approvals ?? { mode: 'approve-within-limits' }, learning: options.learning !== false },
    init(ctx) {
      state.ctx = ctx;
    },
    decide(view) {
      if (state.stopped) return [];
      const check = schedule(view.index, view.now, state.previousNow);
      state.previousNow = view.now;
      if (!check.due) return [];
      // A failed decision (a cassette miss) ends the run: release the app and its temporary directory first.
      return runDecision(view, check.instructions).catch(async (error: unknown) => {
        await release(state);
        throw error;
      });
    },
    onFill: (fill, intent) => state.fills.filled(fill, intent),
    finish: () => release(state),
    report,
    get decisions() {
      return decisions;
    },
    get blocked() {
      return blocked;
    },
    costs,
    get disabled() {
      return state.disabled;
    },
    get stopped() {
      return state.stopped;
    },
  };
}
