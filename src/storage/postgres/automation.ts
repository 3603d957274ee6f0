/**
 * The `workflows` and `alerts` domains on Postgres. A run claim is `INSERT … ON CONFLICT (workflow_id, trigger_key)
 * DO NOTHING RETURNING`, so one instance of a fleet runs each trigger; an alert transition is one conditional
 * `UPDATE … WHERE status = 'active' RETURNING`, so an alert fires once.
 */
import {
  checkAlertId, checkAlertStatuses, checkAlertTarget, checkNewAlert, checkNewWorkflowRun, checkRunQuery, checkRunStatus, checkSteps, FINISH_STATUSES,
} from '../automation-checks';
import type { AlertStorage, WorkflowRunStorage } from '../automation-types';
import { checkId, checkLimit, notFound } from '../sqlite/checks';
import { toAlert, toWorkflowRun, WORKFLOW_INTERRUPTED_ERROR } from '../sqlite/automation';
import type { PgHandle } from './handle';
import type { PostgresMigration } from './migrate';

const sql = (text: string): PostgresMigration['up'] => async (tx, { t }) => {
  for (const statement of text.replaceAll('§', `${t('')}`.slice(0, -1)).split(/;\s*\n/)) {
    if (statement.trim().length > 0) await tx.run(statement);
  }
};

/** Migrations of the `workflows` and `alerts` domains (same tables and columns as SQLite). */
export const automationMigrations: readonly PostgresMigration[] = [
  {
    domain: 'workflows',
    version: 1,
    name: 'workflow runs, one per workflow and trigger',
    up: sql(`
      CREATE TABLE §.workflow_runs (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id TEXT NOT NULL UNIQUE, workflow_id TEXT NOT NULL, user_id TEXT NOT NULL, trigger TEXT NOT NULL, trigger_key TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
        owner TEXT NOT NULL, trace_id TEXT NOT NULL, started_at TEXT NOT NULL, lease_until TEXT NOT NULL,
        ended_at TEXT, duration_ms DOUBLE PRECISION, error TEXT,
        steps_json TEXT NOT NULL DEFAULT '[]', skipped_json TEXT NOT NULL DEFAULT '[]',
        UNIQUE (workflow_id, trigger_key)
      );
      CREATE INDEX workflow_runs_user ON §.workflow_runs (user_id, seq DESC);
      CREATE INDEX workflow_runs_workflow ON §.workflow_runs (workflow_id, seq DESC);
      CREATE INDEX workflow_runs_running ON §.workflow_runs (lease_until) WHERE status = 'running'`),
  },
  {
    domain: 'alerts',
    version: 1,
    name: 'price alerts per user',
    up: sql(`
      CREATE TABLE §.price_alerts (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, asset TEXT NOT NULL,
        condition TEXT NOT NULL CHECK (condition IN ('above', 'below', 'move_pct')),
        threshold DOUBLE PRECISION NOT NULL, base_price DOUBLE PRECISION, note TEXT,
        status TEXT NOT NULL CHECK (status IN ('active', 'fired', 'cancelled', 'expired')),
        created_at TEXT NOT NULL, expires_at TEXT NOT NULL, session_id TEXT, ended_at TEXT,
        fired_price DOUBLE PRECISION, delivery_session_id TEXT
      );
      CREATE INDEX price_alerts_user ON §.price_alerts (user_id, id DESC);
      CREATE INDEX price_alerts_active ON §.price_alerts (id) WHERE status = 'active'`),
  },
];

type Row = Parameters<typeof toWorkflowRun>[0];
type ARow = Parameters<typeof toAlert>[0];

