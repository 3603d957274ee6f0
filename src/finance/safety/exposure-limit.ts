import type { ToolEntry, ToolHook } from '../../tools/types';
import type { FinanceDeps } from '../context';
import { exposureImpact } from '../exposure';
import { defineStage } from './stage';

/**
 * Stage 3 — exposure: for calls that add exposure, the asset's share of the portfolio after the order
 * must stay within `maxAssetConcentrationPct` and total exposure within `maxTotalExposureUsd`, measured
 * against the current portfolio. Calls that reduce exposure always pass.
 */
export function createExposureHook(deps: FinanceDeps, isPackTool: (t: ToolEntry) => boolean): ToolHook {
  return defineStage('exposure', deps, isPackTool, async ({ facts, limits }) => {
    if (!facts.increasesExposure) return undefined;
    const impact = exposureImpact(await deps.trading.getPortfolio(), facts, deps.isStable);
    if (impact.exposureAfterUsd > limits.maxTotalExposureUsd + 1e-6) {
      return { block: `total exposure would be ${impact.exposureAfterUsd} USD, above the ${limits.maxTotalExposureUsd} USD limit` };
    }
    if (!deps.isStable(impact.asset) && impact.assetAfterPct > limits.maxAssetConcentrationPct + 1e-6) {
      return { block: `${impact.asset} would be ${impact.assetAfterPct}% of the portfolio, above the ${limits.maxAssetConcentrationPct}% concentration limit` };
    }
    return undefined;
  });
}
