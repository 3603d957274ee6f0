import { describe, expect, it } from 'vitest';
import { classifyMessage, detectAssetClasses, extractRoutingEntities, inferLifecycleStages } from '@minara/agent';

describe('lifecycle stages', () => {
  it.each([
    ["what's trending today?", ['discover']],
    ['show me the price of SOL', ['discover']],
    ['Should I buy ETH?', ['evaluate', 'decide']],
    ['analyze and compare the risk', ['evaluate']],
    ['swap 100 USDC to ETH', ['decide']],
    ['go short', ['decide']],
    ['close my positions and set a stop loss', ['manage']],
    ['热门代币有哪些', ['discover']],
    ['比特币价格多少钱', ['discover']],
    ['该不该买', ['evaluate', 'decide']],
    ['做空以太坊', ['decide']],
    ['帮我设置止损', ['manage']],
    ['我的仓位怎么样', ['manage']],
    ['hello there', []],
    ['this does not belong here', []],
  ] as const)('%s → %j', (message, stages) => {
    expect(inferLifecycleStages(message)).toEqual(stages);
  });
});

describe('asset classes and entities', () => {
  it.each([
    ['BTC and ETH', ['crypto_major']],
    ['$PEPE and DOGE', ['crypto_meme']],
    ['狗狗币', ['crypto_meme']],
    ['long SOL 10x', ['crypto_alt', 'perps']],
    ['funding rate on Hyperliquid perps', ['perps']],
    ['USDT depeg?', ['stablecoin']],
    ['EUR/USD outlook', ['forex']],
    ['USDJPY', ['forex']],
    ['外汇 汇率', ['forex']],
    ['NVDA stock', ['equity']],
    ['美股 特斯拉', ['equity']],
    ['gold price', ['commodity']],
    ['S&P 500', ['index']],
    ['link this page', []],
    ['I am near the CEO', []],
    ['$FOOBAR to the moon', ['crypto_alt']],
  ] as const)('%s → %j', (message, classes) => {
    expect(detectAssetClasses(message)).toEqual(classes);
  });

  it('extracts tickers, cashtags, pairs and chains once each', () => {
    expect(extractRoutingEntities('swap USDC to $WIF on arbitrum, then USDC/ETH and EUR/USD')).toEqual([
      { kind: 'ticker', value: 'USDC', assetClass: 'stablecoin' },
      { kind: 'ticker', value: 'ETH', assetClass: 'crypto_major' },
      { kind: 'forex_pair', value: 'EUR/USD', assetClass: 'forex' },
      { kind: 'ticker', value: 'WIF', assetClass: 'crypto_meme' },
      { kind: 'chain', value: 'arbitrum' },
    ]);
  });

  it('classifies in one pass', () => {
    expect(classifyMessage('Should I long $BTC?')).toMatchObject({ stages: ['evaluate', 'decide'], assetClasses: ['crypto_major'] });
  });
});
