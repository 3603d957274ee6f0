import type { KeyObject } from 'node:crypto';
import { MinaraError } from '../../errors/minara-error';
import type { AuditChainHead } from '../audit-types';
import { AUDIT_CONTENT_COLUMNS, AUDIT_GENESIS_HASH, auditChainKeyId, auditChainRowOf, auditChainKeyObject, assertAuditKeyId, auditKeyRequired, auditContentOf, auditEntryOf, auditRowHash, verifyAuditChain } from '../audit-chain';
import type { AuditQuery, AuditStorage } from '../types';
import { AUDIT_LOOKUP_BATCH, AUDIT_LOOKUP_THROUGH, auditLookupClause, catchUpAuditLookup, migrateAuditLookup } from './audit-lookup';
import { AUDIT_ENTRY_SHAPE, checkLimit, checkRecord } from './checks';
import type { SqliteHandle, SqliteMigration } from './handle';
import type { CommitTracker } from './read-cache';

const COLUMNS = AUDIT_CONTENT_COLUMNS.map(([c]) => c);
const INSERT = `INSERT INTO audit_log (id, ${COLUMNS.join(', ')}, seq, prev_hash, hash) VALUES (?, ${COLUMNS.map(() => '?').join(', ')}, ?, ?, ?)`;
/**
 * The chain's state in one statement (one snapshot): where it started, the AUTOINCREMENT counter, the newest chained
 * row, and how far the trace, session and tool lookups reach.
 */
const STATE = `SELECT h.legacy_rows, h.legacy_max_id, h.keyed_from, h.key_id, COALESCE(${AUDIT_LOOKUP_THROUGH}, 0) AS lookup_through,
  COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'audit_log'), 0) AS last_id,
  COALESCE((SELECT MAX(id) FROM audit_log), 0) AS max_id,
  (SELECT hash FROM audit_log WHERE id > h.legacy_max_id AND seq IS NOT NULL ORDER BY id DESC LIMIT 1) AS newest_hash
  FROM audit_chain_head h WHERE h.singleton = 1`;

/**
 * The `audit` domain's own migrations (beside `core`, which created `audit_log`): the outcome, tenant, kind and
 * detail columns, the chain link, and the chain-start row. Rows already in the table stay as they are: the row
 * records how many there were (`legacy_rows`, `legacy_max_id`) and `verify` reports them as the unchained prefix.
 */
export const auditMigrations: readonly SqliteMigration[] = [
  {
    domain: 'audit',
    version: 1,
    name: 'audit outcomes, tenant, kinds and the hash chain',
    up(db) {
      db.exec(`
        ALTER TABLE audit_log ADD COLUMN user_id TEXT;
        ALTER TABLE audit_log ADD COLUMN kind TEXT;
        ALTER TABLE audit_log ADD COLUMN outcome_json TEXT;
        ALTER TABLE audit_log ADD COLUMN detail_json TEXT;
        ALTER TABLE audit_log ADD COLUMN seq INTEGER;
        ALTER TABLE audit_log ADD COLUMN prev_hash TEXT;
        ALTER TABLE audit_log ADD COLUMN hash TEXT;
        CREATE INDEX audit_log_user ON audit_log (user_id, id) WHERE user_id IS NOT NULL;
        CREATE TABLE audit_chain_head (
          singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
          legacy_rows INTEGER NOT NULL,
          legacy_max_id INTEGER NOT NULL,
          started_at TEXT NOT NULL
        ) STRICT;
        INSERT INTO audit_chain_head (singleton, legacy_rows, legacy_max_id, started_at)
          SELECT 1, COUNT(*), COALESCE(MAX(id), 0), strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM audit_log;
      `);
    },
  },
  {
    domain: 'audit',
    version: 2,
    name: 'keyed audit links: where HMAC-keyed links begin',
    up(db) {
      // Rows already chained keep their plain SHA-256 links (verify lists them as legacy links); the first row
      // appended with the audit chain key records its seq here.
      db.exec('ALTER TABLE audit_chain_head ADD COLUMN keyed_from INTEGER');
    },
  },
  {
    domain: 'audit',
    version: 3,
    name: 'the id of the key the links are keyed with',
    up(db) {
      // Recorded when an instance with a key starts (`claimChainKey`) or first appends with it.
      db.exec('ALTER TABLE audit_chain_head ADD COLUMN key_id TEXT');
    },
  },
  {
    domain: 'audit',
    version: 4,
    name: 'trace, session and tool lookups kept in batches instead of three per-row indexes',
    up(db) {
      migrateAuditLookup(db);
    },
  },
];

