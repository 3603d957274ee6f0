import type { ExecutedCall } from '../tools/context';
import type { TurnExecution, TurnExecutionFill } from './types';

const num = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** The fill facts of an order result (`{ orderId, status, fill: { … }, source, simulated, at }`), when it has them. */
function fillOf(data: Record<string, unknown>): TurnExecutionFill | undefined {
  const f = data.fill as Record<string, unknown> | undefined;
  if (typeof f !== 'object' || f === null) return undefined;
  if (typeof f.symbol !== 'string' || typeof f.side !== 'string' || !num(f.quantity) || !num(f.price)) return undefined;
  return {
    symbol: f.symbol, side: f.side, quantity: f.quantity, price: f.price, notionalUsd: num(f.notionalUsd) ? f.notionalUsd : f.quantity * f.price,
    feeUsd: num(f.feeUsd) ? f.feeUsd : 0, realizedPnlUsd: num(f.realizedPnlUsd) ? f.realizedPnlUsd : 0,
  };
}

/**
 * The post-turn view of an executed fund-moving call: its order facts, the provider's order id and fill when
 * the result carries them, and the role that proposed it.
 */
export function toTurnExecution(call: ExecutedCall, role: string): TurnExecution {
  const data = typeof call.data === 'object' && call.data !== null ? (call.data as Record<string, unknown>) : {};
  const fill = fillOf(data);
  return {
    toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, orderFacts: call.orderFacts,
    ...(typeof data.orderId === 'string' ? { orderId: data.orderId } : {}),
    ...(typeof data.status === 'string' ? { status: data.status } : {}),
    ...(fill ? { fill } : {}),
    ...(typeof data.source === 'string' ? { provider: data.source } : {}),
    ...(typeof data.simulated === 'boolean' ? { simulated: data.simulated } : {}),
    at: typeof data.at === 'string' && !Number.isNaN(Date.parse(data.at)) ? data.at : call.at,
    role,
  };
}
