/**
 * The research skills in the L0 router, beside the finance skills they ship with: each is picked (ranked first, on
 * a keyword) for the phrasings a user would use, and not for near misses that belong to another skill or none.
 */
import { z } from 'zod';
import {
  createResearchSkills, createSkillRegistry, createToolRegistry, defineTool, PermissionTier, RESEARCH_SKILL_DEFINITIONS, type ToolEntry,
} from '@minara/agent';
import { FINANCE_SKILL_DEFINITIONS } from '@minara/agent/finance';
import { createInMemoryStorage } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

const names = [...new Set([...FINANCE_SKILL_DEFINITIONS, ...RESEARCH_SKILL_DEFINITIONS].flatMap((d) => [...(d.toolNames ?? []), ...(d.conditions?.requiresTools ?? [])]))];
const stub = (name: string): ToolEntry =>
  defineTool({ name, toolSet: 'read', description: name, inputSchema: z.object({}), permissionTier: PermissionTier.READ_ONLY, execute: () => ({}) });

function registry() {
  const tools = createToolRegistry({ storage: createInMemoryStorage(), tools: names.map(stub) });
  return createSkillRegistry({ tools, env: {}, skills: [...FINANCE_SKILL_DEFINITIONS, ...createResearchSkills(new Set(names))] });
}
const skills = registry();
/** The skill the router puts first for a message, when it matched on something (not just the fallback order). */
const top = (message: string) => skills.route({ message }).find((e) => e.reasons.some((r) => r.startsWith('kw:')))?.id;
const matchedBy = (message: string, id: string) => skills.route({ message }).find((e) => e.id === id)?.reasons.filter((r) => r.startsWith('kw:')) ?? [];

describe('research skills in the router', () => {
  it('deep-research: research, due diligence, sources', () => {
    for (const m of [
      'Research the Ethereum Pectra upgrade and write me a report with sources',
      'Can you do some due diligence on the Pendle protocol?',
      'dig into what happened with the FTX estate distributions',
      'find sources on stablecoin regulation in the EU',
      '帮我调研一下 Solana 的验证者经济',
    ]) expect(top(m), m).toBe('deep-research');
  });

  it('analysis: an outlook or a setup on a token, through the user\'s rules', () => {
    for (const m of ['Analyze SOL for me', "What's your outlook on ETH this week?", 'what do my rules say about BTC here?', 'Is AVAX setting up? give me a technical analysis', '分析一下 BTC 的走势']) {
      expect(top(m), m).toBe('analysis');
    }
  });

  it('code-analysis: computations, indicators, backtests', () => {
    for (const m of [
      'Backtest a 20/50 EMA crossover on BTC over the last 500 hours',
      'calculate the 30-day correlation between ETH and SOL',
      'compute the max drawdown and Sharpe of my equity curve',
      "what's the RSI and MACD on the 4h chart for ETH?",
      '帮我回测一下这个均线策略',
    ]) expect(top(m), m).toBe('code-analysis');
  });

  it('memory.alerts: asks to be told when something happens, with market.watch (monitoring) right behind it', () => {
    for (const m of ['Alert me if BTC drops below 60k', 'let me know when ETH moves 5%', 'cancel alert 3', 'show my alerts', 'BTC 跌破 6 万提醒我']) {
      expect(top(m), m).toBe('memory.alerts');
    }
    expect(skills.route({ message: 'Alert me if BTC drops below 60k' }).slice(0, 2).map((e) => e.id)).toEqual(['memory.alerts', 'market.watch']);
    // Monitoring without a request to be told stays market.watch.
    expect(top('watch the market and monitor for a pump')).toBe('market.watch');
  });

  it('near misses go elsewhere or nowhere', () => {
    // Trading and prices are minara.core / minara.perps.
    expect(top('buy 100 USD of ETH')).toBe('minara.core');
    expect(top('what is the price of BTC')).toBe('minara.core');
    expect(top('long BTC 3x with 500 USD')).toBe('minara.perps');
    // "report" alone, a P&L report, is not research; "backtest" is not research either.
    expect(matchedBy('show me my pnl report', 'deep-research')).toEqual([]);
    expect(top('backtest this idea and research the sources')).not.toBe('deep-research');
    // Analysis words inside other words, or a plain price question, do not pick analysis.
    expect(matchedBy('the analyst price target for NVDA', 'analysis')).toEqual([]);
    expect(matchedBy('what is the price of SOL', 'analysis')).toEqual([]);
    // Computing is not the same as an amount to trade; a chat about Python the snake is caught by nothing useful.
    expect(matchedBy('swap 50 USDC to SOL', 'code-analysis')).toEqual([]);
    expect(matchedBy('remember that I prefer limit orders', 'code-analysis')).toEqual([]);
    // Alerts: a question about a drop is monitoring, not a request to be alerted.
    expect(matchedBy('why did BTC drop today?', 'memory.alerts')).toEqual([]);
    expect(matchedBy('remember I never trade memecoins', 'memory.alerts')).toEqual([]);
  });

  it('skills whose required tool is missing are hidden; optional tools are dropped from the list', () => {
    const tools = createToolRegistry({ storage: createInMemoryStorage(), tools: ['web_fetch', 'create_research_report', 'get_price'].map(stub) });
    const minimal = createSkillRegistry({ tools, env: {}, skills: createResearchSkills(new Set(['web_fetch', 'create_research_report', 'get_price'])) });
    expect(minimal.get('deep-research')!.toolNames).toEqual(['web_fetch', 'create_research_report']);
    expect(minimal.route({ message: 'research the Pectra upgrade' })[0]!.id).toBe('deep-research');
    expect(minimal.route({ message: 'backtest an EMA crossover' }).map((e) => e.id)).not.toContain('code-analysis');
  });
});