/** `workflows`: one run per workflow and trigger key across every instance. */
export function createPgWorkflowRunStorage(h: PgHandle): WorkflowRunStorage {
  const t = h.t('workflow_runs');
  return {
    async claimRun(run) {
      checkNewWorkflowRun('workflows.claimRun', run);
      const row = await h.op('workflows.claimRun').get<Row>(
        `INSERT INTO ${t} (id, workflow_id, user_id, trigger, trigger_key, status, owner, trace_id, started_at, lease_until)
         VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8, $9) ON CONFLICT DO NOTHING RETURNING *`,
        [run.id, run.workflowId, run.userId, run.trigger, run.triggerKey, run.owner, run.traceId, run.startedAt, run.leaseUntil],
      );
      return row === undefined ? undefined : toWorkflowRun(row);
    },
    async saveSteps(id, owner, steps) {
      checkSteps('workflows.saveSteps', steps);
      return (await h.op('workflows.saveSteps').run(`UPDATE ${t} SET steps_json = $1 WHERE id = $2 AND owner = $3 AND status = 'running'`, [JSON.stringify(steps), id, owner])) === 1;
    },
    async finishRun(id, owner, result) {
      checkRunStatus('workflows.finishRun', 'status', result.status, FINISH_STATUSES);
      checkSteps('workflows.finishRun', result.steps);
      const row = await h.op('workflows.finishRun').get<Row>(
        `UPDATE ${t} SET status = $1, ended_at = $2, duration_ms = $3, error = $4, steps_json = $5, skipped_json = $6
         WHERE id = $7 AND owner = $8 AND status = 'running' RETURNING *`,
        [result.status, result.endedAt, result.durationMs, result.error ?? null, JSON.stringify(result.steps), JSON.stringify(result.skipped), id, owner],
      );
      if (row === undefined) throw notFound('workflows.finishRun', 'running workflow run', id, ` (not held by ${owner})`);
      return toWorkflowRun(row);
    },
    async getRun(id) {
      checkId('workflows.getRun', 'id', id);
      const row = await h.op('workflows.getRun').get<Row>(`SELECT * FROM ${t} WHERE id = $1`, [id]);
      return row === undefined ? undefined : toWorkflowRun(row);
    },
    async listRuns(query = {}) {
      const limit = checkRunQuery('workflows.listRuns', query);
      const where: string[] = [];
      const args: unknown[] = [];
      for (const [column, value] of [['workflow_id', query.workflowId], ['user_id', query.userId], ['status', query.status]] as const) {
        if (value === undefined) continue;
        args.push(value);
        where.push(`${column} = $${args.length}`);
      }
      args.push(limit);
      return (await h.op('workflows.listRuns').all<Row>(`SELECT * FROM ${t}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT $${args.length}`, args)).map(toWorkflowRun);
    },
    async expireRuns(now) {
      checkId('workflows.expireRuns', 'now', now);
      return h.op('workflows.expireRuns').run(`UPDATE ${t} SET status = 'interrupted', ended_at = $1, error = $2 WHERE status = 'running' AND lease_until < $1`, [now, WORKFLOW_INTERRUPTED_ERROR]);
    },
  };
}

/** `alerts`: per user; a transition is a compare-and-set. */
export function createPgAlertStorage(h: PgHandle): AlertStorage {
  const t = h.t('price_alerts');
  return {
    async create(a) {
      checkNewAlert('alerts.create', a);
      const row = await h.op('alerts.create').get<ARow>(
        `INSERT INTO ${t} (user_id, asset, condition, threshold, base_price, note, status, created_at, expires_at, session_id)
         VALUES ($1, $2, $3, $4, $5, $6, 'active', $7, $8, $9) RETURNING *`,
        [a.userId, a.asset, a.condition, a.threshold, a.basePrice ?? null, a.note ?? null, a.createdAt, a.expiresAt, a.sessionId ?? null],
      );
      return toAlert(row!);
    },
    async get(userId, id) {
      checkId('alerts.get', 'userId', userId);
      checkAlertId('alerts.get', id);
      const row = await h.op('alerts.get').get<ARow>(`SELECT * FROM ${t} WHERE id = $1 AND user_id = $2`, [id, userId]);
      return row === undefined ? undefined : toAlert(row);
    },
    async list(query) {
      checkId('alerts.list', 'userId', query?.userId);
      const statuses = checkAlertStatuses('alerts.list', query.status);
      const limit = checkLimit('alerts.list', query.limit, 50);
      const rows = statuses
        ? await h.op('alerts.list').all<ARow>(`SELECT * FROM ${t} WHERE user_id = $1 AND status = ANY($2::text[]) ORDER BY id DESC LIMIT $3`, [query.userId, [...statuses], limit])
        : await h.op('alerts.list').all<ARow>(`SELECT * FROM ${t} WHERE user_id = $1 ORDER BY id DESC LIMIT $2`, [query.userId, limit]);
      return rows.map(toAlert);
    },
    async listActive(query = {}) {
      const limit = checkLimit('alerts.listActive', query.limit, 1000);
      const after = query.afterId === undefined ? 0 : checkAlertId('alerts.listActive', query.afterId);
      return (await h.op('alerts.listActive').all<ARow>(`SELECT * FROM ${t} WHERE status = 'active' AND id > $1 ORDER BY id LIMIT $2`, [after, limit])).map(toAlert);
    },
    async countActive(userId) {
      checkId('alerts.countActive', 'userId', userId);
      const row = await h.op('alerts.countActive').get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM ${t} WHERE user_id = $1 AND status = 'active'`, [userId]);
      return Number(row?.n ?? 0);
    },
    async transition(userId, id, to, patch) {
      checkId('alerts.transition', 'userId', userId);
      checkAlertId('alerts.transition', id);
      checkAlertTarget('alerts.transition', to);
      checkId('alerts.transition', 'patch.endedAt', patch?.endedAt);
      const row = await h.op('alerts.transition').get<ARow>(
        `UPDATE ${t} SET status = $1, ended_at = $2, fired_price = $3, delivery_session_id = $4 WHERE id = $5 AND user_id = $6 AND status = 'active' RETURNING *`,
        [to, patch.endedAt, patch.firedPrice ?? null, patch.deliverySessionId ?? null, id, userId],
      );
      return row === undefined ? undefined : toAlert(row);
    },
  };
}
