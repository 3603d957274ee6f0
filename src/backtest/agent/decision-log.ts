import type { AgentEvent } from '../../runtime/events';
import type { OrderIntent, PointInTimeView } from '../types';
import type { DecisionContext } from './prompt-log';

/** An order the gate blocked or the simulated approver denied, with what it would have made. */
export interface BlockedAgentOrder {
  readonly decision: number;
  /** Simulated time of the decision, ISO. */
  readonly time: string;
  readonly toolName: string;
  readonly symbol: string;
  readonly side: 'buy' | 'sell';
  readonly notionalUsd: number;
  /** The rule: a finance limit (`maxTradeUsd`, `maxTotalExposureUsd`, …), `approval-denied`, or the block's code. */
  readonly rule: string;
  readonly detail: string;
  /**
   * P&L the order would have made: filled at the open of the bar after the decision, no fees, marked at the run's
   * last close (computed for the report, after the run; USD; null when no later bar existed).
   */
  wouldHavePnlUsd: number | null;
}

/** What the agent saw, said and did at one decision, and what the gate decided. */
export interface AgentDecision {
  readonly decision: number;
  readonly index: number;
  /** Simulated time, ISO. */
  readonly time: string;
  /** The message the agent was given (with the simulated date). */
  readonly message: string;
  /** The system prompt the model was given at this decision (its text is in system_prompts.jsonl under `sha256`). */
  readonly context?: DecisionContext | undefined;
  /** Tool results the agent saw (the tool's name — the inner tool's for a call through tool_invoke —, ok, data or error), in order. */
  readonly saw: ReadonlyArray<{ readonly tool: string; readonly ok: boolean; readonly output: unknown }>;
  /** The agent's final text. */
  readonly said: string;
  /** Tool calls the agent made. */
  readonly did: ReadonlyArray<{ readonly tool: string; readonly input: unknown }>;
  /** The gate's and the approver's decisions. */
  readonly gate: ReadonlyArray<{ readonly tool: string; readonly decision: 'blocked' | 'approved' | 'denied'; readonly rule: string; readonly reason: string }>;
  /** Orders handed to the engine (filled at the next bar). */
  readonly intents: readonly OrderIntent[];
  readonly stopReason: string;
  readonly costUsd: number | 'unpriced';
}

const RULES: ReadonlyArray<readonly [RegExp, string]> = [
  [/per-trade limit/i, 'maxTradeUsd'],
  [/total exposure/i, 'maxTotalExposureUsd'],
  [/concentration limit/i, 'maxAssetConcentrationPct'],
  [/daily limit/i, 'maxDailyLossUsd'],
  [/slippage/i, 'maxSlippageBps'],
  [/leverage/i, 'maxLeverage'],
  [/deny ?list|denied asset|never be traded/i, 'denyList'],
  [/intent/i, 'intent'],
  [/disabled for this backtest/i, 'point-in-time'],
];

/** The rule a block names (a finance limit when its message says which), else its code. */
export function ruleOf(code: string, reason: string): string {
  for (const [re, rule] of RULES) if (re.test(reason)) return rule;
  return code;
}

const FUND_MOVING = new Set(['buy_token', 'sell_token', 'swap_tokens']);

/** Symbol, side and USD size of a spot trade tool's input at the view's prices (undefined for other tools). */
export function orderOf(toolName: string, input: unknown, view: PointInTimeView): { symbol: string; side: 'buy' | 'sell'; notionalUsd: number } | undefined {
  if (!FUND_MOVING.has(toolName) || input === null || typeof input !== 'object') return undefined;
  const i = input as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
  const up = (v: unknown) => (typeof v === 'string' ? v.trim().toUpperCase() : '');
  let symbol: string;
  let side: 'buy' | 'sell';
  if (toolName === 'buy_token') [symbol, side] = [up(i.symbol), 'buy'];
  else if (toolName === 'sell_token') [symbol, side] = [up(i.symbol), 'sell'];
  else if (view.symbols.includes(up(i.to))) [symbol, side] = [up(i.to), 'buy'];
  else [symbol, side] = [up(i.from), 'sell'];
  const price = view.last(symbol)?.close ?? Number.NaN;
  const amount = num(i.amount);
  const fraction = num(i.fraction);
  const notionalUsd =
    num(i.amountUsd) ??
    (amount !== undefined ? (side === 'buy' && toolName === 'swap_tokens' ? amount : amount * price) : fraction !== undefined ? fraction * view.portfolio.position(symbol) * price : Number.NaN);
  return { symbol, side, notionalUsd };
}

/** The P&L a blocked order would have made (see {@link BlockedAgentOrder.wouldHavePnlUsd}). */
export function wouldHavePnl(order: { readonly symbol: string; readonly side: 'buy' | 'sell'; readonly notionalUsd: number; readonly time: string }, view: PointInTimeView | undefined): number | null {
  if (!view || !Number.isFinite(order.notionalUsd)) return null;
  const bars = view.bars(order.symbol);
  const at = Date.parse(order.time);
  const entry = bars.find((b) => b.time >= at);
  const exit = bars[bars.length - 1];
  if (!entry || !exit) return null;
  const qty = order.notionalUsd / entry.open;
  const pnl = (order.side === 'buy' ? 1 : -1) * qty * (exit.close - entry.open);
  return Math.round(pnl * 1e6) / 1e6;
}

/** Collect what a decision's turns saw, said and did from their events. */
export function summarizeEvents(events: readonly AgentEvent[]): { saw: AgentDecision['saw']; did: AgentDecision['did']; said: string; blocked: Array<{ toolName: string; input: unknown; code: string; reason: string }> } {
  const inputs = new Map<string, { toolName: string; input: unknown }>();
  const saw: Array<{ tool: string; ok: boolean; output: unknown }> = [];
  const did: Array<{ tool: string; input: unknown }> = [];
  const blocked: Array<{ toolName: string; input: unknown; code: string; reason: string }> = [];
  let said = '';
  for (const e of events) {
    if (e.type === 'tool-call') {
      // A call through tool_invoke is the inner tool's: record it under that name and its arguments.
      const inner = e.toolName === 'tool_invoke' && e.input !== null && typeof e.input === 'object' ? (e.input as { name?: unknown; args?: unknown }) : undefined;
      inputs.set(e.toolCallId, typeof inner?.name === 'string' ? { toolName: inner.name, input: inner.args } : { toolName: e.toolName, input: e.input });
      did.push({ tool: e.toolName, input: e.input });
    } else if (e.type === 'tool-result') {
      const env = e.output as unknown as { ok: boolean; data?: unknown; error?: unknown; code?: unknown };
      // A result through tool_invoke is the inner tool's answer: name it so (what the model saw, from which tool).
      saw.push({ tool: inputs.get(e.toolCallId)?.toolName ?? e.toolName, ok: env.ok, output: env.ok ? env.data : { error: env.error, code: env.code } });
    } else if (e.type === 'tool-blocked') {
      const call = inputs.get(e.toolCallId);
      blocked.push({ toolName: call?.toolName ?? e.toolName, input: call?.input, code: e.code, reason: e.reason });
    } else if (e.type === 'turn-end') {
      said = e.text;
    }
  }
  return { saw, did, said, blocked };
}
