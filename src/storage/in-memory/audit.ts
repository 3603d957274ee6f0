import type { AuditEntry, AuditQuery, AuditStorage } from '../types';
import { AUDIT_ENTRY_SHAPE, checkLimit, checkRecord } from '../sqlite/checks';
import { compact } from './copy';

function matches(e: AuditEntry, f: Omit<AuditQuery, 'limit'>): boolean {
  return (
    (f.toolName === undefined || e.toolName === f.toolName) &&
    (f.sessionId === undefined || e.sessionId === f.sessionId) &&
    (f.traceId === undefined || e.traceId === f.traceId) &&
    (f.decision === undefined || e.decision === f.decision) &&
    (f.since === undefined || e.at >= f.since) &&
    (f.until === undefined || e.at < f.until)
  );
}

/** The `audit` domain in memory: an append-only array; newest (last appended) first. */
export function createInMemoryAuditStorage(): AuditStorage {
  const rows: AuditEntry[] = [];
  return {
    async append(entry) {
      checkRecord('audit.append', 'entry', entry, AUDIT_ENTRY_SHAPE);
      rows.push(compact({ ...entry, id: rows.length + 1 }));
    },
    async query(filter = {}) {
      const limit = checkLimit('audit.query', filter.limit, 100);
      const out: AuditEntry[] = [];
      for (let i = rows.length - 1; i >= 0 && out.length < limit; i--) {
        const row = rows[i] as AuditEntry;
        if (matches(row, filter)) out.push({ ...row });
      }
      return out;
    },
    async count(filter = {}) {
      return rows.reduce((n, row) => (matches(row, filter) ? n + 1 : n), 0);
    },
  };
}
