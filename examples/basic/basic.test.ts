import { describe, expect, it } from 'vitest';
import { main } from './index';

describe('examples/basic', () => {
  it('runs one turn offline with the scripted model', async () => {
    const logged: string[] = [];
    const { text, events } = await main({ log: (s) => logged.push(s) });
    expect(text).toMatch(/^ETH is at \$\d+\.\d{2} on the simulated market\.$/);
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({ toolName: 'get_price', output: { ok: true, data: { symbol: 'ETH', simulated: true } } });
    expect(events.at(-1)).toMatchObject({ type: 'turn-end', stopReason: 'finished' });
    expect(logged.join('')).toContain('[tool] get_price {"symbol":"ETH"}');
  });
});
