import {
  applyEntityBoost,
  buildSearchText,
  contentHash,
  extractFinanceEntities,
  extractMemoryEdges,
  MAX_EDGES_PER_CONTENT,
  normalizeEntity,
  parseSearchQuery,
  reciprocalRankFusion,
  renderMemorySnapshot,
} from '@minara/agent';
import { describe, expect, it } from 'vitest';

const ids = (text: string) => extractFinanceEntities(text).map((e) => `${e.kind}:${e.key}`);

describe('finance entity extraction', () => {
  it('finds tickers with and without $, chains, addresses and forex pairs', () => {
    expect(ids('long $ETH on Base, watching EUR/USD')).toEqual(['ticker:ETH', 'chain:base', 'forex:EURUSD']);
    expect(ids('bought btc and SOL; USDJPY broke out')).toEqual(['ticker:BTC', 'ticker:SOL', 'forex:USDJPY']);
    expect(ids('sent to 0xAbCdEf0123456789abcdef0123456789ABCDEF01')).toEqual(['address:0xabcdef0123456789abcdef0123456789abcdef01']);
    expect(ids('bridged to arbitrum then swapped on solana')).toEqual(['chain:arbitrum', 'chain:solana']);
    expect(ids('bitcoin and ethereum are up; the base case is flat')).toEqual(['ticker:BTC', 'ticker:ETH']);
    expect(ids('昨晚比特币做多被止损')).toEqual(['ticker:BTC']);
    expect(ids('The FOMC and CPI prints, the ETF and USD')).toEqual([]);
    expect(normalizeEntity('EUR/USD')).toEqual({ kind: 'forex', key: 'EURUSD' });
    expect(normalizeEntity('$pepe')).toEqual({ kind: 'ticker', key: 'PEPE' });
  });
});

describe('edges', () => {
  it('types verbs in English and Chinese, caps co-occurrence and the total', () => {
    const e = extractMemoryEdges('bought ETH, sold BTC, watching SOL, swapped ARB; LINK is interesting');
    expect(e.filter((x) => x.entityKind === 'ticker').map((x) => `${x.edgeType}:${x.entityKey}`)).toEqual([
      'holds:ETH', 'exited:BTC', 'watched:SOL', 'traded:ARB', 'mentions:LINK',
    ]);
    expect(e.filter((x) => x.edgeType === 'co_occurs_with')).toHaveLength(10);
    const cn = extractMemoryEdges('做多ETH，清仓BTC，关注SOL');
    expect(cn.slice(0, 3).map((x) => `${x.edgeType}:${x.entityKey}`)).toEqual(['holds:ETH', 'exited:BTC', 'watched:SOL']);
    const many = extractMemoryEdges(Array.from({ length: 30 }, (_, i) => `$TK${String.fromCharCode(65 + (i % 26))}${i}`).join(' bought '));
    expect(many).toHaveLength(MAX_EDGES_PER_CONTENT);
    expect(many.every((x) => x.edgeType !== 'co_occurs_with')).toBe(true);
    expect(extractMemoryEdges('scenario_id: sc_evil in text').some((x) => x.edgeType === 'belongs_to_scenario')).toBe(false);
    expect(extractMemoryEdges('plain text', { scenario_id: 'sc_1' })).toEqual([{ entityKind: 'scenario', entityKey: 'sc_1', edgeType: 'belongs_to_scenario', weight: 1 }]);
  });
});

describe('query sanitiser', () => {
  it('parses tokens, phrases, operators, category filters and prefixes', () => {
    const q = parseSearchQuery('category:preference slip* "always use" OR impact');
    expect(q.categories).toEqual(['preference']);
    expect(q.root).toEqual({
      kind: 'or',
      children: [
        { kind: 'and', children: [{ kind: 'term', text: 'slip', prefix: true }, { kind: 'phrase', tokens: ['always', 'use'] }] },
        { kind: 'term', text: 'impact' },
      ],
    });
    expect(parseSearchQuery('EUR/USD').root).toEqual({ kind: 'phrase', tokens: ['eur', 'usd'] });
    expect(parseSearchQuery('山寨币').root).toEqual({ kind: 'phrase', tokens: ['山寨', '寨币'] });
    expect(parseSearchQuery('"unbalanced quote').root).toEqual({ kind: 'phrase', tokens: ['unbalanced', 'quote'] });
    expect(parseSearchQuery('AND OR ( ) ^ -').root).toBeUndefined();
    expect(parseSearchQuery('what is the slippage').relaxed).toEqual({ kind: 'term', text: 'slippage' });
  });
});

describe('text, ranking, snapshot', () => {
  it('bigram-segments unsegmented scripts and hashes normalised content', () => {
    expect(buildSearchText('昨晚山寨币 BTC做多 Café')).toBe('昨晚 晚山 山寨 寨币 btc 做多 cafe');
    expect(contentHash('Prefers weekly charts.')).toBe(contentHash('prefers   weekly charts'));
  });
  it('fuses with RRF k=60 and boosts by 0.3 per overlapping entity', () => {
    const s = reciprocalRankFusion([[1, 2], [2, 3]]);
    expect(s.get(2)).toBeCloseTo(1 / 62 + 1 / 61, 12);
    expect(s.get(3)).toBeCloseTo(1 / 62, 12);
    expect(applyEntityBoost(1, 2)).toBeCloseTo(1.6, 12);
  });
  it('renders nothing for nothing and omits empty sections', () => {
    expect(renderMemorySnapshot({ profile: [], memories: [] })).toBe('');
    expect(renderMemorySnapshot({ profile: [], memories: [{ category: 'lesson', content: 'x' }] })).not.toContain('## User Profile');
  });
});
