import type { EmergencyStopApi, ToolExecutionContext } from '../tools/types';
import { canonicalJson, sha256Hex } from '../util/canonical-json';
import type { FinanceLimits } from './limits';
import type { MarketDataProvider, TradingProvider } from './types';

/** What the pack's tools and hooks share. */
export interface FinanceDeps {
  readonly market: MarketDataProvider;
  readonly trading: TradingProvider;
  /** Configured limits (static; `tierFor` reads these). */
  readonly configLimits: FinanceLimits;
  /** Limits in force now: config tightened by the stored preference. */
  readonly limits: () => Promise<FinanceLimits>;
  /** The emergency-stop handle (the registry's once attached). */
  readonly emergencyStop: () => EmergencyStopApi;
  /** Stablecoin symbols priced at 1 USD. */
  readonly isStable: (symbol: string) => boolean;
  /** Require a stated intent on fund-moving calls in execute mode. */
  readonly requireIntent: boolean;
  readonly now: () => Date;
}

/**
 * The client order id (idempotency key) of one execution: a digest of the session, the tool call id, the
 * tool and the exact arguments. A replayed call (same session, call and input) never fills twice, while
 * call ids that repeat across sessions or providers (`call_1`) can never collide with another order.
 */
export function clientOrderId(toolName: string, ctx: Pick<ToolExecutionContext, 'call' | 'toolCallId'>, input: unknown): string {
  const digest = sha256Hex(canonicalJson({ v: 2, session: ctx.call.sessionId, call: ctx.toolCallId, tool: toolName, input: input ?? null }));
  return `co_${toolName}_${digest.slice(0, 32)}`;
}

/** Round for display (USD to cents, units to 8 significant digits). */
export function usd(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Units to 8 significant digits. */
export function units(n: number): number {
  return Number(n.toPrecision(8));
}
