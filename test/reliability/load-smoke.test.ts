import { describe, expect, it } from 'vitest';
import { runLoad } from '../../bench/reliability/load-run';

// The 10 s smoke version of `npm run bench -- reliability`: loopback only, bounded in time and count.
describe('gateway under load (10 s smoke)', () => {
  it('no 5xx, no lost or duplicated execution', async () => {
    const r = await runLoad({ seconds: 10, connections: 20, warmupSeconds: 2 });
    console.log(JSON.stringify(r));
    expect(r.requests).toBeGreaterThan(0);
    expect(r.status5xx).toBe(0);
    expect(r.errors).toBe(0);
    expect(r.approvalsDecided).toBeGreaterThan(0);
    expect(r.duplicatedExecutions).toBe(0);
    expect(r.lostExecutions).toBe(0);
    expect(r.executions).toBe(r.approvalsDecided);
    // The server's memory is measured in its own process; 10 s is too short to judge growth, so it is only reported.
    expect(r.rssAfterMb).toBeGreaterThan(0);
  }, 60_000);
});
