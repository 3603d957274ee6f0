import { describe, expect, it } from 'vitest';
import { createSkillRegistry, defineSkill, MinaraError, SkillDefinitionError, validateSkillDefinition } from '@minara/agent';
import { toolRegistry } from './helpers';

const core = defineSkill({
  id: 'minara.core',
  description: 'Unified Minara API: markets, portfolio, spot trading',
  prompt: 'Use get_price for quotes. Preview every swap before confirming.',
  summary: 'Quotes with get_price; swaps always preview first.',
  toolNames: ['get_price', 'swap_tokens'],
  priority: 20,
  routing: { keywords: ['minara', 'swap', 'price'], lifecycleStages: ['discover', 'decide'], assetClasses: ['crypto_major'] },
});
const research = defineSkill({
  id: 'research.deep',
  description: 'Deep research reports on a token or sector',
  prompt: 'Plan, search, cite.',
  toolNames: ['research_report', 'web_search'],
  priority: 60,
  routing: { keywords: ['research', '研究'], lifecycleStages: ['evaluate'] },
});
const glassnode = defineSkill({
  id: 'onchain.glassnode',
  description: 'On-chain metrics from Glassnode',
  prompt: 'Use glassnode_metric.',
  toolNames: ['glassnode_metric'],
  routing: { keywords: ['on-chain', 'glassnode'] },
  conditions: { requiresEnv: ['GLASSNODE_API_KEY'], requiresTools: ['glassnode_metric'] },
});

describe('defineSkill', () => {
  it('names every bad field at once', () => {
    const bad = { id: 'Bad Id', description: '', prompt: 'x', priority: 300, routing: { keywords: ['ok', 3], lifecycleStages: ['browse'] }, tool_names: ['x'] };
    try {
      defineSkill(bad as never);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(SkillDefinitionError);
      expect(MinaraError.isInstance(e) && e.code).toBe('SKILL_INVALID');
      const msg = (e as Error).message;
      for (const field of ['id:', 'description:', 'priority:', 'routing.keywords[1]:', 'routing.lifecycleStages[0]:', 'tool_names:']) expect(msg).toContain(field);
    }
  });

  it('warns (does not fail) on a long description or prompt', () => {
    const s = defineSkill({ id: 'wordy', description: 'x'.repeat(81), prompt: 'p'.repeat(3500) });
    expect(s.warnings).toHaveLength(2);
    expect(s.warnings[0]).toMatch(/description is 81 characters/);
    expect(s.warnings[1]).toMatch(/prompt is 3500 characters/);
    expect(validateSkillDefinition({ id: 'ok', description: 'fine', prompt: 'fine' })).toEqual([]);
  });

  it('normalises defaults and freezes the result', () => {
    const s = defineSkill({ id: 'min', description: 'd', prompt: 'p' });
    expect(s).toMatchObject({ priority: 50, activation: 'auto', sandbox: false, toolNames: [], routing: { keywords: [] } });
    expect(Object.isFrozen(s)).toBe(true);
  });
});

