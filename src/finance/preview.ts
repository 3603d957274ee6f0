import { MinaraError } from '../errors/minara-error';
import type { ToolExecutionContext } from '../tools/types';
import type { FinanceDeps } from './context';
import { usd, units } from './context';
import { exposureImpact } from './exposure';
import { type FundMovingToolName, orderFacts } from './order-facts';

/**
 * The preview of a fund-moving call: route, expected output, fees, expected slippage (`slippageBps`), the
 * resulting exposure and the limits in force.
 * It quotes and reads the portfolio; it moves nothing.
 */
export async function buildPreview(deps: FinanceDeps, tool: FundMovingToolName, input: unknown, ctx: ToolExecutionContext): Promise<Record<string, unknown>> {
  const facts = await orderFacts(deps, ctx.call, ctx.toolCallId, tool, input);
  const portfolio = await deps.trading.getPortfolio({ signal: ctx.signal });
  const impact = exposureImpact(portfolio, facts, deps.isStable);
  const quote = facts.quote;
  if (!quote) throw new MinaraError('PROVIDER_ERROR', `No quote for this ${tool} call.`);
  const q = quote as unknown as Record<string, unknown>;
  const limits = await deps.limits();
  const common = {
    preview: true,
    executed: false,
    tool,
    side: facts.side,
    asset: facts.asset,
    sizeUsd: usd(facts.sizeUsd),
    feeUsd: usd(Number(q.feeUsd ?? 0)),
    resultingExposure: impact,
    // The limits this call is judged against (config tightened by the user's preference), for the person approving it.
    limits: { maxTradeUsd: limits.maxTradeUsd, maxSlippageBps: limits.maxSlippageBps, confirmOnceMaxUsd: limits.confirmOnceMaxUsd, maxDailyLossUsd: limits.maxDailyLossUsd },
    source: quote.source,
    simulated: quote.simulated,
    next: 'Show this preview to the user. To execute, call again with the same arguments and confirm: true.',
  };
  if (facts.kind === 'spot') {
    return {
      ...common,
      route: q.route,
      amountIn: units(Number(q.amountIn)),
      from: q.from,
      to: q.to,
      expectedOutput: units(Number(q.expectedAmountOut)),
      minOutput: units(Number(q.minAmountOut)),
      slippageBps: q.slippageBps,
    };
  }
  if (facts.kind === 'perp_open' || facts.kind === 'perp_close') {
    return {
      ...common,
      route: `${facts.asset}-PERP (${quote.source})`,
      action: q.action,
      size: units(Number(q.size)),
      markPrice: q.markPrice,
      expectedFillPrice: units(Number(q.expectedFillPrice)),
      leverage: q.leverage,
      marginUsd: usd(Number(q.marginUsd)),
      slippageBps: q.slippageBps,
      ...(q.liquidationPrice !== undefined ? { liquidationPrice: units(Number(q.liquidationPrice)) } : {}),
      ...(q.expectedPnlUsd !== undefined ? { expectedPnlUsd: usd(Number(q.expectedPnlUsd)) } : {}),
    };
  }
  return { ...common, route: `${facts.asset} → ${facts.destination ?? '?'}`, amount: facts.quantity, destination: facts.destination, valueUsd: usd(facts.sizeUsd) };
}
