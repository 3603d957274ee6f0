import { describe, expect, it } from 'vitest';
import {
  applySignalPreload,
  createSkillRegistry,
  createSkillSession,
  createSkillSessionStore,
  createToolCallContext,
  DEFAULT_ALWAYS_INCLUDE_TOOLS,
  defineSkill,
  MinaraError,
  parseSignalContext,
  renderSignalBlock,
  SKILL_BODY_BUDGET_CHARS,
  SkillActivationRefusedError,
  SkillNotFoundError,
  type SkillActivationRecord,
} from '@minara/agent';
import { parse, toolRegistry } from './helpers';

const big = (id: string, priority: number, tools: string[], size = 5000, summary?: string) =>
  defineSkill({ id, description: `${id} playbook`, prompt: `${id}:`.padEnd(size, '.'), toolNames: tools, priority, ...(summary ? { summary } : {}) });

const skills = [
  big('minara.core', 10, ['swap_tokens', 'get_price']),
  big('perps.hl', 20, ['open_perps_position']),
  big('research.deep', 30, ['research_report', 'web_search'], 5000, 'Plan, search, cite; one source per claim.'),
  defineSkill({ id: 'workspace.e2b', description: 'Cloud sandbox VM', prompt: 'Run code in the sandbox.', sandbox: true }),
  defineSkill({ id: 'transfer.out', description: 'Withdrawals', prompt: 'Withdraw carefully.', toolNames: ['withdraw'] }),
  defineSkill({ id: 'market.watch', description: 'Market watch', prompt: 'Watch.', toolNames: ['get_trending'] }),
  defineSkill({ id: 'onchain.glassnode', description: 'Glassnode', prompt: 'x', conditions: { requiresEnv: ['GLASSNODE_API_KEY'] } }),
];

function setup(records: SkillActivationRecord[] = []) {
  const tools = toolRegistry();
  const registry = createSkillRegistry({ skills, tools, env: {} });
  const session = createSkillSession({ registry, onActivation: (r) => records.push(r) });
  return { tools, registry, session };
}

describe('SkillSession activation', () => {
  it('replaces the loaded set on every call; [] clears it', () => {
    const { session } = setup();
    session.activate(['perps.hl', 'minara.core']);
    expect(session.activeIds()).toEqual(['minara.core', 'perps.hl']);
    const r = session.activate(['market.watch']);
    expect(r).toMatchObject({ active: ['market.watch'], added: ['market.watch'], removed: ['minara.core', 'perps.hl'] });
    session.activate([]);
    expect(session.activeIds()).toEqual([]);
  });

  it('unknown ids get a clear error with close matches and change nothing', () => {
    const { session } = setup();
    session.activate(['market.watch']);
    try {
      session.activate(['minara.core', 'perp.hl']);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SkillNotFoundError);
      expect((e as MinaraError).code).toBe('SKILL_NOT_FOUND');
      expect((e as Error).message).toMatch(/Unknown skill id "perp.hl". Did you mean: perps.hl\?/);
      expect((e as SkillNotFoundError).suggestions).toEqual({ 'perp.hl': ['perps.hl'] });
    }
    expect(session.activeIds()).toEqual(['market.watch']);
    expect(() => session.activate(['onchain.glassnode'])).toThrow(/unavailable here \(requires_env:GLASSNODE_API_KEY\)/);
  });

  it('refuses a sandbox-class skill from an autonomous source unless operator-authored', () => {
    const { session } = setup();
    for (const source of ['cron', 'webhook', 'workflow'] as const) {
      expect(() => session.activate(['workspace.e2b'], { source })).toThrow(SkillActivationRefusedError);
    }
    expect(session.activeIds()).toEqual([]);
    expect(session.activate(['workspace.e2b'], { source: 'cron', operatorAuthored: true }).active).toEqual(['workspace.e2b']);
    expect(session.activate(['workspace.e2b'], { source: 'user' }).active).toEqual(['workspace.e2b']);
    // Non-sandbox skills activate from any source: activation runs no risk gate.
    expect(session.activate(['transfer.out'], { source: 'cron' }).active).toEqual(['transfer.out']);
  });

  it('reports each activation to onActivation', () => {
    const records: SkillActivationRecord[] = [];
    const { session } = setup(records);
    session.activate(['perps.hl'], { via: 'model', source: 'user', traceId: 't1' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ requested: ['perps.hl'], via: 'model', source: 'user', traceId: 't1', active: ['perps.hl'] });
  });
});

describe('body budget and shed', () => {
  it('sheds the lowest-priority bodies first; shed skills stay active with their tools', () => {
    const { session } = setup();
    expect(SKILL_BODY_BUDGET_CHARS).toBe(12_000);
    const r = session.activate(['research.deep', 'perps.hl', 'minara.core']);
    expect(r.included).toEqual(['minara.core', 'perps.hl']);
    expect(r.shed).toEqual(['research.deep']);
    expect(session.isActive('research.deep')).toBe(true);
    expect(session.visibleToolNames()).toContain('research_report');
    const block = session.promptBlock();
    expect(block).toContain('## Skill: minara.core');
    expect(block).not.toContain('research.deep:....');
    expect(block).toContain('- research.deep: Plan, search, cite; one source per claim.');
    const catalog = session.catalog();
    expect(catalog).toContain('- research.deep: research.deep playbook (active, body shed)\n  Summary: Plan, search, cite; one source per claim.');
    expect(catalog).toContain('- minara.core: minara.core playbook (active)');
  });

  it('does not depend on activation order', () => {
    const a = setup().session;
    const b = setup().session;
    a.activate(['research.deep', 'perps.hl', 'minara.core']);
    b.activate(['minara.core', 'research.deep', 'perps.hl']);
    expect(b.promptBlock()).toBe(a.promptBlock());
  });
});

