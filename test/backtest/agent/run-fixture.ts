import { generateBars } from '@minara/agent/backtest';
import type { ScriptedStep } from '@minara/agent/testing';

/** The scripted agent: decision 1 buys, 2 holds, 3 sells everything, 4 holds. */
export function agentScript(): ScriptedStep[] {
  const read: ScriptedStep = { toolCalls: [{ toolName: 'get_ohlcv', input: { symbol: 'BTC', limit: 20 } }, { toolName: 'get_portfolio', input: {} }] };
  return [
    read, { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'BTC', amountUsd: 2000, confirm: true, intent: 'buy BTC 2000 USD' } }] }, { text: 'Bought BTC.' },
    read, { text: 'Holding.' },
    read, { toolCalls: [{ toolName: 'sell_token', input: { symbol: 'BTC', fraction: 1, confirm: true, intent: 'sell BTC' } }] }, { text: 'Sold.' },
    read, { text: 'Flat.' },
  ];
}
export const agentBars = () => generateBars({ seed: 11, symbols: ['BTC'], regime: 'bull', bars: 40, start: '2021-03-01' });
