import type { JobRunRecord, JobStorage } from '../job-types';
import { checkId, checkLimit, invalidArgument, notFound } from './checks';
import type { SqliteHandle, SqliteMigration } from './handle';
import { opt } from './rows';

/**
 * Migrations of the `jobs` domain. Append new versions; never edit one that has shipped.
 *
 * v1 — `job_runs`: one row per (job, slot), UNIQUE, so two processes on one file cannot both run a slot.
 */
export const jobMigrations: readonly SqliteMigration[] = [
  {
    domain: 'jobs',
    version: 1,
    name: 'background job runs, one per job and slot',
    up(db) {
      db.exec(`
        CREATE TABLE job_runs (
          id          INTEGER PRIMARY KEY AUTOINCREMENT,
          job_id      TEXT NOT NULL,
          slot        TEXT NOT NULL,
          owner       TEXT NOT NULL,
          attempt     INTEGER NOT NULL DEFAULT 1,
          started_at  TEXT NOT NULL,
          lease_until TEXT NOT NULL,
          outcome     TEXT NOT NULL CHECK (outcome IN ('running', 'ok', 'failed', 'skipped')),
          ended_at    TEXT,
          error       TEXT,
          detail      TEXT,
          UNIQUE (job_id, slot)
        );
        CREATE INDEX job_runs_recent ON job_runs (job_id, id DESC);
        CREATE INDEX job_runs_running ON job_runs (outcome, lease_until) WHERE outcome = 'running';
      `);
    },
  },
];

interface RunRow {
  id: number; job_id: string; slot: string; owner: string; attempt: number; started_at: string; lease_until: string;
  outcome: JobRunRecord['outcome']; ended_at: string | null; error: string | null; detail: string | null;
}

const toRun = (r: RunRow): JobRunRecord => ({
  id: r.id, jobId: r.job_id, slot: r.slot, owner: r.owner, attempt: r.attempt, startedAt: r.started_at, leaseUntil: r.lease_until, outcome: r.outcome,
  ...opt('endedAt', r.ended_at), ...opt('error', r.error), ...opt('detail', r.detail),
});

const OUTCOMES = new Set(['running', 'ok', 'failed', 'skipped']);

/** The `jobs` domain on SQLite: claims are one `BEGIN IMMEDIATE` transaction each. */
export function createSqliteJobStorage(handle: SqliteHandle): JobStorage {
  const byId = (id: number) => handle.prepare('SELECT * FROM job_runs WHERE id = ?').get(id) as RunRow | undefined;
  return {
    async claimRun({ jobId, slot, owner, now, leaseUntil }) {
      checkId('jobs.claimRun', 'jobId', jobId);
      checkId('jobs.claimRun', 'owner', owner);
      return handle.write('jobs.claimRun', () => {
        const existing = handle.prepare('SELECT * FROM job_runs WHERE job_id = ? AND slot = ?').get(jobId, slot) as RunRow | undefined;
        if (existing === undefined) {
          const info = handle
            .prepare("INSERT INTO job_runs (job_id, slot, owner, attempt, started_at, lease_until, outcome) VALUES (?, ?, ?, 1, ?, ?, 'running')")
            .run(jobId, slot, owner, now, leaseUntil);
          return toRun(byId(Number(info.lastInsertRowid))!);
        }
        if (existing.outcome !== 'running' || existing.lease_until >= now) return undefined;
        handle
          .prepare('UPDATE job_runs SET owner = ?, attempt = attempt + 1, started_at = ?, lease_until = ? WHERE id = ?')
          .run(owner, now, leaseUntil, existing.id);
        return toRun(byId(existing.id)!);
      });
    },
    async renewRun(id, owner, leaseUntil) {
      return handle.write('jobs.renewRun', () => handle.prepare("UPDATE job_runs SET lease_until = ? WHERE id = ? AND owner = ? AND outcome = 'running'").run(leaseUntil, id, owner).changes === 1);
    },
    async finishRun(id, owner, result) {
      if (!OUTCOMES.has(result.outcome) || (result.outcome as string) === 'running') throw invalidArgument('jobs.finishRun', `outcome must be ok, failed or skipped, got ${JSON.stringify(result.outcome)}`);
      return handle.write('jobs.finishRun', () => {
        const changed = handle
          .prepare("UPDATE job_runs SET outcome = ?, ended_at = ?, error = ?, detail = ? WHERE id = ? AND owner = ? AND outcome = 'running'")
          .run(result.outcome, result.endedAt, result.error ?? null, result.detail ?? null, id, owner).changes;
        if (changed !== 1) throw notFound('jobs.finishRun', 'running job run', String(id), ` (not held by ${owner})`);
        return toRun(byId(id)!);
      });
    },
    async listRuns(query = {}) {
      const limit = checkLimit('jobs.listRuns', query.limit, 50);
      if (query.outcome !== undefined && !OUTCOMES.has(query.outcome)) throw invalidArgument('jobs.listRuns', `outcome must be one of running, ok, failed, skipped, got ${JSON.stringify(query.outcome)}`);
      const where: string[] = [];
      const args: unknown[] = [];
      if (query.jobId !== undefined) {
        where.push('job_id = ?');
        args.push(query.jobId);
      }
      if (query.outcome !== undefined) {
        where.push('outcome = ?');
        args.push(query.outcome);
      }
      const sql = `SELECT * FROM job_runs${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
      return (handle.read('jobs.listRuns', () => handle.prepare(sql).all(...args, limit)) as RunRow[]).map(toRun);
    },
    async interruptedRuns(now) {
      return (handle.read('jobs.interruptedRuns', () => handle.prepare("SELECT * FROM job_runs WHERE outcome = 'running' AND lease_until < ? ORDER BY id").all(now)) as RunRow[]).map(toRun);
    },
  };
}
