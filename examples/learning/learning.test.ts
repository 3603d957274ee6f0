import { describe, expect, it } from 'vitest';
import { main } from './index';

describe('examples/learning', () => {
  it('a methodology graduates by the operator\'s call, the losing one is quarantined, and the next prompt holds only the first', async () => {
    const { methodologies, learnedBlock, page, log } = await main();
    const [btc, doge] = [methodologies.find((m) => m.assetClass === 'crypto_major')!, methodologies.find((m) => m.assetClass === 'crypto_meme')!];
    expect(btc).toMatchObject({ state: 'graduated', uses: 10, wins: 9 });
    expect(btc.confidence).toBeCloseTo(0.596, 3);
    expect(doge).toMatchObject({ state: 'quarantined', uses: 20, wins: 6 });
    expect(log).toContain(`The operator graduates #${btc.id} (proposed at 9/10, Wilson 0.596).`);
    expect(learnedBlock).toContain(`#${btc.id} [graduated · Wilson 0.60 · 9/10 won]`);
    expect(learnedBlock).not.toContain('DOGE right after');
    expect(page).toContain('### Graduated methodologies');
    expect(page).toContain('Buy BTC breakouts');
  }, 60_000);
});
