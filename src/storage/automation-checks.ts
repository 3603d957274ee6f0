import type { AlertCondition, AlertStatus, NewAlert, NewWorkflowRun, WorkflowRunQuery, WorkflowRunStatus, WorkflowRunStep } from './automation-types';
import { checkId, checkLimit, checkRecord, invalidArgument } from './sqlite/checks';

/** Input checks of the `workflows` and `alerts` domains, shared by every engine (same code, same message). */

const RUN_STATUSES: ReadonlySet<string> = new Set<WorkflowRunStatus>(['running', 'ok', 'failed', 'interrupted']);
const TRIGGERS: ReadonlySet<string> = new Set(['schedule', 'webhook', 'manual']);
const CONDITIONS: ReadonlySet<string> = new Set<AlertCondition>(['above', 'below', 'move_pct']);
export const ALERT_STATUSES: ReadonlySet<string> = new Set<AlertStatus>(['active', 'fired', 'cancelled', 'expired']);

export function checkNewWorkflowRun(operation: string, run: NewWorkflowRun): void {
  checkRecord(operation, 'run', run, { strings: ['id', 'workflowId', 'userId', 'trigger', 'triggerKey', 'owner', 'traceId', 'startedAt', 'leaseUntil'] });
  if (!TRIGGERS.has(run.trigger)) throw invalidArgument(operation, `run.trigger must be one of ${[...TRIGGERS].join(', ')}, got ${JSON.stringify(run.trigger)}`);
}

export function checkRunStatus(operation: string, field: string, status: unknown, allowed: ReadonlySet<string> = RUN_STATUSES): WorkflowRunStatus {
  if (typeof status !== 'string' || !allowed.has(status)) throw invalidArgument(operation, `${field} must be one of ${[...allowed].join(', ')}, got ${JSON.stringify(status)}`);
  return status as WorkflowRunStatus;
}

export const FINISH_STATUSES: ReadonlySet<string> = new Set(['ok', 'failed']);

export function checkSteps(operation: string, steps: unknown): readonly WorkflowRunStep[] {
  if (!Array.isArray(steps)) throw invalidArgument(operation, `steps must be an array, got ${typeof steps}`);
  steps.forEach((s: unknown, i) => checkRecord(operation, `steps[${i}]`, s, { strings: ['id', 'kind', 'startedAt'], numbers: ['durationMs'] }));
  return steps as readonly WorkflowRunStep[];
}

export function checkRunQuery(operation: string, query: WorkflowRunQuery): number {
  if (query.status !== undefined) checkRunStatus(operation, 'status', query.status);
  if (query.workflowId !== undefined) checkId(operation, 'workflowId', query.workflowId);
  if (query.userId !== undefined) checkId(operation, 'userId', query.userId);
  return checkLimit(operation, query.limit, 50);
}

export function checkNewAlert(operation: string, alert: NewAlert): void {
  checkRecord(operation, 'alert', alert, { strings: ['userId', 'asset', 'condition', 'createdAt', 'expiresAt'], numbers: ['threshold'], optionalStrings: ['note', 'sessionId'] });
  if (!CONDITIONS.has(alert.condition)) throw invalidArgument(operation, `alert.condition must be one of ${[...CONDITIONS].join(', ')}, got ${JSON.stringify(alert.condition)}`);
  if (!(alert.threshold > 0)) throw invalidArgument(operation, `alert.threshold must be a positive number, got ${String(alert.threshold)}`);
  if (alert.basePrice !== undefined && !(typeof alert.basePrice === 'number' && Number.isFinite(alert.basePrice) && alert.basePrice > 0)) {
    throw invalidArgument(operation, `alert.basePrice must be a positive number when given, got ${String(alert.basePrice)}`);
  }
  if (alert.condition === 'move_pct' && alert.basePrice === undefined) throw invalidArgument(operation, 'alert.basePrice is required for a move_pct alert (the reference price)');
}

/** Statuses to filter on: one or a non-empty list. */
export function checkAlertStatuses(operation: string, status: AlertStatus | readonly AlertStatus[] | undefined): readonly AlertStatus[] | undefined {
  if (status === undefined) return undefined;
  const list = typeof status === 'string' ? [status] : status;
  if (!Array.isArray(list) || list.length === 0) throw invalidArgument(operation, 'status must be a status or a non-empty list of statuses');
  for (const s of list) if (!ALERT_STATUSES.has(s)) throw invalidArgument(operation, `status must be one of ${[...ALERT_STATUSES].join(', ')}, got ${JSON.stringify(s)}`);
  return list as readonly AlertStatus[];
}

export function checkAlertId(operation: string, id: unknown): number {
  if (!Number.isSafeInteger(id) || (id as number) < 1) throw invalidArgument(operation, `id must be a positive integer, got ${String(id)}`);
  return id as number;
}

export function checkAlertTarget(operation: string, to: unknown): void {
  if (to !== 'fired' && to !== 'cancelled' && to !== 'expired') throw invalidArgument(operation, `to must be fired, cancelled or expired, got ${JSON.stringify(to)}`);
}
