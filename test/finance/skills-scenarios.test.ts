import { describe, expect, it } from 'vitest';
import { createSkillRegistry, createToolRegistry, defineTool, PermissionTier } from '@minara/agent';
import { createFinancePack, createScenarioClassifier, FINANCE_SCENARIOS } from '@minara/agent/finance';
import { createInMemoryStorage } from '@minara/agent/testing';
import { z } from 'zod';
import { setup } from './helpers';

const memoryTools = ['memory_write', 'memory_search', 'memory_read'].map((name) =>
  defineTool({ name, toolSet: 'memory', description: name, inputSchema: z.object({}), permissionTier: PermissionTier.READ_ONLY, execute: () => ({}) }),
);

describe('finance skills', () => {
  it('register cleanly, stay within the size guidance, and route bilingual messages', () => {
    const { skills, pack } = setup();
    expect(pack.skills.map((s) => s.id).sort()).toEqual(['market.watch', 'memory.personal', 'minara.autopilot', 'minara.core', 'minara.perps']);
    for (const s of pack.skills) {
      expect(s.warnings, s.id).toEqual([]);
      expect(s.description.length).toBeLessThanOrEqual(80);
      expect(s.prompt.length).toBeLessThan(3072);
    }
    expect(skills.route({ message: 'long BTC 3x' })[0]!.id).toBe('minara.perps');
    expect(skills.route({ message: '帮我开 3 倍 BTC 多单, 做多' })[0]!.id).toBe('minara.perps');
    expect(skills.route({ message: 'swap 100 USDC to ETH' })[0]!.id).toBe('minara.core');
    expect(skills.route({ message: '我的持仓和余额' })[0]!.id).toBe('minara.core');
    expect(skills.route({ message: 'BTC dropped 5%, alert', source: 'cron' })[0]!.id).toBe('market.watch');
  });

  it('a skill whose tools are missing is hidden (memory.personal without memory tools)', () => {
    const { skills } = setup();
    expect(skills.route({ message: 'remember that I prefer small trades' }).map((r) => r.id)).not.toContain('memory.personal');
    const storage = createInMemoryStorage();
    const pack = createFinancePack({ storage });
    const tools = createToolRegistry({ tools: [...pack.tools, ...memoryTools], hooks: pack.hooks, storage });
    const withMemory = createSkillRegistry({ skills: pack.skills, tools, env: {} });
    expect(withMemory.route({ message: 'remember that I prefer small trades, 记住' }).map((r) => r.id)).toContain('memory.personal');
  });
});

describe('scenario classifier', () => {
  const c = createScenarioClassifier();

  it('picks at most one scenario per turn, with playbook and preloads, in English and Chinese', () => {
    const cases: Array<[string, string]> = [
      ['what is the price of BTC', 'SCENARIO_PRICE_CHECK'],
      ['BTC 现在多少钱', 'SCENARIO_PRICE_CHECK'],
      ['swap 100 USDC to ETH', 'SCENARIO_SPOT_TRADE'],
      ['用 100 USDC 买 ETH', 'SCENARIO_SPOT_TRADE'],
      ['long BTC 1000 USD at 3x', 'SCENARIO_PERPS_TRADE'],
      ['开 3 倍 BTC 多单', 'SCENARIO_PERPS_TRADE'],
      ['show my portfolio and P&L', 'SCENARIO_PORTFOLIO_REVIEW'],
      ['分析一下 ETH', 'SCENARIO_TOKEN_RESEARCH'],
      ['send 100 USDC to 0xabc', 'SCENARIO_TRANSFER_OUT'],
      ['紧急停止所有交易', 'SCENARIO_EMERGENCY'],
    ];
    for (const [msg, id] of cases) {
      const r = c.classify(msg, { source: 'user' });
      expect(r?.id, msg).toBe(id);
      expect(r!.playbook.length).toBeGreaterThan(20);
      expect(r!.preloadSkills.length).toBeGreaterThan(0);
      expect(r!.reasons.length).toBeGreaterThan(0);
    }
    expect(c.classify('hello, how are you?')).toBeUndefined();
  });

  it('is deterministic, source-aware and breaks ties by id', () => {
    expect(c.classify('BTC dropped 5%', { source: 'cron' })).toEqual(c.classify('BTC dropped 5%', { source: 'cron' }));
    expect(c.classify('BTC dropped 5% in an hour', { source: 'cron' })!.id).toBe('SCENARIO_MARKET_ALERT');
    // transfers are never a cron scenario
    expect(c.classify('send 100 USDC to 0xabc', { source: 'cron' })?.id).not.toBe('SCENARIO_TRANSFER_OUT');
    const tie = createScenarioClassifier({
      scenarios: [
        { id: 'SCENARIO_B', title: 'b', keywords: ['foo'], skills: [], examples: [], playbook: 'b' },
        { id: 'SCENARIO_A', title: 'a', keywords: ['foo'], skills: [], examples: [], playbook: 'a' },
      ],
    });
    expect(tie.classify('foo')!.id).toBe('SCENARIO_A');
    expect(() => createScenarioClassifier({ scenarios: [{ ...FINANCE_SCENARIOS[0]!, id: 'bad' }] })).toThrow(/SCENARIO_NAME/);
  });

  it('matches the runtime ScenarioClassifier contract', () => {
    const { pack } = setup();
    const r = pack.scenarios.classify('buy 50 USD of ETH', { source: 'user' })!;
    expect(Object.keys(r).sort()).toEqual(['id', 'playbook', 'preloadSkills', 'reasons', 'score']);
    expect(r.preloadSkills).toEqual(['minara.core']);
  });
});
