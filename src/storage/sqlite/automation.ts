import {
  checkAlertId, checkAlertStatuses, checkAlertTarget, checkNewAlert, checkNewWorkflowRun, checkRunQuery, checkRunStatus, checkSteps, FINISH_STATUSES,
} from '../automation-checks';
import type { AlertRecord, AlertStorage, WorkflowRunRecord, WorkflowRunStep, WorkflowRunStorage } from '../automation-types';
import { checkId, checkLimit, notFound } from './checks';
import type { SqliteHandle, SqliteMigration } from './handle';
import { opt, placeholders } from './rows';

/**
 * Migrations of the `workflows` and `alerts` domains. Append new versions; never edit one that has shipped.
 *
 * workflows v1 — `workflow_runs`: one row per (workflow, trigger key), UNIQUE, so two processes cannot both run a
 * trigger; steps as JSON.
 * alerts v1 — `price_alerts`: per user, with a partial index over the active ones (the checker's read).
 */
export const automationMigrations: readonly SqliteMigration[] = [
  {
    domain: 'workflows',
    version: 1,
    name: 'workflow runs, one per workflow and trigger',
    up(db) {
      db.exec(`
        CREATE TABLE workflow_runs (
          seq          INTEGER PRIMARY KEY AUTOINCREMENT,
          id           TEXT NOT NULL UNIQUE,
          workflow_id  TEXT NOT NULL,
          user_id      TEXT NOT NULL,
          trigger      TEXT NOT NULL,
          trigger_key  TEXT NOT NULL,
          status       TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
          owner        TEXT NOT NULL,
          trace_id     TEXT NOT NULL,
          started_at   TEXT NOT NULL,
          lease_until  TEXT NOT NULL,
          ended_at     TEXT,
          duration_ms  REAL,
          error        TEXT,
          steps_json   TEXT NOT NULL DEFAULT '[]',
          skipped_json TEXT NOT NULL DEFAULT '[]',
          UNIQUE (workflow_id, trigger_key)
        );
        CREATE INDEX workflow_runs_user ON workflow_runs (user_id, seq DESC);
        CREATE INDEX workflow_runs_workflow ON workflow_runs (workflow_id, seq DESC);
        CREATE INDEX workflow_runs_running ON workflow_runs (lease_until) WHERE status = 'running';
      `);
    },
  },
  {
    domain: 'alerts',
    version: 1,
    name: 'price alerts per user',
    up(db) {
      db.exec(`
        CREATE TABLE price_alerts (
          id                  INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id             TEXT NOT NULL,
          asset               TEXT NOT NULL,
          condition           TEXT NOT NULL CHECK (condition IN ('above', 'below', 'move_pct')),
          threshold           REAL NOT NULL,
          base_price          REAL,
          note                TEXT,
          status              TEXT NOT NULL CHECK (status IN ('active', 'fired', 'cancelled', 'expired')),
          created_at          TEXT NOT NULL,
          expires_at          TEXT NOT NULL,
          session_id          TEXT,
          ended_at            TEXT,
          fired_price         REAL,
          delivery_session_id TEXT
        );
        CREATE INDEX price_alerts_user ON price_alerts (user_id, id DESC);
        CREATE INDEX price_alerts_active ON price_alerts (id) WHERE status = 'active';
      `);
    },
  },
];

interface RunRow {
  id: string; workflow_id: string; user_id: string; trigger: WorkflowRunRecord['trigger']; trigger_key: string; status: WorkflowRunRecord['status'];
  owner: string; trace_id: string; started_at: string; lease_until: string; ended_at: string | null; duration_ms: number | null; error: string | null;
  steps_json: string; skipped_json: string;
}

/** A stored run row (both SQL engines use the same column names). */
export function toWorkflowRun(r: RunRow): WorkflowRunRecord {
  return {
    id: r.id, workflowId: r.workflow_id, userId: r.user_id, trigger: r.trigger, triggerKey: r.trigger_key, status: r.status, owner: r.owner, traceId: r.trace_id,
    startedAt: r.started_at, leaseUntil: r.lease_until, ...opt('endedAt', r.ended_at), ...opt('durationMs', r.duration_ms === null ? null : Number(r.duration_ms)),
    ...opt('error', r.error), steps: JSON.parse(r.steps_json) as WorkflowRunStep[], skipped: JSON.parse(r.skipped_json) as string[],
  };
}