describe('createSkillRegistry', () => {
  it('rejects an unknown tool name at registration, with close matches', () => {
    const bad = defineSkill({ id: 'typo', description: 'd', prompt: 'p', toolNames: ['get_prices'] });
    expect(() => createSkillRegistry({ skills: [bad], tools: toolRegistry() })).toThrow(/toolNames\[0\]: unknown tool "get_prices" \(did you mean get_price/);
  });

  it('rejects duplicate ids', () => {
    expect(() => createSkillRegistry({ skills: [core, core], tools: toolRegistry() })).toThrow(/duplicate skill id/);
  });

  it('hides a skill whose env keys are missing (and skips its tool check)', () => {
    const reg = createSkillRegistry({ skills: [core, glassnode], tools: toolRegistry(), env: {} });
    expect(reg.has('onchain.glassnode')).toBe(false);
    expect(reg.hidden()).toEqual([{ id: 'onchain.glassnode', reason: 'requires_env:GLASSNODE_API_KEY' }]);
    expect(reg.buildCatalog()).not.toContain('glassnode');
    // With the key but without the tool, it is registered yet dropped at routing time.
    const withKey = createSkillRegistry({ skills: [core, glassnode], tools: toolRegistry(), env: { GLASSNODE_API_KEY: 'k' } });
    expect(withKey.has('onchain.glassnode')).toBe(true);
    expect(withKey.route({ message: 'glassnode on-chain data' }).map((e) => e.id)).not.toContain('onchain.glassnode');
  });

  it('hides by platform and by missing executables', () => {
    const mac = defineSkill({ id: 'mac', description: 'd', prompt: 'p', conditions: { platforms: ['macos'] } });
    const bin = defineSkill({ id: 'bin', description: 'd', prompt: 'p', conditions: { requiresBins: ['ffmpeg'] } });
    const reg = createSkillRegistry({ skills: [mac, bin], tools: toolRegistry(), platform: 'linux', hasBin: () => false });
    expect(reg.hidden()).toEqual([
      { id: 'bin', reason: 'requires_bins:ffmpeg' },
      { id: 'mac', reason: 'platform:linux' },
    ]);
    const ok = createSkillRegistry({ skills: [mac, bin], tools: toolRegistry(), platform: 'darwin', hasBin: (b) => b === 'ffmpeg' });
    expect(ok.list().map((s) => s.id)).toEqual(['bin', 'mac']);
  });

  it('renders a byte-stable unrouted catalog in priority order', () => {
    const a = createSkillRegistry({ skills: [research, core], tools: toolRegistry() });
    const b = createSkillRegistry({ skills: [core, research], tools: toolRegistry() });
    const block = a.buildCatalog();
    expect(block).toBe(b.buildCatalog());
    expect(block).toContain('<available_skills>\n- minara.core: Unified Minara API: markets, portfolio, spot trading\n- research.deep: Deep research reports on a token or sector\n</available_skills>');
    expect(block).toMatchSnapshot();
  });

  it('renders the routed catalog with inline reason hints', () => {
    const reg = createSkillRegistry({ skills: [core, research], tools: toolRegistry() });
    const block = reg.buildRoutedCatalog({ message: 'should I swap ETH? 先研究一下' });
    expect(block).toContain('- minara.core: Unified Minara API: markets, portfolio, spot trading [kw:swap, stage:decide, asset:crypto_major]');
    expect(block).toContain('- research.deep: Deep research reports on a token or sector [kw:研究, stage:evaluate]');
    expect(reg.buildRoutedCatalog({ message: 'should I swap ETH? 先研究一下' }, { limit: 1 })).toContain('- … 1 more (activate by id)');
  });

  it('concatenates prompts for active ids and collects tool whitelists', () => {
    const reg = createSkillRegistry({ skills: [core, research], tools: toolRegistry() });
    const p = reg.promptFor(['research.deep', 'minara.core']);
    expect(p.included).toEqual(['minara.core', 'research.deep']);
    expect(p.text).toBe('## Skill: minara.core\nUse get_price for quotes. Preview every swap before confirming.\n\n## Skill: research.deep\nPlan, search, cite.');
    expect(reg.toolsFor(['research.deep', 'minara.core', 'nope'])).toEqual(['get_price', 'research_report', 'swap_tokens', 'web_search']);
  });

  it('registers late (external skills) and unregisters', () => {
    const reg = createSkillRegistry({ skills: [core], tools: toolRegistry() });
    reg.register(research);
    expect(reg.route({ message: 'research this' })[0]?.id).toBe('research.deep');
    expect(reg.unregister('research.deep')).toBe(true);
    expect(reg.route({ message: 'research this' }).map((e) => e.id)).toEqual(['minara.core']);
  });

  it('requires a tool registry', () => {
    expect(() => createSkillRegistry({ skills: [], tools: undefined as never })).toThrow(/options.tools/);
  });
});
