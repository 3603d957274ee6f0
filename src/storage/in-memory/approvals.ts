import type { ApprovalRecord, ApprovalStorage } from '../types';
import { APPROVAL_SHAPE, checkId, checkLimit, checkRecord, checkStatus, checkStatuses, duplicateId } from '../sqlite/checks';
import { compact } from './copy';

/** The `approvals` domain in memory; `transition` is a compare-and-set on the stored status. */
export function createInMemoryApprovalStorage(): ApprovalStorage {
  /** id → record; Map order is insertion order, the tie-breaker for equal `createdAt`. */
  const byId = new Map<string, ApprovalRecord>();
  return {
    async create(record) {
      checkRecord('approvals.create', 'record', record, APPROVAL_SHAPE);
      checkStatus('approvals.create', 'record.status', record.status);
      if (byId.has(record.id)) throw duplicateId('approvals.create', 'an approval', record.id);
      byId.set(record.id, compact({ ...record }));
    },
    async get(id) {
      checkId('approvals.get', 'id', id);
      const row = byId.get(id);
      return row === undefined ? undefined : { ...row };
    },
    async list(query = {}) {
      const limit = checkLimit('approvals.list', query.limit, 100);
      const statuses = query.status === undefined ? undefined : new Set(checkStatuses('approvals.list', 'status', query.status));
      const rows = [...byId.values()]
        .map((row, order) => ({ row, order }))
        .filter(({ row }) => (statuses === undefined || statuses.has(row.status)) && (query.sessionId === undefined || row.sessionId === query.sessionId))
        .sort((a, b) => (a.row.createdAt < b.row.createdAt ? 1 : a.row.createdAt > b.row.createdAt ? -1 : b.order - a.order));
      return rows.slice(0, limit).map(({ row }) => ({ ...row }));
    },
    async transition(id, from, to, patch = {}) {
      checkId('approvals.transition', 'id', id);
      const fromStatuses = checkStatuses('approvals.transition', 'from', from);
      checkStatus('approvals.transition', 'to', to);
      const row = byId.get(id);
      if (row === undefined || !fromStatuses.includes(row.status)) return false;
      byId.set(id, { ...row, status: to, ...compact({ ...patch }) });
      return true;
    },
  };
}