const INTERRUPTED = 'interrupted: the process running it stopped before it ended (its lease lapsed); not run again';
export { INTERRUPTED as WORKFLOW_INTERRUPTED_ERROR };

/** The `workflows` domain on SQLite. */
export function createSqliteWorkflowRunStorage(handle: SqliteHandle): WorkflowRunStorage {
  const byId = (id: string) => handle.prepare('SELECT * FROM workflow_runs WHERE id = ?').get(id) as RunRow | undefined;
  return {
    async claimRun(run) {
      checkNewWorkflowRun('workflows.claimRun', run);
      return handle.write('workflows.claimRun', () => {
        const info = handle
          .prepare(`INSERT OR IGNORE INTO workflow_runs (id, workflow_id, user_id, trigger, trigger_key, status, owner, trace_id, started_at, lease_until)
                    VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?)`)
          .run(run.id, run.workflowId, run.userId, run.trigger, run.triggerKey, run.owner, run.traceId, run.startedAt, run.leaseUntil);
        return info.changes === 1 ? toWorkflowRun(byId(run.id)!) : undefined;
      });
    },
    async saveSteps(id, owner, steps) {
      checkSteps('workflows.saveSteps', steps);
      return handle.write('workflows.saveSteps', () => handle.prepare("UPDATE workflow_runs SET steps_json = ? WHERE id = ? AND owner = ? AND status = 'running'").run(JSON.stringify(steps), id, owner).changes === 1);
    },
    async finishRun(id, owner, result) {
      checkRunStatus('workflows.finishRun', 'status', result.status, FINISH_STATUSES);
      checkSteps('workflows.finishRun', result.steps);
      return handle.write('workflows.finishRun', () => {
        const changed = handle
          .prepare("UPDATE workflow_runs SET status = ?, ended_at = ?, duration_ms = ?, error = ?, steps_json = ?, skipped_json = ? WHERE id = ? AND owner = ? AND status = 'running'")
          .run(result.status, result.endedAt, result.durationMs, result.error ?? null, JSON.stringify(result.steps), JSON.stringify(result.skipped), id, owner).changes;
        if (changed !== 1) throw notFound('workflows.finishRun', 'running workflow run', id, ` (not held by ${owner})`);
        return toWorkflowRun(byId(id)!);
      });
    },
    async getRun(id) {
      checkId('workflows.getRun', 'id', id);
      const row = handle.read('workflows.getRun', () => byId(id));
      return row === undefined ? undefined : toWorkflowRun(row);
    },
    async listRuns(query = {}) {
      const limit = checkRunQuery('workflows.listRuns', query);
      const where: string[] = [];
      const args: unknown[] = [];
      for (const [column, value] of [['workflow_id', query.workflowId], ['user_id', query.userId], ['status', query.status]] as const) {
        if (value === undefined) continue;
        where.push(`${column} = ?`);
        args.push(value);
      }
      const sql = `SELECT * FROM workflow_runs${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq DESC LIMIT ?`;
      return (handle.read('workflows.listRuns', () => handle.prepare(sql).all(...args, limit)) as RunRow[]).map(toWorkflowRun);
    },
    async expireRuns(now) {
      checkId('workflows.expireRuns', 'now', now);
      return handle.write('workflows.expireRuns', () =>
        handle.prepare("UPDATE workflow_runs SET status = 'interrupted', ended_at = ?, error = ? WHERE status = 'running' AND lease_until < ?").run(now, INTERRUPTED, now).changes,
      );
    },
  };
}

interface AlertRow {
  id: number; user_id: string; asset: string; condition: AlertRecord['condition']; threshold: number; base_price: number | null; note: string | null;
  status: AlertRecord['status']; created_at: string; expires_at: string; session_id: string | null; ended_at: string | null; fired_price: number | null;
  delivery_session_id: string | null;
}

