import type { KeyObject } from 'node:crypto';
/**
 * The `audit` domain on Postgres: an append-only, hash-chained table. Each append locks the chain-head row
 * (`SELECT … FOR UPDATE`), inserts the row with its link and moves the head in one transaction, so instances
 * sharing the database take turns and never fork the chain. Same content, hashes and verifier as every engine
 * (`../audit-chain.ts`).
 */
import { MinaraError } from '../../errors/minara-error';
import { AUDIT_CONTENT_COLUMNS, auditChainKeyId, auditChainRowOf, auditChainKeyObject, assertAuditKeyId, auditKeyRequired, auditContentOf, auditEntryOf, auditHeadOf, auditRowHash, verifyAuditChain } from '../audit-chain';
import type { AuditQuery, AuditStorage } from '../types';
import { AUDIT_ENTRY_SHAPE, checkLimit, checkRecord } from '../sqlite/checks';
import type { PgHandle, PgRow } from './handle';
import type { PostgresMigration } from './migrate';

const COLUMNS = AUDIT_CONTENT_COLUMNS.map(([c]) => c);

/** The `audit` domain's migrations (see the SQLite engine's: same columns, same unchained-prefix rule). */
export const pgAuditMigrations: readonly PostgresMigration[] = [
  {
    domain: 'audit',
    version: 1,
    name: 'audit outcomes, tenant, kinds and the hash chain',
    async up(tx, { t }) {
      const log = t('audit_log');
      for (const column of ['user_id TEXT', 'kind TEXT', 'outcome_json TEXT', 'detail_json TEXT', 'seq BIGINT', 'prev_hash TEXT', 'hash TEXT']) {
        await tx.run(`ALTER TABLE ${log} ADD COLUMN ${column}`);
      }
      await tx.run(`CREATE INDEX audit_log_user ON ${log} (user_id, id) WHERE user_id IS NOT NULL`);
      await tx.run(`CREATE TABLE ${t('audit_chain_head')} (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1), seq BIGINT NOT NULL, hash TEXT NOT NULL,
        legacy_rows BIGINT NOT NULL, legacy_max_id BIGINT NOT NULL, started_at TEXT NOT NULL)`);
      await tx.run(`INSERT INTO ${t('audit_chain_head')} (singleton, seq, hash, legacy_rows, legacy_max_id, started_at)
        SELECT 1, 0, '${'0'.repeat(64)}', COUNT(*), COALESCE(MAX(id), 0), to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') FROM ${log}`);
    },
  },
  {
    domain: 'audit',
    version: 2,
    name: 'keyed audit links: where HMAC-keyed links begin',
    async up(tx, { t }) {
      await tx.run(`ALTER TABLE ${t('audit_chain_head')} ADD COLUMN keyed_from BIGINT`);
    },
  },
  {
    domain: 'audit',
    version: 3,
    name: 'the id of the key the links are keyed with',
    async up(tx, { t }) {
      await tx.run(`ALTER TABLE ${t('audit_chain_head')} ADD COLUMN key_id TEXT`);
    },
  },
];

