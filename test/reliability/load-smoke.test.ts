import { describe, expect, it } from 'vitest';
import { runLoad } from '../../bench/reliability/load-run';

// The 10 s smoke version of `npm run bench -- reliability`: loopback only, bounded in time and count.
describe('gateway under load (10 s smoke)', () => {
  it('no 5xx, no lost or duplicated execution', async () => {
    const r = await runLoad({ seconds: 10, connections: 20 });
    console.log(JSON.stringify(r));
    expect(r.requests).toBeGreaterThan(0);
    expect(r.status5xx).toBe(0);
    expect(r.errors).toBe(0);
    expect(r.approvalsDecided).toBeGreaterThan(0);
    expect(r.duplicatedExecutions).toBe(0);
    expect(r.lostExecutions).toBe(0);
    expect(r.executions).toBe(r.approvalsDecided);
    // Memory after load is measured by the bench with --expose-gc (live heap); RSS here keeps freed pages.
  }, 60_000);
});
