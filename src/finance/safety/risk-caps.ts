import type { ToolEntry, ToolHook } from '../../tools/types';
import type { FinanceDeps } from '../context';
import { defineStage } from './stage';

/**
 * Stage 5 — risk caps: per-trade USD (`maxTradeUsd`, transfers included), leverage (`maxLeverage`) and the
 * daily loss limit (`maxDailyLossUsd`: once today's realised loss reaches it, calls that add exposure are
 * blocked; reducing risk stays possible).
 */
export function createRiskCapsHook(deps: FinanceDeps, isPackTool: (t: ToolEntry) => boolean): ToolHook {
  return defineStage('risk_caps', deps, isPackTool, async ({ facts, limits }) => {
    if (facts.kind !== 'perp_close' && facts.sizeUsd > limits.maxTradeUsd + 1e-6) {
      return { block: `${facts.sizeUsd.toFixed(2)} USD is above the per-trade limit of ${limits.maxTradeUsd} USD` };
    }
    if (facts.leverage !== undefined && facts.kind === 'perp_open' && facts.leverage > limits.maxLeverage) {
      return { block: `leverage ${facts.leverage}x is above the ${limits.maxLeverage}x limit` };
    }
    if (facts.increasesExposure) {
      const pnl = await deps.trading.getPnl();
      if (pnl.realizedTodayUsd <= -limits.maxDailyLossUsd) {
        return { block: `today's realised loss ${(-pnl.realizedTodayUsd).toFixed(2)} USD has reached the daily limit of ${limits.maxDailyLossUsd} USD; only risk-reducing trades run` };
      }
    }
    return undefined;
  });
}
