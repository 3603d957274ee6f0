import type { KeyObject } from 'node:crypto';
import { MinaraError } from '../../errors/minara-error';
import type { AuditChainHead, AuditChainRow } from '../audit-types';
import { AUDIT_GENESIS_HASH, auditChainKeyId, auditContentOf, auditChainKeyObject, assertAuditKeyId, auditKeyRequired, auditEntryOf, auditRowHash, verifyAuditChain } from '../audit-chain';
import type { AuditEntry, AuditQuery, AuditStorage } from '../types';
import { AUDIT_ENTRY_SHAPE, checkLimit, checkRecord } from '../sqlite/checks';

function matches(e: AuditEntry, f: Omit<AuditQuery, 'limit'>): boolean {
  return (
    (f.toolName === undefined || e.toolName === f.toolName) &&
    (f.sessionId === undefined || e.sessionId === f.sessionId) &&
    (f.traceId === undefined || e.traceId === f.traceId) &&
    (f.decision === undefined || e.decision === f.decision) &&
    (f.since === undefined || e.at >= f.since) &&
    (f.until === undefined || e.at < f.until) &&
    (f.userId === undefined || e.userId === f.userId) &&
    (f.kind === undefined || (e.kind ?? 'tool_call') === f.kind) &&
    (f.afterId === undefined || e.id > f.afterId) &&
    (f.beforeId === undefined || e.id < f.beforeId)
  );
}

/** The `audit` domain in memory: an append-only, hash-chained array (one JS thread: appends never interleave). */
export function createInMemoryAuditStorage(): AuditStorage {
  const rows: AuditChainRow[] = [];
  let head: AuditChainHead = { seq: 0, hash: AUDIT_GENESIS_HASH, legacyRows: 0, legacyMaxId: 0 };
  let chainKey: KeyObject | undefined;
  let chainKeyId: string | undefined;
  let onAppend: ((seq: number) => void) | undefined;
  const entries = () => rows.map(auditEntryOf);
  return {
    async append(entry) {
      checkRecord('audit.append', 'entry', entry, AUDIT_ENTRY_SHAPE);
      const content = auditContentOf(entry);
      const seq = head.seq + 1;
      if (head.keyedFrom !== undefined && chainKey === undefined) throw auditKeyRequired(head.keyedFrom);
      assertAuditKeyId(head.keyId, chainKeyId);
      const keyedFrom = head.keyedFrom ?? (chainKey !== undefined ? seq : undefined);
      const keyId = chainKeyId ?? head.keyId;
      const hash = auditRowHash(head.hash, seq, content, chainKey);
      const stored: Record<string, string | number> = {};
      for (const [k, v] of Object.entries(content)) if (v !== undefined) stored[k] = v;
      rows.push({ id: rows.length + 1, seq, prevHash: head.hash, hash, content: stored });
      head = { ...head, seq, hash, ...(keyedFrom !== undefined ? { keyedFrom } : {}), ...(keyId !== undefined ? { keyId } : {}) };
      onAppend?.(seq);
    },
    useChainKey(options) {
      if (!(options.key instanceof Uint8Array) || options.key.length < 32) throw new MinaraError('CONFIG_INVALID', 'audit.useChainKey: key must be a Uint8Array of at least 32 bytes');
      if (options.ifUnkeyed === true && chainKey !== undefined) return;
      chainKey = auditChainKeyObject(options.key);
      chainKeyId = auditChainKeyId(chainKey);
      onAppend = options.onAppend;
    },
    async query(filter = {}) {
      const limit = checkLimit('audit.query', filter.limit, 100);
      const out: AuditEntry[] = [];
      const oldest = filter.order === 'oldest';
      for (let k = 0; k < rows.length && out.length < limit; k++) {
        const e = auditEntryOf(rows[oldest ? k : rows.length - 1 - k]!);
        if (matches(e, filter)) out.push(e);
      }
      return out;
    },
    async count(filter = {}) {
      return entries().reduce((n, row) => (matches(row, filter) ? n + 1 : n), 0);
    },
    async head() {
      return { ...head };
    },
    async claimChainKey() {
      if (chainKeyId !== undefined && head.keyId === undefined) head = { ...head, keyId: chainKeyId };
      return head.keyId;
    },
    async verify(options = {}) {
      const snapshot = [...rows];
      return verifyAuditChain({ ...head }, async (afterId, limit) => snapshot.filter((r) => r.id > afterId).slice(0, limit), options, chainKey);
    },
  };
}