/** WHERE clause and parameters for an audit filter (`since` inclusive, `until` exclusive). */
function where(filter: Omit<AuditQuery, 'limit'>): { sql: string; params: unknown[] } {
  const clauses: string[] = [];
  const params: unknown[] = [];
  const add = (clause: string, value: unknown) => {
    if (value === undefined) return;
    clauses.push(clause);
    params.push(value);
  };
  add('tool_name = ?', filter.toolName);
  add('session_id = ?', filter.sessionId);
  add('trace_id = ?', filter.traceId);
  add('decision = ?', filter.decision);
  add('at >= ?', filter.since);
  add('at < ?', filter.until);
  add('user_id = ?', filter.userId);
  add("COALESCE(kind, 'tool_call') = ?", filter.kind);
  add('id > ?', filter.afterId);
  add('id < ?', filter.beforeId);
  const lookup = auditLookupClause(filter);
  if (lookup !== undefined) add(lookup.sql, lookup.param);
  return { sql: clauses.length === 0 ? '' : ` WHERE ${clauses.join(' AND ')}`, params };
}

/**
 * The `audit` domain on SQLite: an append-only, hash-chained table. Each append, in one `BEGIN IMMEDIATE`
 * transaction (so processes sharing the file take turns and never fork the chain), reads the newest chained row's
 * hash and inserts the row with its link. A row's place is bound to its AUTOINCREMENT id (`seq = id − the ids
 * before the chain`), and SQLite never reuses such an id (`sqlite_sequence` keeps the highest ever given): the
 * counter is the chain head, so a deleted newest row shows as missing even after later appends, without a head
 * row to rewrite on every append (one page less per write).
 */