function auditWhere(filter: Omit<AuditQuery, 'limit'>): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (column: string, cmp: string, value: unknown) => {
    if (value === undefined) return;
    params.push(value);
    clauses.push(`${column} ${cmp} $${params.length}`);
  };
  add('tool_name', '=', filter.toolName);
  add('session_id', '=', filter.sessionId);
  add('trace_id', '=', filter.traceId);
  add('decision', '=', filter.decision);
  add('at', '>=', filter.since);
  add('at', '<', filter.until);
  add('user_id', '=', filter.userId);
  add("COALESCE(kind, 'tool_call')", '=', filter.kind);
  add('id', '>', filter.afterId);
  add('id', '<', filter.beforeId);
  return { sql: clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`, params };
}

/** `audit` on Postgres. */
export function createPgAuditStorage(h: PgHandle): AuditStorage {
  const t = h.t('audit_log');
  const headTable = h.t('audit_chain_head');
  const insert = `INSERT INTO ${t} (${COLUMNS.join(', ')}, seq, prev_hash, hash) VALUES (${[...COLUMNS, 'seq', 'prev_hash', 'hash'].map((_, i) => `$${i + 1}`).join(', ')})`;
  let chainKey: KeyObject | undefined;
  let chainKeyId: string | undefined;
  let onAppend: ((seq: number) => void) | undefined;
  const HEAD_COLUMNS = 'seq, hash, legacy_rows, legacy_max_id, keyed_from, key_id';
  return {
    useChainKey(options) {
      if (!(options.key instanceof Uint8Array) || options.key.length < 32) throw new MinaraError('CONFIG_INVALID', 'audit.useChainKey: key must be a Uint8Array of at least 32 bytes');
      if (options.ifUnkeyed === true && chainKey !== undefined) return;
      chainKey = auditChainKeyObject(options.key);
      chainKeyId = auditChainKeyId(chainKey);
      onAppend = options.onAppend;
    },
    async append(e) {
      checkRecord('audit.append', 'entry', e, AUDIT_ENTRY_SHAPE);
      const content = auditContentOf(e);
      const values = AUDIT_CONTENT_COLUMNS.map(([, key]) => content[key] ?? null);
      const seq = await h.tx('audit.append', async (tx) => {
        const head = auditHeadOf(await tx.get<PgRow>(`SELECT ${HEAD_COLUMNS} FROM ${headTable} WHERE singleton = 1 FOR UPDATE`));
        const seq = head.seq + 1;
        if (head.keyedFrom !== undefined && chainKey === undefined) throw auditKeyRequired(head.keyedFrom);
        assertAuditKeyId(head.keyId, chainKeyId);
        const keyedFrom = head.keyedFrom ?? (chainKey !== undefined ? seq : null);
        const hash = auditRowHash(head.hash, seq, content, chainKey);
        await tx.run(insert, [...values, seq, head.hash, hash]);
        await tx.run(`UPDATE ${headTable} SET seq = $1, hash = $2, keyed_from = $3, key_id = $4 WHERE singleton = 1`, [seq, hash, keyedFrom, chainKeyId ?? head.keyId ?? null]);
        return seq;
      });
      onAppend?.(seq);
    },
    async claimChainKey() {
      if (chainKeyId !== undefined) await h.op('audit.claimChainKey').run(`UPDATE ${headTable} SET key_id = $1 WHERE singleton = 1 AND key_id IS NULL`, [chainKeyId]);
      return auditHeadOf(await h.op('audit.claimChainKey').get(`SELECT ${HEAD_COLUMNS} FROM ${headTable} WHERE singleton = 1`)).keyId;
    },
    async query(filter = {}) {
      const limit = checkLimit('audit.query', filter.limit, 100);
      const w = auditWhere(filter);
      const rows = await h.op('audit.query').all(`SELECT * FROM ${t}${w.sql} ORDER BY id ${filter.order === 'oldest' ? 'ASC' : 'DESC'} LIMIT $${w.params.length + 1}`, [...w.params, limit]);
      return rows.map((r) => auditEntryOf(auditChainRowOf(r)));
    },
    async count(filter = {}) {
      const w = auditWhere(filter);
      const row = await h.op('audit.count').get(`SELECT COUNT(*) AS n FROM ${t}${w.sql}`, w.params);
      return Number(row?.n ?? 0);
    },
    async head() {
      return auditHeadOf(await h.op('audit.head').get(`SELECT ${HEAD_COLUMNS} FROM ${headTable} WHERE singleton = 1`));
    },
    async verify(options = {}) {
      // The head and the newest id in one statement (one snapshot): rows appended while the walk runs are not judged.
      const snap = await h.op('audit.verify').get(`SELECT ${HEAD_COLUMNS}, (SELECT COALESCE(MAX(id), 0) FROM ${t}) AS max_id FROM ${headTable} WHERE singleton = 1`);
      const maxId = Number(snap?.max_id ?? 0);
      return verifyAuditChain(auditHeadOf(snap), async (afterId, limit) =>
        (await h.op('audit.verify').all(`SELECT * FROM ${t} WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`, [afterId, maxId, limit])).map(auditChainRowOf),
      options, chainKey);
    },
  };
}
