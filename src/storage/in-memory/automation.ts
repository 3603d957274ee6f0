import {
  checkAlertId, checkAlertStatuses, checkAlertTarget, checkNewAlert, checkNewWorkflowRun, checkRunQuery, checkRunStatus, checkSteps, FINISH_STATUSES,
} from '../automation-checks';
import type { AlertRecord, AlertStorage, WorkflowRunRecord, WorkflowRunStorage } from '../automation-types';
import { checkId, checkLimit, notFound } from '../sqlite/checks';

const clone = <T>(value: T): T => structuredClone(value);

/** The `workflows` domain in memory: same semantics as the SQLite engine (one run per workflow and trigger key). */
export function createInMemoryWorkflowRunStorage(): WorkflowRunStorage {
  const runs = new Map<string, WorkflowRunRecord>();
  const byKey = new Map<string, string>();
  const order: string[] = [];
  const held = (id: string, owner: string) => {
    const r = runs.get(id);
    return r !== undefined && r.owner === owner && r.status === 'running' ? r : undefined;
  };
  return {
    async claimRun(run) {
      checkNewWorkflowRun('workflows.claimRun', run);
      const key = `${run.workflowId}\u0000${run.triggerKey}`;
      if (byKey.has(key)) return undefined;
      if (runs.has(run.id)) return undefined;
      const record: WorkflowRunRecord = { ...run, status: 'running', steps: [], skipped: [] };
      runs.set(run.id, record);
      byKey.set(key, run.id);
      order.push(run.id);
      return clone(record);
    },
    async saveSteps(id, owner, steps) {
      checkSteps('workflows.saveSteps', steps);
      const r = held(id, owner);
      if (!r) return false;
      runs.set(id, { ...r, steps: clone(steps) });
      return true;
    },
    async finishRun(id, owner, result) {
      checkRunStatus('workflows.finishRun', 'status', result.status, FINISH_STATUSES);
      checkSteps('workflows.finishRun', result.steps);
      const r = held(id, owner);
      if (!r) throw notFound('workflows.finishRun', 'running workflow run', id, ` (not held by ${owner})`);
      const next: WorkflowRunRecord = {
        ...r, status: result.status, endedAt: result.endedAt, durationMs: result.durationMs, steps: clone(result.steps), skipped: [...result.skipped],
        ...(result.error !== undefined ? { error: result.error } : {}),
      };
      runs.set(id, next);
      return clone(next);
    },
    async getRun(id) {
      checkId('workflows.getRun', 'id', id);
      const r = runs.get(id);
      return r === undefined ? undefined : clone(r);
    },
    async listRuns(query = {}) {
      const limit = checkRunQuery('workflows.listRuns', query);
      const out: WorkflowRunRecord[] = [];
      for (let i = order.length - 1; i >= 0 && out.length < limit; i--) {
        const r = runs.get(order[i]!)!;
        if (query.workflowId !== undefined && r.workflowId !== query.workflowId) continue;
        if (query.userId !== undefined && r.userId !== query.userId) continue;
        if (query.status !== undefined && r.status !== query.status) continue;
        out.push(clone(r));
      }
      return out;
    },
    async expireRuns(now) {
      checkId('workflows.expireRuns', 'now', now);
      let n = 0;
      for (const [id, r] of runs) {
        if (r.status === 'running' && r.leaseUntil < now) {
          runs.set(id, { ...r, status: 'interrupted', endedAt: now, error: 'interrupted: the process running it stopped before it ended (its lease lapsed); not run again' });
          n++;
        }
      }
      return n;
    },
  };
}

/** The `alerts` domain in memory: same semantics as the SQLite engine (a fire is a compare-and-set). */
export function createInMemoryAlertStorage(): AlertStorage {
  const alerts: AlertRecord[] = [];
  let nextId = 1;
  return {
    async create(input) {
      checkNewAlert('alerts.create', input);
      const { basePrice, note, sessionId, ...rest } = input;
      const record: AlertRecord = {
        ...rest, id: nextId++, status: 'active',
        ...(basePrice !== undefined ? { basePrice } : {}), ...(note !== undefined ? { note } : {}), ...(sessionId !== undefined ? { sessionId } : {}),
      };
      alerts.push(record);
      return { ...record };
    },
    async get(userId, id) {
      checkId('alerts.get', 'userId', userId);
      checkAlertId('alerts.get', id);
      const a = alerts.find((x) => x.id === id && x.userId === userId);
      return a === undefined ? undefined : { ...a };
    },
    async list(query) {
      checkId('alerts.list', 'userId', query?.userId);
      const statuses = checkAlertStatuses('alerts.list', query.status);
      const limit = checkLimit('alerts.list', query.limit, 50);
      return alerts
        .filter((a) => a.userId === query.userId && (statuses === undefined || statuses.includes(a.status)))
        .sort((a, b) => b.id - a.id)
        .slice(0, limit)
        .map((a) => ({ ...a }));
    },
    async listActive(query = {}) {
      const limit = checkLimit('alerts.listActive', query.limit, 1000);
      const after = query.afterId === undefined ? 0 : checkAlertId('alerts.listActive', query.afterId);
      return alerts.filter((a) => a.status === 'active' && a.id > after).slice(0, limit).map((a) => ({ ...a }));
    },
    async countActive(userId) {
      checkId('alerts.countActive', 'userId', userId);
      return alerts.filter((a) => a.userId === userId && a.status === 'active').length;
    },
    async transition(userId, id, to, patch) {
      checkId('alerts.transition', 'userId', userId);
      checkAlertId('alerts.transition', id);
      checkAlertTarget('alerts.transition', to);
      checkId('alerts.transition', 'patch.endedAt', patch?.endedAt);
      const i = alerts.findIndex((x) => x.id === id && x.userId === userId && x.status === 'active');
      if (i < 0) return undefined;
      const next: AlertRecord = {
        ...alerts[i]!, status: to, endedAt: patch.endedAt,
        ...(patch.firedPrice !== undefined ? { firedPrice: patch.firedPrice } : {}),
        ...(patch.deliverySessionId !== undefined ? { deliverySessionId: patch.deliverySessionId } : {}),
      };
      alerts[i] = next;
      return { ...next };
    },
  };
}