export function createSqliteAuditStorage(handle: SqliteHandle, reads: CommitTracker): AuditStorage {
  const state = () => handle.prepare(STATE).get() as Record<string, unknown> | undefined;
  let cached: { readonly version: number; readonly lastId: number; readonly hash: string; readonly legacyMaxId: number; readonly keyedFrom: number | undefined; readonly keyId: string | undefined; readonly lookupThrough: number } | undefined;
  let chainKey: KeyObject | undefined;
  let chainKeyId: string | undefined;
  let onAppend: ((seq: number) => void) | undefined;
  /**
   * The tip this connection's last append left inside the open transaction, with the transaction's token: the next
   * append in the same transaction (a turn's held rows commit together) need not read the chain state again.
   */
  let txTip: { readonly token: number; readonly tip: NonNullable<typeof cached> } | undefined;
  /** The key id the head records, if any. */
  const keyIdOf = (st: Record<string, unknown> | undefined): string | undefined => (st?.key_id == null ? undefined : String(st.key_id));
  /** The head as `verify` judges it: the counter's position, and the newest chained row's hash. */
  const headOf = (st: Record<string, unknown> | undefined): AuditChainHead => {
    const legacyMaxId = Number(st?.legacy_max_id ?? 0);
    const keyedFrom = st?.keyed_from == null ? undefined : Number(st.keyed_from);
    const keyId = keyIdOf(st);
    return {
      seq: Math.max(0, Number(st?.last_id ?? 0) - legacyMaxId), hash: st?.newest_hash == null ? AUDIT_GENESIS_HASH : String(st.newest_hash), legacyRows: Number(st?.legacy_rows ?? 0), legacyMaxId,
      ...(keyedFrom !== undefined ? { keyedFrom } : {}), ...(keyId !== undefined ? { keyId } : {}),
    };
  };
  return {
    async append(entry) {
      checkRecord('audit.append', 'entry', entry, AUDIT_ENTRY_SHAPE);
      const content = auditContentOf(entry);
      const values = AUDIT_CONTENT_COLUMNS.map(([, key]) => content[key] ?? null);
      handle.write('audit.append', () => {
        // `data_version` changes only when another connection commits: while it stands, this connection's own last
        // append is still the newest row, and the chain state need not be read again.
        const version = reads.version();
        const token = reads.transactionToken();
        let tip = txTip !== undefined && txTip.token === token ? txTip.tip : cached !== undefined && cached.version === version ? cached : undefined;
        if (!tip) {
          const st = state();
          tip = {
            version, lastId: Math.max(Number(st?.last_id ?? 0), Number(st?.max_id ?? 0)), hash: st?.newest_hash == null ? AUDIT_GENESIS_HASH : String(st.newest_hash),
            legacyMaxId: Number(st?.legacy_max_id ?? 0), keyedFrom: st?.keyed_from == null ? undefined : Number(st.keyed_from),
            keyId: keyIdOf(st), lookupThrough: Number(st?.lookup_through ?? 0),
          };
        }
        const id = tip.lastId + 1;
        const seq = id - tip.legacyMaxId;
        let keyedFrom = tip.keyedFrom;
        if (keyedFrom !== undefined && chainKey === undefined) throw auditKeyRequired(keyedFrom);
        // Checked where the head is read (the cache holds only what this connection's own append left).
        assertAuditKeyId(tip.keyId, chainKeyId);
        if (keyedFrom === undefined && chainKey !== undefined) {
          // The first keyed row: recorded once, in the same transaction (every later append reads it from the cache).
          keyedFrom = seq;
          handle.prepare('UPDATE audit_chain_head SET keyed_from = ?, key_id = ? WHERE singleton = 1').run(seq, chainKeyId);
        } else if (chainKeyId !== undefined && tip.keyId === undefined) {
          // A log keyed before key ids were recorded: its next keyed append records the key.
          handle.prepare('UPDATE audit_chain_head SET key_id = ? WHERE singleton = 1').run(chainKeyId);
        }
        const hash = auditRowHash(tip.hash, seq, content, chainKey);
        handle.prepare(INSERT).run(id, ...values, seq, tip.hash, hash);
        // Every AUDIT_LOOKUP_BATCH rows, this append also indexes the batch for trace, session and tool lookups (audit-lookup.ts).
        const lookupThrough = id - tip.lookupThrough >= AUDIT_LOOKUP_BATCH ? catchUpAuditLookup(handle, tip.lookupThrough) : tip.lookupThrough;
        const next = { version, lastId: id, hash, legacyMaxId: tip.legacyMaxId, keyedFrom, keyId: chainKeyId ?? tip.keyId, lookupThrough };
        // Only after the outermost commit (a batch or an enclosing write may still roll the row back): a
        // rolled-back append leaves the cache as it was.
        cached = undefined;
        txTip = token === undefined ? undefined : { token, tip: next };
        reads.afterCommit(() => {
          cached = next;
          onAppend?.(next.lastId - next.legacyMaxId);
        });
      });
    },

    useChainKey(options) {
      if (!(options.key instanceof Uint8Array) || options.key.length < 32) throw new MinaraError('CONFIG_INVALID', 'audit.useChainKey: key must be a Uint8Array of at least 32 bytes');
      if (options.ifUnkeyed === true && chainKey !== undefined) return;
      chainKey = auditChainKeyObject(options.key);
      chainKeyId = auditChainKeyId(chainKey);
      cached = undefined;
      txTip = undefined;
      onAppend = options.onAppend;
    },

    async claimChainKey() {
      if (chainKeyId === undefined) return handle.read('audit.claimChainKey', () => headOf(state())).keyId;
      const id = chainKeyId;
      return handle.write('audit.claimChainKey', () => {
        handle.prepare('UPDATE audit_chain_head SET key_id = ? WHERE singleton = 1 AND key_id IS NULL').run(id);
        cached = undefined;
        txTip = undefined;
        const st = state();
        return keyIdOf(st);
      });
    },

    async query(filter = {}) {
      const limit = checkLimit('audit.query', filter.limit, 100);
      const { sql, params } = where(filter);
      const order = filter.order === 'oldest' ? 'ASC' : 'DESC';
      const rows = handle.read('audit.query', () => handle.prepare(`SELECT * FROM audit_log${sql} ORDER BY id ${order} LIMIT ?`).all(...params, limit) as Record<string, unknown>[]);
      return rows.map((r) => auditEntryOf(auditChainRowOf(r)));
    },

    async count(filter = {}) {
      const { sql, params } = where(filter);
      const row = handle.read('audit.count', () => handle.prepare(`SELECT COUNT(*) AS n FROM audit_log${sql}`).get(...params) as { n: number });
      return row.n;
    },

    async head() {
      return handle.read('audit.head', () => headOf(state()));
    },

    async verify(options = {}) {
      // The head and the newest id in one statement (one snapshot): rows appended while the walk runs are not judged.
      const st = handle.read('audit.verify', state);
      const maxId = Math.max(Number(st?.max_id ?? 0), Number(st?.last_id ?? 0));
      return verifyAuditChain(headOf(st), async (afterId, limit) =>
        handle.read('audit.verify', () => (handle.prepare('SELECT * FROM audit_log WHERE id > ? AND id <= ? ORDER BY id LIMIT ?').all(afterId, maxId, limit) as Record<string, unknown>[]).map(auditChainRowOf)),
      options, chainKey);
    },
  };
}