describe('provider-visible tool list (NOTES §3)', () => {
  it('is the registered baseline, then active skills’ tools, each sorted, deduplicated', () => {
    const { session } = setup();
    expect(DEFAULT_ALWAYS_INCLUDE_TOOLS).toContain('memory_*');
    expect(session.visibleToolNames()).toEqual(['get_price', 'memory_search', 'memory_write', 'search_tokens']);
    session.activate(['research.deep', 'minara.core']);
    expect(session.visibleToolNames()).toEqual(['get_price', 'memory_search', 'memory_write', 'search_tokens', 'research_report', 'swap_tokens', 'web_search']);
  });

  it('two turns with the same active skills send identical tool lists and blocks', () => {
    const { registry, session } = setup();
    session.activate(['perps.hl', 'minara.core']);
    const turn = () => ({ tools: session.visibleToolNames(), catalog: session.catalog(), prompt: session.promptBlock(), base: registry.buildCatalog() });
    const first = turn();
    const other = setup().session;
    other.activate(['minara.core', 'perps.hl']);
    expect(turn()).toEqual(first);
    expect(JSON.stringify({ tools: other.visibleToolNames(), catalog: other.catalog(), prompt: other.promptBlock() })).toBe(
      JSON.stringify({ tools: first.tools, catalog: first.catalog, prompt: first.prompt }),
    );
  });

  it('filters to the allowed tool sets, explicitly or from the ambient context', () => {
    const { tools, session } = setup();
    session.activate(['minara.core', 'research.deep']);
    expect(session.visibleToolNames({ allowedToolSets: ['read', 'memory', 'web'] })).toEqual(['get_price', 'memory_search', 'memory_write', 'search_tokens', 'web_search']);
    const ctx = createToolCallContext({ sessionId: 's', source: 'cron', allowedToolSets: ['read'] });
    expect(tools.runInContext(ctx, () => session.visibleToolNames())).toEqual(['get_price', 'search_tokens']);
  });

  it('includes the meta-tools once they are registered', async () => {
    const { createSkillMetaTools } = await import('@minara/agent');
    const { tools, registry, session } = setup();
    tools.register(createSkillMetaTools({ skills: registry, session }).all);
    expect(session.visibleToolNames().slice(0, 3)).toEqual(['activate_skills', 'get_price', 'memory_search']);
    expect(session.visibleToolNames()).toContain('tool_invoke');
  });
});

describe('signals', () => {
  const signal = parseSignalContext({
    source: 'cron',
    signal_id: 'btc_drop_5pct',
    asset: { symbol: 'BTC', asset_class: 'crypto_major' },
    severity: 'warn',
    preload_skills: ['market.watch', 'transfer.out', 'workspace.e2b', 'nope'],
    suggested_stages: ['evaluate'],
    trace_id: 't_abc123',
  });

  it('validates the payload and names bad fields', () => {
    expect(() => parseSignalContext({ source: 'pager', signal_id: '' })).toThrow(/source: .*; signal_id: /);
    expect(renderSignalBlock(signal)).toBe('## Signal\nsource: cron\nsignal_id: btc_drop_5pct\nasset: BTC (crypto_major)\nseverity: warn\nsuggested_stages: evaluate\ntrace_id: t_abc123');
  });

  it('preloads skills without a model call, skipping unknown and refused ids', () => {
    const records: SkillActivationRecord[] = [];
    const { session } = setup(records);
    const r = applySignalPreload(session, signal);
    expect(r.activation?.active).toEqual(['market.watch', 'transfer.out']);
    expect(r.skipped.map((s) => s.id)).toEqual(['workspace.e2b', 'nope']);
    expect(records[0]).toMatchObject({ via: 'signal', source: 'cron', traceId: 't_abc123' });
  });

  it('a preload never bypasses the tier gate', async () => {
    const log: string[] = [];
    const { financeTools } = await import('./helpers');
    const { createToolRegistry } = await import('@minara/agent');
    const tools = createToolRegistry({ tools: financeTools(log) });
    const registry = createSkillRegistry({ skills, tools, env: {} });
    const session = createSkillSession({ registry });
    applySignalPreload(session, signal);
    expect(session.visibleToolNames()).toContain('withdraw');
    const ctx = createToolCallContext({ sessionId: 's', source: 'cron', traceId: 't_abc123' });
    const out = parse(await tools.dispatch('withdraw', { address: '0xabc', amount: 5, confirm: true }, { context: ctx }));
    expect(out).toMatchObject({ ok: false, code: 'MANUAL_ONLY_AUTONOMOUS' });
    expect(log).toEqual([]);
  });
});

describe('createSkillSessionStore', () => {
  it('keeps one session per conversation', () => {
    const { registry } = setup();
    const store = createSkillSessionStore({ registry });
    store.get('a').activate(['perps.hl']);
    expect(store.get('a').activeIds()).toEqual(['perps.hl']);
    expect(store.get('b').activeIds()).toEqual([]);
    expect(store.delete('a')).toBe(true);
    expect(store.get('a').activeIds()).toEqual([]);
  });
});
