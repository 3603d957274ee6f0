import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHROMIUM_PATHS } from '@minara/agent';
import { generateBars, runBacktest, smaCross, writeBacktestReport } from '@minara/agent/backtest';
import { realComponent } from '../support/real-component';

const hasChromium = realComponent('Chromium', CHROMIUM_PATHS.some((p) => existsSync(p)), 'apt-get install -y chromium (Debian), then run the tests again');

describe.skipIf(!hasChromium)('equity.png', () => {
  it('is rendered with headless Chromium, and the same run twice gives the same PNG bytes', async () => {
    const bars = generateBars({ seed: 21, symbols: ['BTC', 'ETH'], bars: 200 });
    const pngs: Buffer[] = [];
    for (let k = 0; k < 2; k++) {
      const dir = mkdtempSync(path.join(tmpdir(), 'bt-png-'));
      const written = await writeBacktestReport(await runBacktest({ bars, strategy: smaCross({ fast: 5, slow: 20 }) }), dir, { png: true });
      expect(written.files).toContain('equity.png');
      pngs.push(readFileSync(path.join(dir, 'equity.png')));
    }
    expect(pngs[0]!.subarray(1, 4).toString()).toBe('PNG');
    expect(pngs[0]!.length).toBeGreaterThan(10_000);
    expect(Buffer.compare(pngs[0]!, pngs[1]!)).toBe(0);
  }, 60_000);
});