/** A stored alert row (both SQL engines use the same column names). */
export function toAlert(r: AlertRow): AlertRecord {
  return {
    id: Number(r.id), userId: r.user_id, asset: r.asset, condition: r.condition, threshold: Number(r.threshold), ...opt('basePrice', r.base_price === null ? null : Number(r.base_price)),
    ...opt('note', r.note), status: r.status, createdAt: r.created_at, expiresAt: r.expires_at, ...opt('sessionId', r.session_id), ...opt('endedAt', r.ended_at),
    ...opt('firedPrice', r.fired_price === null ? null : Number(r.fired_price)), ...opt('deliverySessionId', r.delivery_session_id),
  };
}

/** The `alerts` domain on SQLite: a transition is one conditional UPDATE, so an alert fires once. */
export function createSqliteAlertStorage(handle: SqliteHandle): AlertStorage {
  const byId = (id: number) => handle.prepare('SELECT * FROM price_alerts WHERE id = ?').get(id) as AlertRow | undefined;
  return {
    async create(a) {
      checkNewAlert('alerts.create', a);
      return handle.write('alerts.create', () => {
        const info = handle
          .prepare("INSERT INTO price_alerts (user_id, asset, condition, threshold, base_price, note, status, created_at, expires_at, session_id) VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?, ?)")
          .run(a.userId, a.asset, a.condition, a.threshold, a.basePrice ?? null, a.note ?? null, a.createdAt, a.expiresAt, a.sessionId ?? null);
        return toAlert(byId(Number(info.lastInsertRowid))!);
      });
    },
    async get(userId, id) {
      checkId('alerts.get', 'userId', userId);
      checkAlertId('alerts.get', id);
      const row = handle.read('alerts.get', () => handle.prepare('SELECT * FROM price_alerts WHERE id = ? AND user_id = ?').get(id, userId)) as AlertRow | undefined;
      return row === undefined ? undefined : toAlert(row);
    },
    async list(query) {
      checkId('alerts.list', 'userId', query?.userId);
      const statuses = checkAlertStatuses('alerts.list', query.status);
      const limit = checkLimit('alerts.list', query.limit, 50);
      const sql = `SELECT * FROM price_alerts WHERE user_id = ?${statuses ? ` AND status IN (${placeholders(statuses.length)})` : ''} ORDER BY id DESC LIMIT ?`;
      return (handle.read('alerts.list', () => handle.prepare(sql).all(query.userId, ...(statuses ?? []), limit)) as AlertRow[]).map(toAlert);
    },
    async listActive(query = {}) {
      const limit = checkLimit('alerts.listActive', query.limit, 1000);
      const after = query.afterId === undefined ? 0 : checkAlertId('alerts.listActive', query.afterId);
      return (handle.read('alerts.listActive', () => handle.prepare("SELECT * FROM price_alerts WHERE status = 'active' AND id > ? ORDER BY id LIMIT ?").all(after, limit)) as AlertRow[]).map(toAlert);
    },
    async countActive(userId) {
      checkId('alerts.countActive', 'userId', userId);
      return (handle.read('alerts.countActive', () => handle.prepare("SELECT COUNT(*) AS n FROM price_alerts WHERE user_id = ? AND status = 'active'").get(userId)) as { n: number }).n;
    },
    async transition(userId, id, to, patch) {
      checkId('alerts.transition', 'userId', userId);
      checkAlertId('alerts.transition', id);
      checkAlertTarget('alerts.transition', to);
      checkId('alerts.transition', 'patch.endedAt', patch?.endedAt);
      return handle.write('alerts.transition', () => {
        const changed = handle
          .prepare("UPDATE price_alerts SET status = ?, ended_at = ?, fired_price = ?, delivery_session_id = ? WHERE id = ? AND user_id = ? AND status = 'active'")
          .run(to, patch.endedAt, patch.firedPrice ?? null, patch.deliverySessionId ?? null, id, userId).changes;
        return changed === 1 ? toAlert(byId(id)!) : undefined;
      });
    },
  };
}
