import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@minara/agent';
import { planSweep, runSweepWorker, sweepResults } from '@minara/agent/backtest';
import { createPostgresStorage } from '@minara/agent/postgres';
import { createInMemoryStorage } from '@minara/agent/testing';
import { realComponent } from '../../support/real-component';
import { freshSchema, realServerUrl, serverBinariesAvailable, startRealPostgres, type RealPostgres } from '../../postgres/support';

describe('backtest sweeps', () => {
  it('plans grid × seeds × windows with stable ids; names a bad grid', () => {
    const cells = planSweep({ grid: { slow: [20, 30], fast: [3, 5] }, seeds: [1, 2], windows: [{ bars: 100 }, { bars: 200 }] });
    expect(cells).toHaveLength(16);
    expect(new Set(cells.map((c) => c.id)).size).toBe(16);
    expect(planSweep({ grid: { fast: [3, 5], slow: [20, 30] }, seeds: [1, 2], windows: [{ bars: 100 }, { bars: 200 }] }).map((c) => c.id)).toEqual(cells.map((c) => c.id));
    expect(() => planSweep({ grid: { fast: [] } })).toThrow(/grid.fast/);
  });

  it('workers on one storage run each cell once; a failing cell is recorded as failed; results in one table', async () => {
    const storage = createInMemoryStorage();
    const cells = planSweep({ grid: { x: [1, 2, 3] } });
    const runCell = async (c: (typeof cells)[number]) => {
      if (c.params.x === 3) throw new Error('boom');
      return { y: Number(c.params.x) * 2 };
    };
    const a = await runSweepWorker({ jobs: storage.jobs, sweepId: 's', cells, runCell, owner: 'a' });
    const b = await runSweepWorker({ jobs: storage.jobs, sweepId: 's', cells, runCell, owner: 'b' });
    expect(a.ran).toHaveLength(2);
    expect(a.failed).toHaveLength(1);
    expect(b.ran).toEqual([]);
    expect(b.skipped).toHaveLength(3);
    const rows = await sweepResults(storage.jobs, 's', cells);
    expect(rows.map((r) => [r.cell.params.x, r.outcome, r.metrics?.y ?? null])).toEqual([[1, 'ok', 2], [2, 'ok', 4], [3, 'failed', null]]);
  });
});

const available = realComponent('PostgreSQL server binaries (initdb, pg_ctl, postgres)', serverBinariesAvailable(), 'install PostgreSQL 15+ server binaries on PATH');
let own: Promise<RealPostgres> | undefined;
afterAll(async () => {
  if (own) (await own).stop();
});

describe.runIf(available)('a sweep across two processes on PostgreSQL', () => {
  it('each cell runs exactly once between the two workers; the results are one table', async () => {
    const url = realServerUrl() ?? (await (own ??= startRealPostgres())).url;
    const schema = freshSchema('sweep');
    const storage = await createPostgresStorage({ connectionString: url, schema, logger: silentLogger });
    const worker = () =>
      new Promise<{ owner: string; ran: string[]; skipped: string[]; failed: string[] }>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'sweep-worker.ts'), url, schema, 'grid-1'], { cwd: path.join(import.meta.dirname, '..', '..', '..'), stdio: ['ignore', 'pipe', 'inherit'] });
        const lines = createInterface({ input: child.stdout! });
        lines.on('line', (l) => {
          if (l.startsWith('done ')) resolve(JSON.parse(l.slice(5)));
        });
        child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`worker exited with ${code}`))));
      });
    const [a, b] = await Promise.all([worker(), worker()]);
    const cells = planSweep({ grid: { fast: [3, 5, 8], slow: [20, 30] }, seeds: [1, 2], windows: [{ bars: 200 }] });
    expect([...a.ran, ...b.ran].sort()).toEqual(cells.map((c) => c.id).sort());
    expect(a.ran.filter((id) => b.ran.includes(id))).toEqual([]);
    const rows = await sweepResults(storage.jobs, 'grid-1', cells);
    expect(rows).toHaveLength(12);
    expect(rows.every((r) => r.outcome === 'ok' && r.attempt === 1 && typeof r.metrics?.totalReturn === 'number')).toBe(true);
    expect(new Set(rows.map((r) => r.owner)).size).toBeGreaterThanOrEqual(1);
    console.log(`sweep: worker A ran ${a.ran.length}, worker B ran ${b.ran.length} of ${cells.length}`);
    await storage.close();
  }, 120_000);
});
