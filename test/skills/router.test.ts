import { describe, expect, it } from 'vitest';
import { createSkillRegistry, defineSkill, type SkillDefinition } from '@minara/agent';
import { rng, shuffle, toolRegistry } from './helpers';

const base = (id: string, extra: Partial<SkillDefinition> = {}): SkillDefinition => ({
  id,
  description: `${id} skill`,
  prompt: `Playbook of ${id}.`,
  priority: 50,
  ...extra,
});

function registry(defs: SkillDefinition[], env: Record<string, string> = {}) {
  return createSkillRegistry({ skills: defs, tools: toolRegistry(), env, platform: 'linux' });
}

const entry = (reg: ReturnType<typeof registry>, message: string, id: string, extra = {}) =>
  reg.route({ message, ...extra }).find((e) => e.id === id);

describe('L0 router score table', () => {
  it('fallback alone is 100 − priority', () => {
    const reg = registry([base('a', { priority: 10 }), base('b', { priority: 70 })]);
    expect(reg.route({ message: 'hello there' })).toEqual([
      { id: 'a', score: 90, reasons: [] },
      { id: 'b', score: 30, reasons: [] },
    ]);
  });

  it('keyword hit +30 each, capped at +60', () => {
    const reg = registry([base('k', { routing: { keywords: ['alpha', 'beta', 'gamma'] } })]);
    expect(entry(reg, 'alpha', 'k')).toEqual({ id: 'k', score: 50 + 30, reasons: ['kw:alpha'] });
    expect(entry(reg, 'alpha and beta', 'k')?.score).toBe(50 + 60);
    const three = entry(reg, 'gamma beta alpha', 'k');
    expect(three?.score).toBe(50 + 60);
    // Reasons list every hit in declaration order, independent of message order.
    expect(three?.reasons).toEqual(['kw:alpha', 'kw:beta', 'kw:gamma']);
    // A keyword repeated in the message counts once.
    expect(entry(reg, 'alpha alpha alpha', 'k')?.score).toBe(80);
  });

  it('lifecycle stage match +20 once, with every matching stage as a reason', () => {
    const reg = registry([base('s', { routing: { lifecycleStages: ['evaluate', 'decide'] } })]);
    expect(entry(reg, 'should I buy it', 's')).toEqual({ id: 's', score: 70, reasons: ['stage:evaluate', 'stage:decide'] });
    expect(entry(reg, 'close my positions', 's')?.score).toBe(50);
  });

  it('asset class match +15 once', () => {
    const reg = registry([base('x', { routing: { assetClasses: ['crypto_meme', 'stablecoin'] } })]);
    expect(entry(reg, 'thoughts on $PEPE vs USDC', 'x')).toEqual({ id: 'x', score: 65, reasons: ['asset:crypto_meme', 'asset:stablecoin'] });
    expect(entry(reg, 'EUR/USD today', 'x')?.score).toBe(50);
  });

  it('co-activation +10 from another hit skill', () => {
    const reg = registry([
      base('perps', { routing: { keywords: ['perps'], coActivate: ['risk'] } }),
      base('risk', {}),
      base('other', {}),
    ]);
    const r = reg.route({ message: 'perps please' });
    expect(r.find((e) => e.id === 'risk')).toEqual({ id: 'risk', score: 60, reasons: ['co:perps'] });
    expect(r.find((e) => e.id === 'other')?.score).toBe(50);
    // Without a hit, nothing is lifted.
    expect(entry(reg, 'hello', 'risk')?.score).toBe(50);
  });

  it('co-activation is +10 once even with several hitters, credited to the first by id', () => {
    const reg = registry([
      base('b-hit', { routing: { keywords: ['zeta'], coActivate: ['target'] } }),
      base('a-hit', { routing: { keywords: ['zeta'], coActivate: ['target'] } }),
      base('target'),
    ]);
    expect(entry(reg, 'zeta', 'target')).toEqual({ id: 'target', score: 60, reasons: ['co:a-hit'] });
  });

  it('a stage or asset match alone does not co-activate', () => {
    const reg = registry([base('p', { routing: { lifecycleStages: ['decide'], coActivate: ['t'] } }), base('t')]);
    expect(entry(reg, 'buy', 't')?.score).toBe(50);
  });

  it('signal source match +25 on cron/webhook turns', () => {
    const reg = registry([base('w', { routing: { signalSources: ['cron', 'btc_drop_5pct'] } }), base('u')]);
    expect(entry(reg, 'tick', 'w', { source: 'cron' })).toEqual({ id: 'w', score: 75, reasons: ['signal:cron'] });
    expect(entry(reg, 'tick', 'w', { source: 'user' })?.score).toBe(50);
    expect(entry(reg, 'tick', 'w')?.score).toBe(50);
    const sig = { source: 'webhook' as const, signal_id: 'btc_drop_5pct' };
    expect(entry(reg, 'BTC dropped', 'w', { signal: sig })).toEqual({ id: 'w', score: 75, reasons: ['signal:btc_drop_5pct'] });
  });

  it('signal context adds its suggested stages and asset class', () => {
    const reg = registry([base('e', { routing: { lifecycleStages: ['evaluate'], assetClasses: ['crypto_major'] } })]);
    const signal = { source: 'cron' as const, signal_id: 's1', asset: { symbol: 'BTC', asset_class: 'crypto_major' as const }, suggested_stages: ['evaluate' as const] };
    expect(entry(reg, 'tick', 'e', { signal })).toEqual({ id: 'e', score: 85, reasons: ['stage:evaluate', 'asset:crypto_major'] });
  });

  it('a signal hit co-activates', () => {
    const reg = registry([base('w', { routing: { signalSources: ['cron'], coActivate: ['mem'] } }), base('mem')]);
    expect(entry(reg, 'tick', 'mem', { source: 'cron' })).toEqual({ id: 'mem', score: 60, reasons: ['co:w'] });
  });

  it('all rules add up, in the fixed reason order', () => {
    const reg = registry([
      base('full', {
        priority: 30,
        routing: { keywords: ['long', 'perps', 'leverage'], lifecycleStages: ['decide'], assetClasses: ['perps'], signalSources: ['cron'] },
      }),
      base('lead', { routing: { keywords: ['perps'], coActivate: ['full'] } }),
    ]);
    const e = entry(reg, 'long BTC perps with leverage', 'full', { source: 'cron' });
    // 70 fallback + 60 kw cap + 20 stage + 15 asset + 10 co + 25 signal
    expect(e).toEqual({
      id: 'full',
      score: 200,
      reasons: ['kw:long', 'kw:perps', 'kw:leverage', 'stage:decide', 'asset:perps', 'co:lead', 'signal:cron'],
    });
  });

  it('a negative keyword drops the skill (−∞), whatever else it scores', () => {
    const reg = registry([base('n', { priority: 0, routing: { keywords: ['buy'], negativeKeywords: ['paper trade', '模拟'] } })]);
    expect(entry(reg, 'buy BTC', 'n')?.score).toBe(130);
    expect(entry(reg, 'buy BTC as a paper trade', 'n')).toBeUndefined();
    expect(entry(reg, '模拟盘 buy', 'n')).toBeUndefined();
    expect(reg.explain({ message: 'buy BTC paper-trade' })).toEqual([{ id: 'n', score: -Infinity, reasons: ['neg:paper trade'], dropped: true }]);
  });

  it('a dropped skill does not co-activate and is not lifted', () => {
    const reg = registry([
      base('hit', { routing: { keywords: ['zeta'], negativeKeywords: ['omega'], coActivate: ['t'] } }),
      base('t', { routing: { negativeKeywords: ['nope'] } }),
    ]);
    expect(entry(reg, 'zeta omega', 't')?.score).toBe(50);
    expect(entry(reg, 'zeta nope', 't')).toBeUndefined();
  });

  it('failed routing-time conditions drop the skill', () => {
    const reg = registry([
      base('needs-tool', { conditions: { requiresTools: ['glassnode_metric'] } }),
      base('fallback', { conditions: { fallbackForTools: ['web_search'] } }),
      base('fallback-ok', { conditions: { fallbackForTools: ['web_extract'] } }),
      base('needs-set', { conditions: { requiresToolsets: ['documents'] } }),
      base('has-set', { conditions: { requiresToolsets: ['analysis'] } }),
    ]);
    expect(reg.route({ message: 'x' }).map((e) => e.id)).toEqual(['fallback-ok', 'has-set']);
    const why = Object.fromEntries(reg.explain({ message: 'x' }).filter((e) => e.dropped).map((e) => [e.id, e.reasons[0]]));
    expect(why).toEqual({
      'needs-tool': 'cond:requires_tools:glassnode_metric',
      fallback: 'cond:fallback_for_tools:web_search',
      'needs-set': 'cond:requires_toolsets:documents',
    });
  });

  it('ties break by priority, then id, independent of registration order', () => {
    const defs = [
      base('zeta', { priority: 50, routing: { keywords: ['foo'] } }), // 80
      base('alpha', { priority: 20 }), // 80
      base('mid', { priority: 50, routing: { keywords: ['foo'] } }), // 80
      base('beta', { priority: 20 }), // 80
    ];
    const expected = ['alpha', 'beta', 'mid', 'zeta'];
    expect(registry(defs).route({ message: 'foo' }).map((e) => e.id)).toEqual(expected);
    expect(registry([...defs].reverse()).route({ message: 'foo' }).map((e) => e.id)).toEqual(expected);
  });

  it('manual-activation skills are not routed', () => {
    const reg = registry([base('m', { activation: 'manual', routing: { keywords: ['foo'] } }), base('a')]);
    expect(reg.route({ message: 'foo' }).map((e) => e.id)).toEqual(['a']);
  });
});

