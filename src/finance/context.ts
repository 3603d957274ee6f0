import type { EmergencyStopApi } from '../tools/types';
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

/** Client order id derived from the tool call id: a replayed call never fills twice. */
export function clientOrderId(toolName: string, toolCallId: string): string {
  return `co_${toolName}_${toolCallId}`;
}

/** Round for display (USD to cents, units to 8 significant digits). */
export function usd(n: number): number {
  return Math.round(n * 100) / 100;
}

/** Units to 8 significant digits. */
export function units(n: number): number {
  return Number(n.toPrecision(8));
}
