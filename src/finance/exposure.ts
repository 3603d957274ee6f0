import type { OrderFacts } from './order-facts';
import type { Portfolio } from './types';

/** The portfolio's exposure before and after an order. */
export interface ExposureImpact {
  readonly totalValueUsd: number;
  readonly exposureBeforeUsd: number;
  readonly exposureAfterUsd: number;
  readonly asset: string;
  /** Value of the asset (spot + perp notional) after the order. */
  readonly assetAfterUsd: number;
  /** Its share of the portfolio after the order, percent. */
  readonly assetAfterPct: number;
}

/**
 * Estimate exposure after an order against the current portfolio: spot buys add their notional to the
 * asset and to total exposure, sells remove it, perp opens add notional, closes remove it, transfers
 * remove value from the portfolio.
 */
export function exposureImpact(p: Portfolio, f: OrderFacts, isStable: (s: string) => boolean): ExposureImpact {
  const spot = (asset: string) => p.holdings.find((h) => h.asset === asset)?.valueUsd ?? 0;
  const perp = (asset: string) => p.positions.filter((x) => x.symbol === asset).reduce((a, x) => a + x.notionalUsd, 0);
  const asset = f.asset;
  let assetAfter = spot(asset) + perp(asset);
  let exposureAfter = p.exposureUsd;
  let total = p.totalValueUsd;
  const stable = isStable(asset);
  switch (f.kind) {
    case 'spot': {
      const sold = f.tokens.find((t) => !t.acquired)?.symbol ?? '';
      const bought = f.tokens.find((t) => t.acquired)?.symbol ?? '';
      if (!isStable(bought)) exposureAfter += f.sizeUsd;
      if (!isStable(sold)) exposureAfter -= Math.min(f.sizeUsd, spot(sold));
      if (asset === bought) assetAfter += f.sizeUsd;
      else assetAfter -= Math.min(f.sizeUsd, spot(asset));
      break;
    }
    case 'perp_open':
      exposureAfter += f.sizeUsd;
      assetAfter += f.sizeUsd;
      break;
    case 'perp_close':
      exposureAfter -= f.sizeUsd;
      assetAfter -= f.sizeUsd;
      break;
    default:
      total -= f.sizeUsd;
      if (!stable) {
        exposureAfter -= f.sizeUsd;
        assetAfter -= f.sizeUsd;
      }
  }
  assetAfter = Math.max(0, assetAfter);
  exposureAfter = Math.max(0, exposureAfter);
  const pct = total > 0 ? (assetAfter / total) * 100 : assetAfter > 0 ? 100 : 0;
  return {
    totalValueUsd: round(total), exposureBeforeUsd: round(p.exposureUsd), exposureAfterUsd: round(exposureAfter), asset,
    assetAfterUsd: round(assetAfter), assetAfterPct: Math.round(pct * 100) / 100,
  };
}

const round = (n: number) => Math.round(n * 100) / 100;