describe('keyword matching', () => {
  const reg = registry([
    base('long', { routing: { keywords: ['long'] } }),
    base('phrase', { routing: { keywords: ['stop loss', "what's trending"] } }),
    base('zh', { routing: { keywords: ['止损', '做多'] } }),
    base('dollar', { routing: { keywords: ['$pepe'] } }),
    base('plural', { routing: { keywords: ['position'] } }),
  ]);
  const hits = (message: string) => reg.route({ message }).filter((e) => e.reasons.some((r) => r.startsWith('kw:'))).map((e) => e.id).sort();

  it('does not fire on substrings inside other words', () => {
    expect(hits('this does not belong here')).toEqual([]);
    expect(hits('longitude and prolonged')).toEqual([]);
    expect(hits('go long')).toEqual(['long']);
    expect(hits('LONG!')).toEqual(['long']);
    expect(hits('做多BTC then long')).toEqual(['long', 'zh']);
  });

  it('matches multi-word phrases across spacing, hyphens and curly quotes', () => {
    expect(hits('set a stop-loss')).toEqual(['phrase']);
    expect(hits('set a stop   loss')).toEqual(['phrase']);
    expect(hits('What’s trending today?')).toEqual(['phrase']);
    expect(hits('nonstop lossy')).toEqual([]);
  });

  it('matches Chinese keywords as substrings and full-width text after NFKC', () => {
    expect(hits('帮我设置止损价格')).toEqual(['zh']);
    expect(hits('ＬＯＮＧ ＢＴＣ')).toEqual(['long']);
  });

  it('matches symbol keywords and plain plurals', () => {
    expect(hits('buy $PEPE now')).toEqual(['dollar']);
    expect(hits('buy pepe now')).toEqual([]);
    expect(hits('show my positions')).toEqual(['plural']);
  });
});

