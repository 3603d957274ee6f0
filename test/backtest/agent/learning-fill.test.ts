/**
 * The agent's learning loop records its trades at the engine's fills (the next bar's open, with the engine's fee and
 * realised P&L), not at the decision bar's close: the agent is a strategy like any other, and what it learns from is
 * what the engine actually did.
 */
import { describe, expect, it } from 'vitest';
import { createAgentStrategy, runBacktest } from '@minara/agent/backtest';
import { createScriptedModel } from '@minara/agent/testing';
import { agentBars } from './run-fixture';

const fmt = (n: number) => Number(n.toPrecision(8)).toString();

describe('learning from the engine\'s fills', () => {
  it('a round trip is recorded at the fills the engine made (price, quantity, fees, realised P&L), once, when it filled', async () => {
    const bars = agentBars();
    const model = createScriptedModel([
      // decision 1 (bar 0): buy $2,000 of BTC
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 2000, confirm: true, intent: 'buy BTC 2000 USD' } }] },
      { text: 'Bought BTC.' },
      // decision 2 (bar 10): sell it all
      { toolCalls: [{ toolName: 'sell_token', input: { symbol: 'BTC', fraction: 1, confirm: true, intent: 'sell BTC' } }] },
      { text: 'Sold.' },
      // decision 3 (bar 20): what did the learning loop make of the trade?
      { toolCalls: [{ toolName: 'memory_search', input: { query: 'BTC trade outcome' } }] },
      { text: 'Reviewed.' },
      { text: 'Done.' },
    ]);
    const strategy = createAgentStrategy({ model, prompt: 'Trade BTC.', schedule: { kind: 'every-n-bars', n: 10 }, limits: { maxTradeUsd: 5000 }, workspace: false });
    const result = await runBacktest({ bars, strategy, baselines: false, seed: 1 });
    model.assertConsumed();
    const [buy, sell] = result.strategy.fills;
    expect(buy).toMatchObject({ side: 'buy', price: bars.open[0]![1]! });
    expect(sell).toMatchObject({ side: 'sell', price: bars.open[0]![11]! });
    const [trade] = result.strategy.trades;
    expect(trade!.pnlUsd).toBeGreaterThan(0);

    // The trade case the learning loop wrote, as the agent found it at decision 3.
    const seen = JSON.stringify(strategy.decisions[2]!.saw);
    const money = `+$${trade!.pnlUsd.toFixed(2)}`;
    expect(seen).toContain(`long BTC spot ${fmt(buy!.quantity)} @ ${fmt(buy!.price)} → ${fmt(sell!.price)}, ${money} (win)`);
    // Not the decision bars' closes, and not a zero P&L.
    expect(seen).not.toContain(`@ ${fmt(bars.close[0]![0]!)}`);
    expect(seen).not.toContain('+$0.00 (loss)');
  }, 60_000);

  it('an order the engine rejects at fill is not learned as a trade', async () => {
    const bars = agentBars();
    const model = createScriptedModel([
      // decision 1: two buys of $3,000 with $5,000 of cash. The gate passes each (the position is not filled yet);
      // the engine fills the first at the next open and rejects the second (insufficient cash).
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 3000, confirm: true, intent: 'buy BTC 3000 USD' } }] },
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 3000, confirm: true, intent: 'buy more BTC 3000 USD' } }] },
      { text: 'Bought twice.' },
      { toolCalls: [{ toolName: 'sell_token', input: { symbol: 'BTC', fraction: 1, confirm: true, intent: 'sell BTC' } }] },
      { text: 'Sold.' },
      { toolCalls: [{ toolName: 'memory_search', input: { query: 'BTC trade outcome' } }] },
      { text: 'Reviewed.' },
      { text: 'Done.' },
    ]);
    const strategy = createAgentStrategy({ model, prompt: 'Trade BTC.', schedule: { kind: 'every-n-bars', n: 10 }, limits: { maxTradeUsd: 5000, maxTotalExposureUsd: 20_000, maxAssetConcentrationPct: 100 }, workspace: false });
    const result = await runBacktest({ bars, strategy, baselines: false, seed: 1, initialCash: 5_000 });
    model.assertConsumed();
    expect(result.strategy.rejected.map((r) => r.rule)).toEqual(['insufficient_cash']);
    const [buy, sell] = result.strategy.fills;
    expect(result.strategy.fills.map((f) => f.side)).toEqual(['buy', 'sell']);
    const seen = JSON.stringify(strategy.decisions[2]!.saw);
    // One case, the filled buy closed by the filled sell; the rejected order was never a trade.
    expect(seen.match(/long BTC spot/g)).toHaveLength(1);
    expect(seen).toContain(`long BTC spot ${fmt(buy!.quantity)} @ ${fmt(buy!.price)} → ${fmt(sell!.price)}`);
  }, 60_000);
});
