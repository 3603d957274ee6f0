/**
 * The agent's trades reach the learning loop at the engine's fills. A backtest order is `queued` when the agent
 * places it (decision capture leaves it out: its fill is not known at the decision); when the engine fills it at the
 * next bar (`Strategy.onFill`), the execution is recorded with that fill — price, quantity, fee and realised P&L —
 * stamped at the fill time, before the next decision. An order the engine rejects is never learned as a trade.
 */
import type { AgentEvent } from '../../runtime/events';
import type { PostTurnRecord, TurnExecution } from '../../runtime/types';
import { orderIdOfIntent } from '../market';
import type { Fill, OrderIntent } from '../types';

/** A filled execution waiting to be recorded, in its turn's record, at the fill time (ms). */
export interface FilledRecord {
  readonly record: PostTurnRecord;
  readonly at: number;
}

/** What {@link createFillCapture} returns. */
export interface FillCapture {
  /** Keep the decision's queued executions (from its turns' `post-turn` records) until the engine fills them. */
  hold(events: readonly AgentEvent[]): void;
  /** The engine filled `intent` (an order the agent placed): its execution becomes a filled record to capture. */
  filled(fill: Fill, intent: OrderIntent): void;
  /** Hand every filled record to `capture`, oldest first, and forget them. */
  flush(capture: (filled: FilledRecord) => Promise<void>): Promise<void>;
}

/** The execution as the engine filled it. */
function withFill(e: TurnExecution, fill: Fill): TurnExecution {
  return {
    ...e, status: 'filled', provider: 'backtest:engine', simulated: true, at: new Date(fill.time).toISOString(),
    fill: { symbol: fill.symbol, side: fill.side, quantity: fill.quantity, price: fill.price, notionalUsd: fill.notionalUsd, feeUsd: fill.feeUsd, realizedPnlUsd: fill.realizedPnlUsd },
  };
}

/** Queued executions by client order id, and the filled ones not yet recorded. */
export function createFillCapture(): FillCapture {
  const queued = new Map<string, { record: PostTurnRecord; execution: TurnExecution }>();
  let ready: FilledRecord[] = [];
  return {
    hold(events) {
      for (const e of events) {
        if (e.type !== 'post-turn') continue;
        for (const x of e.record.executions) if (x.status === 'queued' && x.orderId !== undefined) queued.set(x.orderId, { record: e.record, execution: x });
      }
    },
    filled(fill, intent) {
      const id = orderIdOfIntent(intent);
      const held = id === undefined ? undefined : queued.get(id);
      if (!held || id === undefined) return;
      queued.delete(id);
      ready.push({ record: { ...held.record, executions: [withFill(held.execution, fill)] }, at: fill.time });
    },
    async flush(capture) {
      const batch = ready;
      ready = [];
      for (const f of batch) await capture(f);
    },
  };
}
