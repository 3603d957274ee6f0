import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { MinaraError } from '../../errors/minara-error';
import type { JobStorage } from '../../storage/job-types';
import { canonicalHash, canonicalJson } from './canonical-json';

/** One backtest of a sweep: a point of the parameter grid, a seed and a window. */
export interface SweepCell {
  /** Stable id (hash of params, seed and window): the job slot, so every process names the same cell alike. */
  readonly id: string;
  readonly params: Readonly<Record<string, unknown>>;
  readonly seed: number;
  readonly window: Readonly<Record<string, unknown>>;
}

/** Options of {@link planSweep}. */
export interface SweepPlanOptions {
  /** Parameter name → the values to try (the grid is their cartesian product). */
  readonly grid: Readonly<Record<string, readonly unknown[]>>;
  /** @default [1] */
  readonly seeds?: readonly number[] | undefined;
  /** Windows (whatever the cell runner understands, e.g. `{ start, bars }`). @default [{}] */
  readonly windows?: ReadonlyArray<Readonly<Record<string, unknown>>> | undefined;
}

/** Every cell of a grid × seeds × windows, in a stable order. */
export function planSweep(options: SweepPlanOptions): SweepCell[] {
  const names = Object.keys(options.grid).sort();
  for (const n of names) {
    const values = options.grid[n];
    if (!Array.isArray(values) || values.length === 0) throw new MinaraError('INVALID_ARGUMENT', `sweep grid.${n}: expected a non-empty array of values`);
  }
  let points: Array<Record<string, unknown>> = [{}];
  for (const n of names) points = points.flatMap((p) => options.grid[n]!.map((v) => ({ ...p, [n]: v })));
  const seeds = options.seeds ?? [1];
  const windows = options.windows ?? [{}];
  const cells: SweepCell[] = [];
  for (const window of windows) for (const seed of seeds) for (const params of points) cells.push({ id: canonicalHash({ params, seed, window }).slice(0, 16), params, seed, window });
  return cells;
}

/** Options of {@link runSweepWorker}. */
export interface SweepWorkerOptions {
  /** The job storage every worker shares (PostgreSQL for several processes; any storage for one). */
  readonly jobs: JobStorage;
  /** Names the sweep: its cells are runs of the job `backtest-sweep:<sweepId>`. */
  readonly sweepId: string;
  readonly cells: readonly SweepCell[];
  /** Runs one cell's backtest and returns its metrics (a small object: it is stored as the run's detail). */
  readonly runCell: (cell: SweepCell) => Promise<Readonly<Record<string, unknown>>>;
  /** @default `<host>:<pid>:<random>` */
  readonly owner?: string | undefined;
  /** How long a claim holds before another worker may take the cell over (a crashed worker). @default 10 minutes */
  readonly leaseMs?: number | undefined;
  readonly now?: (() => Date) | undefined;
}

/** What one worker did. */
export interface SweepWorkerResult {
  readonly owner: string;
  readonly ran: readonly string[];
  readonly failed: readonly string[];
  /** Cells another worker held or had finished. */
  readonly skipped: readonly string[];
}

/**
 * One worker of a sweep: each cell is a run of the job `backtest-sweep:<sweepId>` with the cell's id as its slot,
 * claimed through the job runner's storage (`claimRun`: atomic across processes on PostgreSQL), so however many
 * workers run the same plan, each cell runs exactly once; a worker that dies leaves its claim to expire and be taken
 * over. Start the same call in as many processes as you like.
 */
export async function runSweepWorker(options: SweepWorkerOptions): Promise<SweepWorkerResult> {
  const { jobs, sweepId, cells, runCell, leaseMs = 600_000, now = () => new Date() } = options;
  const owner = options.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const jobId = `backtest-sweep:${sweepId}`;
  const ran: string[] = [];
  const failed: string[] = [];
  const skipped: string[] = [];
  for (const cell of cells) {
    const at = now();
    const claim = await jobs.claimRun({ jobId, slot: cell.id, owner, now: at.toISOString(), leaseUntil: new Date(at.getTime() + leaseMs).toISOString() });
    if (!claim) {
      skipped.push(cell.id);
      continue;
    }
    try {
      const metrics = await runCell(cell);
      await jobs.finishRun(claim.id, owner, { endedAt: now().toISOString(), outcome: 'ok', detail: canonicalJson({ cell, metrics }) });
      ran.push(cell.id);
    } catch (error) {
      await jobs.finishRun(claim.id, owner, { endedAt: now().toISOString(), outcome: 'failed', error: (error as Error).message, detail: canonicalJson({ cell }) });
      failed.push(cell.id);
    }
  }
  return { owner, ran, failed, skipped };
}

/** One row of a sweep's results table. */
export interface SweepRow {
  readonly cell: SweepCell;
  readonly owner: string;
  readonly attempt: number;
  readonly outcome: string;
  readonly metrics: Readonly<Record<string, unknown>> | null;
  readonly error: string | null;
}

/** The sweep's results in one table (every finished cell, whichever worker ran it), in plan order when given. */
export async function sweepResults(jobs: JobStorage, sweepId: string, cells?: readonly SweepCell[]): Promise<SweepRow[]> {
  const runs = await jobs.listRuns({ jobId: `backtest-sweep:${sweepId}`, limit: 100_000 });
  const rows = runs
    .filter((r) => r.outcome !== 'running')
    .map((r) => {
      const detail = r.detail ? (JSON.parse(r.detail) as { cell: SweepCell; metrics?: Record<string, unknown> }) : undefined;
      return { cell: detail?.cell ?? { id: r.slot, params: {}, seed: 0, window: {} }, owner: r.owner, attempt: r.attempt, outcome: r.outcome, metrics: detail?.metrics ?? null, error: r.error ?? null };
    });
  if (!cells) return rows.sort((a, b) => a.cell.id.localeCompare(b.cell.id));
  const order = new Map(cells.map((c, i) => [c.id, i]));
  return rows.sort((a, b) => (order.get(a.cell.id) ?? 1e9) - (order.get(b.cell.id) ?? 1e9));
}
