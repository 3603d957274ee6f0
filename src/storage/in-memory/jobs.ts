import type { JobRunRecord, JobStorage } from '../job-types';
import { checkId, checkLimit, invalidArgument, notFound } from '../sqlite/checks';

const OUTCOMES = new Set(['running', 'ok', 'failed', 'skipped']);

/** The `jobs` domain in memory: same semantics as the SQLite engine (one run per job and slot). */
export function createInMemoryJobStorage(): JobStorage {
  const runs: JobRunRecord[] = [];
  const bySlot = new Map<string, number>();
  let nextId = 1;
  const set = (i: number, run: JobRunRecord) => {
    runs[i] = run;
    return { ...run };
  };
  return {
    async claimRun({ jobId, slot, owner, now, leaseUntil }) {
      checkId('jobs.claimRun', 'jobId', jobId);
      checkId('jobs.claimRun', 'owner', owner);
      const key = `${jobId}\u0000${slot}`;
      const at = bySlot.get(key);
      if (at === undefined) {
        const run: JobRunRecord = { id: nextId++, jobId, slot, owner, attempt: 1, startedAt: now, leaseUntil, outcome: 'running' };
        bySlot.set(key, runs.length);
        runs.push(run);
        return { ...run };
      }
      const existing = runs[at]!;
      if (existing.outcome !== 'running' || existing.leaseUntil >= now) return undefined;
      return set(at, { ...existing, owner, attempt: existing.attempt + 1, startedAt: now, leaseUntil });
    },
    async renewRun(id, owner, leaseUntil) {
      const i = runs.findIndex((r) => r.id === id && r.owner === owner && r.outcome === 'running');
      if (i < 0) return false;
      set(i, { ...runs[i]!, leaseUntil });
      return true;
    },
    async finishRun(id, owner, result) {
      if (!OUTCOMES.has(result.outcome) || (result.outcome as string) === 'running') throw invalidArgument('jobs.finishRun', `outcome must be ok, failed or skipped, got ${JSON.stringify(result.outcome)}`);
      const i = runs.findIndex((r) => r.id === id && r.owner === owner && r.outcome === 'running');
      if (i < 0) throw notFound('jobs.finishRun', 'running job run', String(id), ` (not held by ${owner})`);
      const { error, detail, ...rest } = { ...runs[i]!, ...result };
      return set(i, { ...rest, ...(error !== undefined ? { error } : {}), ...(detail !== undefined ? { detail } : {}) });
    },
    async listRuns(query = {}) {
      const limit = checkLimit('jobs.listRuns', query.limit, 50);
      if (query.outcome !== undefined && !OUTCOMES.has(query.outcome)) throw invalidArgument('jobs.listRuns', `outcome must be one of running, ok, failed, skipped, got ${JSON.stringify(query.outcome)}`);
      return runs
        .filter((r) => (query.jobId === undefined || r.jobId === query.jobId) && (query.outcome === undefined || r.outcome === query.outcome))
        .sort((a, b) => b.id - a.id)
        .slice(0, limit)
        .map((r) => ({ ...r }));
    },
    async interruptedRuns(now) {
      return runs.filter((r) => r.outcome === 'running' && r.leaseUntil < now).map((r) => ({ ...r }));
    },
  };
}
