import { MinaraError } from '../errors/minara-error';
import type { OrderSide, ToolCallContext, ToolEntry, ToolOrderFacts } from './types';

const SIDES: ReadonlySet<string> = new Set<OrderSide>(['buy', 'sell', 'swap', 'long', 'short', 'close', 'transfer', 'withdraw']);

/**
 * Check what a tool's `orderFacts` returned and freeze a clean copy. Anything off (a non-finite or
 * negative notional, an empty asset, an unknown side) is refused: a fund-moving call whose size cannot
 * be stated cannot be judged, so it does not run.
 */
export function normaliseOrderFacts(toolName: string, raw: unknown): ToolOrderFacts {
  const bad = (field: string, expected: string): never => {
    throw new MinaraError('TOOL_BLOCKED', `Tool "${toolName}": orderFacts.${field} ${expected}; the call cannot be checked, so it does not run.`);
  };
  if (raw === null || typeof raw !== 'object') bad('(result)', 'must be an object { notionalUsd, asset, side, destination? }');
  const f = raw as Record<string, unknown>;
  if (typeof f.notionalUsd !== 'number' || !Number.isFinite(f.notionalUsd) || f.notionalUsd < 0) bad('notionalUsd', 'must be a finite number ≥ 0');
  if (typeof f.asset !== 'string' || f.asset.trim() === '') bad('asset', 'must be a non-empty string');
  if (typeof f.side !== 'string' || !SIDES.has(f.side)) bad('side', `must be one of ${[...SIDES].join(', ')}`);
  if (f.destination !== undefined && (typeof f.destination !== 'string' || f.destination.trim() === '')) bad('destination', 'must be a non-empty string when given');
  if (f.quantity !== undefined && (typeof f.quantity !== 'number' || !Number.isFinite(f.quantity) || f.quantity < 0)) bad('quantity', 'must be a finite number ≥ 0 when given');
  return Object.freeze({
    notionalUsd: f.notionalUsd as number,
    asset: (f.asset as string).trim().toUpperCase(),
    side: f.side as OrderSide,
    ...(f.destination !== undefined ? { destination: (f.destination as string).trim() } : {}),
    ...(f.quantity !== undefined ? { quantity: f.quantity as number } : {}),
  });
}

/** The order facts of one fund-moving call, computed once and checked; undefined for other tools. */
export async function computeOrderFacts(tool: ToolEntry, input: unknown, call: ToolCallContext, toolCallId: string): Promise<ToolOrderFacts | undefined> {
  if (!tool.isFundMoving) return undefined;
  if (!tool.orderFacts) {
    throw new MinaraError('TOOL_BLOCKED', `Tool "${tool.name}" moves funds but states no order facts; it does not run.`);
  }
  return normaliseOrderFacts(tool.name, await tool.orderFacts(input, { call, toolCallId }));
}

/**
 * The values a grant's `argLimits` are judged against for a fund-moving call: the raw arguments, overlaid
 * with the normalised facts. `notionalUsd` and its alias `amountUsd` are the order's real notional (never
 * the raw `amountUsd` argument), and `asset`, `side`, `destination` come from the facts too.
 */
export function grantView(input: unknown, facts: ToolOrderFacts | undefined): unknown {
  if (!facts) return input;
  const base = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  return {
    ...base,
    notionalUsd: facts.notionalUsd,
    amountUsd: facts.notionalUsd,
    asset: facts.asset,
    side: facts.side,
    destination: facts.destination,
    ...(facts.quantity !== undefined ? { quantity: facts.quantity } : {}),
  };
}