describe('determinism (property)', () => {
  const vocab = ['buy', 'sell', 'long', 'short', 'perps', 'swap', 'yield', 'stake', 'bridge', 'alert', 'news', 'tax', '止损', '合约', '做空', 'stop loss', 'funding rate', 'meme', 'nft', 'gold'];
  const stages = ['discover', 'evaluate', 'decide', 'manage'] as const;
  const assets = ['crypto_major', 'crypto_alt', 'crypto_meme', 'stablecoin', 'perps', 'forex', 'equity'] as const;
  const messages = ['long BTC 10x', 'should I buy $PEPE?', '帮我设置止损', 'stake ETH for yield', 'swap USDC to SOL', 'gold vs EUR/USD', 'news on NVDA stock', 'close my perps positions', 'hello'];

  function randomSkills(seed: number, n: number): SkillDefinition[] {
    const next = rng(seed);
    const pick = <T>(list: readonly T[], k: number) => shuffle(list, next).slice(0, k);
    return Array.from({ length: n }, (_, i) => {
      const ids = Array.from({ length: n }, (_, j) => `s${j}`);
      return base(`s${i}`, {
        priority: Math.floor(next() * 5) * 10,
        routing: {
          keywords: pick(vocab, 1 + Math.floor(next() * 4)),
          negativeKeywords: next() < 0.2 ? pick(vocab, 1) : [],
          lifecycleStages: pick(stages, Math.floor(next() * 3)),
          assetClasses: pick(assets, Math.floor(next() * 3)),
          coActivate: next() < 0.3 ? pick(ids, 2) : [],
          signalSources: next() < 0.2 ? ['cron'] : [],
        },
      });
    });
  }

  it('same input → same catalog, regardless of registration order', () => {
    for (let seed = 1; seed <= 25; seed++) {
      const defs = randomSkills(seed, 30);
      const a = registry(defs);
      const b = registry(shuffle(defs, rng(seed * 7919)));
      for (const message of messages) {
        for (const source of ['user', 'cron'] as const) {
          const ra = a.route({ message, source });
          expect(b.route({ message, source })).toEqual(ra);
          expect(a.route({ message, source })).toEqual(ra);
          expect(b.buildRoutedCatalog(ra)).toBe(a.buildRoutedCatalog(ra));
          // Sorted by score desc, then priority asc, then id.
          for (let i = 1; i < ra.length; i++) {
            const p = ra[i - 1]!;
            const q = ra[i]!;
            const pp = defs.find((d) => d.id === p.id)!.priority!;
            const qp = defs.find((d) => d.id === q.id)!.priority!;
            expect(p.score > q.score || (p.score === q.score && (pp < qp || (pp === qp && p.id < q.id)))).toBe(true);
          }
        }
      }
      expect(b.buildCatalog()).toBe(a.buildCatalog());
    }
  });

  it('defineSkill output and plain definitions route identically', () => {
    const defs = randomSkills(99, 20);
    expect(registry(defs.map((d) => defineSkill(d))).route({ message: 'long BTC' })).toEqual(registry(defs).route({ message: 'long BTC' }));
  });
});
