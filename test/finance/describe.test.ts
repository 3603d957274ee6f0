import { describeOrder, describeToolResult, formatBps, formatPrice, formatUnits, formatUsd } from '@minara/agent/finance';
import { describe, expect, it } from 'vitest';
import { ctxOf, setup } from './helpers';

describe('describeOrder / describeToolResult (words for approvals and results)', () => {
  it('formats money, prices, units and basis points the way a trader reads them', () => {
    expect(formatUsd(50)).toBe('$50.00');
    expect(formatUsd(-1234.5)).toBe('-$1,234.50');
    expect(formatPrice(3012.45)).toBe('$3,012');
    expect(formatPrice(1.2549)).toBe('$1.25');
    expect(formatPrice(0.000123456)).toBe('$0.0001235');
    expect(formatUnits(0.016600271234)).toBe('0.01660027');
    expect(formatBps(50)).toBe('0.5%');
    expect(formatBps(100)).toBe('1%');
  });

  it('says what an order will do from its arguments alone, and more with its preview', () => {
    expect(describeOrder({ toolName: 'buy_token', input: { symbol: 'eth', amountUsd: 50, slippageBps: 100 } })).toBe('Buy $50.00 of ETH, max slippage 1%');
    expect(describeOrder({ toolName: 'buy_token', input: { symbol: 'ETH', amountUsd: 50, slippageBps: 100 }, preview: { sizeUsd: 50, expectedOutput: 50 / 3012, feeUsd: 0.3, slippageBps: 2 } })).toBe(
      'Buy $50.00 of ETH at ~$3,012, fee $0.30, slippage ~0.02% (max 1%)',
    );
    expect(describeOrder({ toolName: 'sell_token', input: { symbol: 'BTC', fraction: 0.5 } })).toBe('Sell half of your BTC');
    expect(describeOrder({ toolName: 'sell_token', input: { symbol: 'BTC', fraction: 1 } })).toBe('Sell all of your BTC');
    expect(describeOrder({ toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amount: 100 } })).toBe('Swap 100 USDC for ETH');
    expect(describeOrder({ toolName: 'open_perps_position', input: { symbol: 'BTC', side: 'long', sizeUsd: 1000, leverage: 3 } })).toBe('Open a 3× long of BTC, $1,000.00 notional');
    expect(describeOrder({ toolName: 'close_perps_position', input: { symbol: 'BTC' } })).toBe('Close all of your BTC position');
    expect(describeOrder({ toolName: 'transfer_token', input: { asset: 'usdc', amount: 10, to: '0x1234567890abcdef1234567890abcdef12345678' } })).toBe('Send 10 USDC to 0x1234…5678');
    expect(describeOrder({ toolName: 'withdraw_funds', input: { asset: 'USDC', amount: 5, destination: 'bank-1' } })).toBe('Withdraw 5 USDC to bank-1');
  });

  it('answers undefined for tools that move nothing and inputs it cannot read (the caller shows its own view)', () => {
    expect(describeOrder({ toolName: 'get_price', input: { symbol: 'ETH' } })).toBeUndefined();
    expect(describeOrder({ toolName: 'buy_token', input: { symbol: 'ETH' } })).toBeUndefined();
    expect(describeOrder({ toolName: 'buy_token', input: 'buy everything' })).toBeUndefined();
    expect(describeOrder({ toolName: 'sell_token', input: { symbol: 'ETH', amountUsd: Number.NaN } })).toBeUndefined();
    expect(describeToolResult({ toolName: 'write_file', data: { written: true } })).toBeUndefined();
    expect(describeToolResult({ toolName: 'get_price', data: null })).toBeUndefined();
  });

  it("reads the finance pack's real preview, fill, price, portfolio and P&L shapes", async () => {
    const { call, approveAndRun } = setup();
    const ctx = ctxOf('user', 's-describe');
    const buy = { symbol: 'ETH', amountUsd: 50, slippageBps: 50, intent: 'buy 50 USD of ETH' };
    const preview = await call(ctx, 'buy_token', buy);
    expect(preview.ok).toBe(true);
    const sentence = describeOrder({ toolName: 'buy_token', input: buy, preview: preview.data });
    expect(sentence).toMatch(/^Buy \$50\.00 of ETH at ~\$[\d,]+(\.\d\d)?, fee \$\d+\.\d\d, slippage ~\d+(\.\d+)?% \(max 0\.5%\)$/);
    expect(preview.data.limits).toEqual({ maxTradeUsd: 5000, maxSlippageBps: 100, confirmOnceMaxUsd: 500, maxDailyLossUsd: 1000 });
    expect(describeToolResult({ toolName: 'buy_token', data: preview.data, input: buy })).toBe(`Preview (nothing moved): ${sentence}`);

    const { result } = await approveAndRun(ctx, 'buy_token', { ...buy, confirm: true });
    expect(result.ok).toBe(true);
    expect(describeToolResult({ toolName: 'buy_token', data: result.data })).toMatch(/^Bought [\d.]+ ETH at \$[\d,]+(\.\d\d)? for \$\d+\.\d\d, fee \$\d+\.\d\d, paper$/);

    const price = await call(ctx, 'get_price', { symbol: 'ETH' });
    expect(describeToolResult({ toolName: 'get_price', data: price.data })).toMatch(/^ETH \$[\d,.]+ \([+-]\d+\.\d\d% 24h\) · simulated$/);
    const portfolio = await call(ctx, 'get_portfolio', {});
    expect(describeToolResult({ toolName: 'get_portfolio', data: portfolio.data })).toMatch(/^Portfolio \$[\d,]+\.\d\d in 2 holdings, exposure \$\d+\.\d\d$/);
    const pnl = await call(ctx, 'minara_pnl', {});
    expect(describeToolResult({ toolName: 'minara_pnl', data: pnl.data })).toMatch(/^P&L realised [+-]\$[\d.]+ \(today [+-]\$[\d.]+\), unrealised [+-]\$[\d.]+$/);

    const sell = { symbol: 'ETH', fraction: 1, intent: 'sell all ETH' };
    const sellPreview = await call(ctx, 'sell_token', sell);
    expect(describeOrder({ toolName: 'sell_token', input: sell, preview: sellPreview.data })).toMatch(/^Sell all of your ETH \(~\$\d+\.\d\d\) at ~\$[\d,]+, fee \$\d+\.\d\d, slippage ~\d+(\.\d+)?%$/);
    const perp = { symbol: 'BTC', side: 'long', sizeUsd: 300, leverage: 3, intent: 'long BTC 300 USD 3x' };
    const perpPreview = await call(ctx, 'open_perps_position', perp);
    expect(perpPreview.ok).toBe(true);
    expect(describeOrder({ toolName: 'open_perps_position', input: perp, preview: perpPreview.data })).toMatch(
      /^Open a 3× long of BTC, \$300\.00 notional \(\$100\.00 margin\) at ~\$[\d,]+, liquidation ~\$[\d,]+, fee \$\d+\.\d\d, slippage ~\d+(\.\d+)?%$/,
    );
  });
});
