import { createApp, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

// memory.md: `user_explicit` marks what is saved after the person said "remember this". The runtime decides it from
// the person's own words in the turn; the model cannot claim a source.
describe('memory source user_explicit is decided by the runtime', () => {
  const write = (content: string, metadata?: Record<string, unknown>) => ({ toolCalls: [{ toolName: 'memory_write', input: { category: 'preference', content, ...(metadata ? { metadata } : {}) } }] });

  it('marks user_explicit only when the person asked to remember; the model cannot claim user_manual or user_explicit', async () => {
    const storage = createInMemoryStorage();
    const model = createScriptedModel([
      write('trades only on weekends'), { text: 'Noted.' },
      write('likes ETH', { source: 'user_manual', why: 'inferred' }), { text: 'Ok.' },
      write('prefers limit orders', { source: 'user_explicit' }), { text: 'Ok.' },
      write('asked about memory'), { text: 'I remember that.' },
      write('wants a weekly digest'), { text: 'Will do.' },
    ]);
    const app = await createApp({ storage, model, userId: 'u1', workspace: false, env: { MINARA_EXTRACTION: 'disabled' }, logger: silentLogger });
    try {
      await app.runtime.generate({ sessionId: 's1', message: 'Please remember this: I only trade on weekends.' });
      await app.runtime.generate({ sessionId: 's1', message: 'what is the ETH price?' });
      await app.runtime.generate({ sessionId: 's1', message: 'I think limit orders are better' });
      await app.runtime.generate({ sessionId: 's1', message: 'Do you remember what I said about weekends?' });
      await app.runtime.generate({ sessionId: 's2', message: 'Remember that I want a weekly digest', source: 'cron' });
      const rows = await app.memory.read({ category: 'preference' });
      const byContent = Object.fromEntries(rows.map((r) => [r.content, r]));
      expect(byContent['trades only on weekends']?.source).toBe('user_explicit');
      expect(byContent['likes ETH']?.source).toBe('agent_recorded');
      expect(byContent['likes ETH']?.metadata).toEqual({ why: 'inferred' });
      expect(byContent['prefers limit orders']?.source).toBe('agent_recorded');
      expect(byContent['asked about memory']?.source).toBe('agent_recorded');
      // An autonomous turn is not the person's words, whatever its text says.
      expect(byContent['wants a weekly digest']?.source).toBe('agent_recorded');
      model.assertConsumed();
    } finally {
      await app.close();
    }
  });

  it.each([
    ['remember I like short answers', true],
    ["Don't forget my stop loss is 5%", true],
    ['keep in mind that I hold SOL long term', true],
    ['note that I never use leverage', true],
    ['save this for later: DCA 100 USDC weekly', true],
    ['Ｒｅｍｅｍｂｅｒ this', true],
    ['do you remember my risk level?', false],
    ['what do you remember about me', false],
    ["I can't remember the ticker", false],
    ['I remember when BTC was 20k', false],
    ['what is the price of ETH', false],
    ['Do you remember my risk level? Also remember that I prefer SOL.', true],
  ])('"%s" asks to remember: %s', async (message, asked) => {
    const storage = createInMemoryStorage();
    const model = createScriptedModel([write('x'), { text: 'ok' }]);
    const app = await createApp({ storage, model, userId: 'u1', workspace: false, env: { MINARA_EXTRACTION: 'disabled' }, logger: silentLogger });
    try {
      await app.runtime.generate({ sessionId: 's', message });
      const [row] = await app.memory.read({ category: 'preference' });
      expect(row?.source).toBe(asked ? 'user_explicit' : 'agent_recorded');
    } finally {
      await app.close();
    }
  });
});
