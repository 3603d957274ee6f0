import { describe, expect, it } from 'vitest';
import { main } from './index';

describe('examples/automation', () => {
  it('the scheduled workflow is refused without a grant and runs with one, with no model call; the alert fires once', async () => {
    const { runs, delivered, modelCalls, log } = await main();
    expect(runs.map((r) => r.status)).toEqual(['ok', 'ok', 'failed']);
    expect(runs[2]!.error).toMatch(/GRANT_REQUIRED/);
    expect(modelCalls).toBe(2); // the chat turn that set the alert, and nothing else
    expect(delivered).toHaveLength(1);
    expect(delivered[0]).toMatchObject({ source: 'alert', sessionId: expect.stringMatching(/^alert-1-[0-9a-f]{8}$/) });
    expect(delivered[0]!.text).toMatch(/^ETH is at 2,980 USD, below your alert level of 3,000 USD/);
    expect(log).toContain('09:00 without a grant: run failed (steps[1] "buy": GRANT_REQUIRED)');
  }, 60_000);
});
