/**
 * The background runner: slots claimed in storage (one run per slot across processes), takeover of runs a
 * dead process left, overlap skip, backoff, and the run records — with a fake clock.
 */
import { createBackgroundRunner, type BackgroundJob, formatInterval, MinaraError } from '@minara/agent';
import { createInMemoryStorage } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';

const T0 = Date.parse('2026-03-02T00:00:00.000Z');

function clock(start = T0) {
  let t = start;
  return { now: () => new Date(t), advance: (ms: number) => (t += ms), set: (ms: number) => (t = ms) };
}

describe('createBackgroundRunner', () => {
  it('runs an interval job once per slot (aligned to the clock), records each run, and reports its state', async () => {
    const c = clock(T0 + 10_000);
    const storage = createInMemoryStorage();
    const ran: string[] = [];
    const runner = createBackgroundRunner({
      storage, now: c.now, owner: 'p1',
      jobs: [{ id: 'purge', description: 'Purge soft-deleted memories', every: 30 * 60_000, run: ({ slot }) => { ran.push(slot.toISOString()); return 'purged 2'; } }],
    });
    expect(runner.status()).toEqual([{ id: 'purge', description: 'Purge soft-deleted memories', schedule: 'every 30m', nextRunAt: '2026-03-02T00:30:00.000Z', running: false, failures: 0 }]);
    expect(runner.describe()).toBe('background: purge (every 30m, next 00:30 UTC)');
    expect((await runner.tick()).started).toEqual([]);
    for (let i = 0; i < 6; i++) {
      c.advance(15 * 60_000);
      await runner.tick();
      await runner.idle();
    }
    expect(ran).toEqual(['2026-03-02T00:30:00.000Z', '2026-03-02T01:00:00.000Z', '2026-03-02T01:30:00.000Z']);
    const runs = await runner.runs({ jobId: 'purge' });
    expect(runs.map((r) => [r.outcome, r.detail, r.owner])).toEqual([['ok', 'purged 2', 'p1'], ['ok', 'purged 2', 'p1'], ['ok', 'purged 2', 'p1']]);
  });

  it('two runners on one storage (two processes) run each slot once between them', async () => {
    const c = clock();
    const storage = createInMemoryStorage();
    const ran: string[] = [];
    const job = (who: string): BackgroundJob => ({ id: 'report', description: 'Report', every: 60_000, run: async ({ slot }) => { ran.push(`${who}@${slot.toISOString().slice(11, 16)}`); } });
    const a = createBackgroundRunner({ storage, now: c.now, owner: 'a', jobs: [job('a')] });
    const b = createBackgroundRunner({ storage, now: c.now, owner: 'b', jobs: [job('b')] });
    for (let i = 0; i < 5; i++) {
      c.advance(60_000);
      await Promise.all([a.tick(), b.tick()]);
      await Promise.all([a.idle(), b.idle()]);
    }
    expect(ran).toHaveLength(5);
    expect(new Set(ran.map((r) => r.slice(2))).size).toBe(5);
  });

  it('a run a dead process left unfinished is taken over after its lease: not lost, not run twice', async () => {
    const c = clock();
    const storage = createInMemoryStorage();
    let release!: () => void;
    const dead = createBackgroundRunner({
      storage, now: c.now, owner: 'dead',
      jobs: [{ id: 'sync', description: 'Sync', every: 60_000, leaseMs: 5 * 60_000, run: () => new Promise<void>((r) => (release = r)) }],
    });
    c.advance(60_000);
    await dead.tick();
    expect((await storage.jobs.listRuns())[0]).toMatchObject({ owner: 'dead', outcome: 'running' });
    // The process is gone (its runner never finishes); a new one starts later.
    const ran: string[] = [];
    const fresh = createBackgroundRunner({ storage, now: c.now, owner: 'fresh', jobs: [{ id: 'sync', description: 'Sync', every: 60 * 60_000, run: ({ slot, attempt }) => { ran.push(`${slot.toISOString()}#${attempt}`); } }] });
    c.advance(60_000);
    await fresh.tick();
    expect(ran).toEqual([]); // the lease is still live
    c.advance(5 * 60_000);
    await fresh.tick();
    await fresh.idle();
    expect(ran).toEqual(['2026-03-02T00:01:00.000Z#2']);
    const [run] = await storage.jobs.listRuns({ jobId: 'sync' });
    expect(run).toMatchObject({ owner: 'fresh', attempt: 2, outcome: 'ok' });
    // The dead runner's late finish does not overwrite the record.
    release();
    await dead.idle();
    expect((await storage.jobs.listRuns({ jobId: 'sync' }))[0]).toMatchObject({ owner: 'fresh', outcome: 'ok' });
  });

  it('never overlaps a job with itself; a failing job backs off and is reported; skipped runs say why', async () => {
    const c = clock();
    const storage = createInMemoryStorage();
    let release!: () => void;
    let calls = 0;
    const runner = createBackgroundRunner({
      storage, now: c.now, owner: 'p',
      jobs: [
        { id: 'slow', description: 'Slow', every: 60_000, run: () => new Promise<void>((r) => (release = r)) },
        { id: 'flaky', description: 'Flaky', every: 60_000, run: () => { calls++; throw new Error('provider down'); } },
        { id: 'quiet', description: 'Quiet', every: 60_000, run: () => ({ skipped: 'no tasks' }) },
      ],
    });
    c.advance(60_000);
    await runner.tick();
    await new Promise((r) => setTimeout(r, 10)); // flaky and quiet end; slow keeps running
    expect(runner.status().find((j) => j.id === 'flaky')).toMatchObject({ failures: 1, lastError: 'provider down', backoffUntil: '2026-03-02T00:02:00.000Z' });
    // Backoff doubles: 1 minute after one failure, 2 after two. Slots inside it are not run.
    c.advance(60_000);
    const second = await runner.tick();
    expect(second.started).not.toContain('slow'); // still running: never overlapped
    expect(second.started).toContain('flaky');
    await new Promise((r) => setTimeout(r, 10));
    expect(runner.status().find((j) => j.id === 'flaky')).toMatchObject({ failures: 2, backoffUntil: '2026-03-02T00:04:00.000Z' });
    c.advance(60_000);
    expect((await runner.tick()).started).not.toContain('flaky');
    c.advance(60_000);
    expect((await runner.tick()).started).toContain('flaky');
    release();
    await runner.idle();
    expect(calls).toBe(3);
    expect(await runner.runs({ jobId: 'flaky', outcome: 'failed' })).toHaveLength(3);
    expect((await runner.runs({ jobId: 'slow' })).map((r) => r.outcome)).toEqual(['ok']);
    expect((await runner.runs({ jobId: 'quiet' }))[0]).toMatchObject({ outcome: 'skipped', detail: 'no tasks' });
  });

  it('cron jobs run at their times (UTC); bad jobs are refused naming the field', async () => {
    const c = clock(Date.parse('2026-03-02T08:59:30.000Z'));
    const ran: string[] = [];
    const runner = createBackgroundRunner({ storage: createInMemoryStorage(), now: c.now, jobs: [{ id: 'brief', description: 'Morning brief', cron: '0 9 * * *', run: ({ slot }) => { ran.push(slot.toISOString()); } }] });
    c.advance(60_000);
    await runner.tick();
    await runner.idle();
    expect(ran).toEqual(['2026-03-02T09:00:00.000Z']);
    const bad: Array<[Partial<BackgroundJob>, RegExp]> = [
      [{ id: 'Bad Id', every: 60_000 }, /"id" must match/],
      [{ id: 'x', every: 10 }, /"every" must be an integer of at least 1000/],
      [{ id: 'x', every: 60_000, cron: '* * * * *' }, /exactly one of/],
      [{ id: 'x', cron: 'every day' }, /cron "every day"/],
      [{ id: 'brief', every: 60_000 }, /already exists/],
    ];
    for (const [job, message] of bad) {
      expect(() => runner.add({ description: 'd', run: () => undefined, ...job } as BackgroundJob)).toThrow(message);
    }
    expect(() => runner.add({ id: 'y', description: 'd', every: 60_000 } as unknown as BackgroundJob)).toThrow(MinaraError);
    expect(formatInterval(90_000)).toBe('1m30s');
    expect(runner.remove('brief')).toBe(true);
    expect(runner.has('brief')).toBe(false);
  });

  it('stop() aborts running jobs and waits for them', async () => {
    const c = clock();
    let aborted = false;
    const runner = createBackgroundRunner({
      storage: createInMemoryStorage(), now: c.now,
      jobs: [{ id: 'long', description: 'Long', every: 60_000, run: ({ signal }) => new Promise<void>((resolve) => signal.addEventListener('abort', () => { aborted = true; resolve(); })) }],
    });
    runner.start();
    expect(runner.started).toBe(true);
    c.advance(60_000);
    await runner.tick();
    await runner.stop();
    expect(aborted).toBe(true);
    expect(runner.started).toBe(false);
  });
});
