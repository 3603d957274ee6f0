/**
 * Post-turn records and paper fills for learning tests: each call takes the next number of one module-wide
 * sequence, so ids (session, turn, order) never repeat within a test file and fill times increase a minute apiece.
 */
import type { PostTurnRecord, TurnExecution } from '@minara/agent';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
let seq = 0;

/** A finished user turn of `u1` carrying these executions (override any field with `over`). */
export function turnRecord(executions: TurnExecution[], over: Partial<PostTurnRecord> = {}): PostTurnRecord {
  const i = ++seq;
  return {
    sessionId: `s${i}`, turnId: `t${i}`, traceId: `tr${i}`, source: 'user', userId: 'u1', text: 'ok', stopReason: 'finished', steps: 1,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, toolCalls: [], pendingApprovals: [], turnCount: i, activeSkills: [],
    methodologyIds: [], preferenceIds: [], executions, ...over,
  };
}

/** A filled paper spot order of one unit of `asset` at `price`, realising `pnl`. */
export function paperFill(asset: string, side: 'buy' | 'sell', price: number, pnl: number): TurnExecution {
  const i = ++seq;
  return {
    toolCallId: `c${i}`, toolName: side === 'buy' ? 'buy_token' : 'sell_token', input: { symbol: asset, amountUsd: price },
    orderFacts: { notionalUsd: price, asset, side, quantity: 1 }, orderId: `o${i}`, status: 'filled',
    fill: { symbol: asset, side, quantity: 1, price, notionalUsd: price, feeUsd: 0, realizedPnlUsd: pnl }, provider: 'paper', simulated: true,
    at: new Date(T0 + i * 60_000).toISOString(), role: 'minara.core',
  };
}
