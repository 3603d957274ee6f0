/**
 * The P&L convention of a retail exchange (issue 42, item 14; docs/finance.md): a buy's fee and slippage are in
 * the cost basis, so a buy realises nothing and its unrealised P&L is the current price against everything paid;
 * a sell realises its proceeds after fees against that cost basis.
 */
import { describe, expect, it } from 'vitest';
import { createPaperTradingProvider, createSimulatedMarket } from '@minara/agent/finance';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';

describe('paper P&L convention', () => {
  it('one buy: realised $0.00, cost basis = what was paid, unrealised = value at the current price − that', async () => {
    const clock = createFakeClock('2026-03-02T12:00:00Z');
    const market = createSimulatedMarket({ seed: 42, now: clock.now });
    const paper = createPaperTradingProvider({ trading: createInMemoryStorage().trading, market, now: clock.now, seedBalances: { USDC: 1_000 } });
    const fill = await paper.executeSpot({ from: 'USDC', to: 'ETH', amountUsd: 50, clientOrderId: 'o1' });
    expect(fill.fill?.feeUsd).toBeGreaterThan(0);
    const portfolio = await paper.getPortfolio();
    const eth = portfolio.holdings.find((h) => h.asset === 'ETH')!;
    expect(eth.costBasisUsd).toBeCloseTo(50, 9);
    expect(eth.unrealizedPnlUsd).toBeCloseTo(eth.valueUsd - 50, 9);
    // At the price the fill was marked at, the position is down by its fee and slippage, not flat.
    expect(eth.unrealizedPnlUsd).toBeLessThan(0);
    expect(eth.unrealizedPnlUsd).toBeGreaterThan(-1);
    const pnl = await paper.getPnl();
    expect(pnl.realizedUsd).toBe(0);
    expect(pnl.unrealizedUsd).toBeCloseTo(eth.unrealizedPnlUsd, 9);
    // The whole sum still holds: equity = contributions + realised + unrealised.
    expect(pnl.totalValueUsd).toBeCloseTo(pnl.netContributionsUsd + pnl.realizedUsd + pnl.unrealizedUsd, 6);

    // Selling it all realises proceeds after fees against the $50 basis (the fee of both sides is in it).
    const sold = await paper.executeSpot({ from: 'ETH', to: 'USDC', amount: eth.amount, clientOrderId: 'o2' });
    expect(sold.fill?.realizedPnlUsd).toBeLessThan(0);
    const after = await paper.getPnl();
    expect(after.realizedUsd).toBeCloseTo(sold.fill!.realizedPnlUsd, 9);
    expect(after.unrealizedUsd).toBeCloseTo(0, 9);
  });
});
