/**
 * The SQLite memory domain: scoped rows, the FTS5 index (kept in sync by triggers), edges, consolidation
 * events, the user profile and vectors. Every statement filters on `user_id` and the scope's exact
 * `agent_id`; writes that touch several tables run in one `BEGIN IMMEDIATE` transaction.
 */
import { consolidationEventFromRow, DEFAULT_MEMORY_STATUSES, metadataJson, newMemoryRecord, profileEntryFromRow, scopeFromRow } from '../memory-logic';
import type {
  ConsolidationEvent,
  MemoryRecord,
  MemoryScope,
  MemoryStorage,
  MemoryTextRow,
  NewMemoryRow,
  ProfileEntry,
} from '../memory-types';
import type { SqliteHandle } from './handle';
import { MEMORY_COLUMNS, type MemoryRow, SCOPE_WHERE, SCOPE_WHERE_BY_ID, insertEdges, jsonList, scopeKey, scopeParams, toRecord } from './memory-rows';
import { createSqliteMemoryEdges } from './memory-edges';
import { createSqliteMemorySearch } from './memory-search';
import { sqliteMemoryStats } from './memory-stats';
import { createSqliteMemoryVectors } from './memory-vectors';

export { memoryMigrations } from './memory-schema';

const VISIBLE = "deleted_at IS NULL AND status != 'retired'";

/** The SQLite memory domain plus what only the engine uses. */
export interface SqliteMemoryStorage extends MemoryStorage {
  /** Index every row still waiting for the full-text index (called on close; see memory-fts-sync.ts). */
  catchUpIndex(): void;
}

type ProfileRow = { key: string; value: string; updated_at: string; set_by: string };
const profileEntry = (r: ProfileRow): ProfileEntry => profileEntryFromRow(r);

type PendingInsert = { scope: MemoryScope; row: NewMemoryRow; resolve: (r: MemoryRecord) => void; reject: (e: unknown) => void };

/** What the SQLite memory domain keeps besides the database: its parts and the inserts waiting for a group commit. */
interface SqliteMemoryState {
  handle: SqliteHandle;
  prepare: (sql: string) => ReturnType<SqliteHandle['prepare']>;
  search: ReturnType<typeof createSqliteMemorySearch>;
  vectors: ReturnType<typeof createSqliteMemoryVectors>;
  pendingInserts: PendingInsert[];
  flushScheduled: boolean;
}

type Method<K extends keyof MemoryStorage> = NonNullable<MemoryStorage[K]>;
type Args<K extends keyof MemoryStorage> = Parameters<Method<K>>;
type Result<K extends keyof MemoryStorage> = Awaited<ReturnType<Method<K>>>;

const agentKey = (scope: MemoryScope) => scope.agentId ?? '';

function getRow(st: SqliteMemoryState, scope: MemoryScope, id: number, includeDeleted: boolean): MemoryRow | undefined {
  return st.prepare(`SELECT ${MEMORY_COLUMNS} FROM memories WHERE id = ? AND ${SCOPE_WHERE}${includeDeleted ? '' : ' AND deleted_at IS NULL'}`).get(
    id,
    ...scopeParams(scope),
  ) as MemoryRow | undefined;
}

function insertOne(st: SqliteMemoryState, scope: MemoryScope, row: NewMemoryRow): MemoryRecord {
  const { prepare } = st;
  const [userId, agentId] = scopeParams(scope);
  const metadata = metadataJson(row.metadata);
  const info = prepare(
    `INSERT INTO memories (user_id, agent_id, scope_key, category, content, search_text, metadata, source, status, content_hash, embedding_state, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(userId, agentId, scopeKey(scope), row.category, row.content, row.searchText, metadata, row.source ?? null, row.status, row.contentHash, row.embeddingState, row.now, row.now);
  const id = Number(info.lastInsertRowid);
  insertEdges(prepare, scope, id, row.edges, row.now);
  return newMemoryRecord(scope, row, id);
}

// Group commit: inserts issued in the same tick share one BEGIN IMMEDIATE transaction. No savepoint per row:
// FTS5 flushes its pending terms into a new segment at every savepoint. Rows are validated before they get
// here, so a failing batch is rare; when one fails, it is rolled back whole and each row is retried in its
// own transaction, so one bad row never takes the others down.

/** Insert rows inside the caller's transaction, then let the full-text index catch up if enough wait. */
function insertRows(st: SqliteMemoryState, items: ReadonlyArray<{ scope: MemoryScope; row: NewMemoryRow }>): MemoryRecord[] {
  const out = items.map((item) => insertOne(st, item.scope, item.row));
  const last = out[out.length - 1];
  if (last !== undefined) st.search.fts.afterInserts(last.id);
  return out;
}

function flushInserts(st: SqliteMemoryState): void {
  const { handle } = st;
  st.flushScheduled = false;
  const batch = st.pendingInserts;
  st.pendingInserts = [];
  let outcomes: Array<{ ok: true; record: MemoryRecord } | { ok: false; error: unknown }>;
  try {
    outcomes = handle.write('memory.insert', () => insertRows(st, batch)).map((record) => ({ ok: true as const, record }));
  } catch (error) {
    outcomes =
      batch.length === 1
        ? [{ ok: false, error }]
        : batch.map((item) => {
            try {
              return { ok: true as const, record: handle.write('memory.insert', () => insertRows(st, [item])[0] as MemoryRecord) };
            } catch (rowError) {
              return { ok: false as const, error: rowError };
            }
          });
  }
  batch.forEach((item, i) => {
    const outcome = outcomes[i] as (typeof outcomes)[number];
    if (outcome.ok) item.resolve(outcome.record);
    else item.reject(outcome.error);
  });
}

/** Queue one insert for the group commit of this tick. */
function insert(st: SqliteMemoryState, scope: MemoryScope, row: NewMemoryRow): Promise<MemoryRecord> {
  return new Promise<MemoryRecord>((resolve, reject) => {
    st.pendingInserts.push({ scope, row, resolve, reject });
    if (!st.flushScheduled) {
      st.flushScheduled = true;
      queueMicrotask(() => flushInserts(st));
    }
  });
}

/** A write that may patch the vector cache: a failed transaction makes the cache reload. */
function vectorWrite<T>(st: SqliteMemoryState, operation: string, fn: () => T): T {
  try {
    return st.handle.write(operation, fn);
  } catch (error) {
    st.vectors.resetCache();
    throw error;
  }
}

function deleteIds(st: SqliteMemoryState, scope: MemoryScope, ids: readonly number[]): number {
  const { prepare } = st;
  // Only ids the scope owns: the vec0 bits and the vector cache are keyed by id alone.
  const owned = (prepare(`SELECT id FROM memories WHERE id IN (SELECT value FROM json_each(?)) AND ${SCOPE_WHERE_BY_ID}`).all(jsonList(ids), ...scopeParams(scope)) as Array<{ id: number }>).map((r) => r.id);
  if (owned.length === 0) return 0;
  const info = prepare(`DELETE FROM memories WHERE id IN (SELECT value FROM json_each(?)) AND ${SCOPE_WHERE_BY_ID}`).run(jsonList(owned), ...scopeParams(scope));
  st.vectors.removed(scope, owned);
  return info.changes;
}

function updateRow(st: SqliteMemoryState, ...[scope, id, patch]: Args<'update'>): Result<'update'> {
  const { prepare } = st;
    return vectorWrite(st, 'memory.update', () => {
      const current = getRow(st, scope, id, false);
      if (current === undefined) return undefined;
      const next: MemoryRow = {
        ...current,
        category: patch.category ?? current.category,
        content: patch.content ?? current.content,
        metadata: patch.metadata === undefined ? current.metadata : patch.metadata === null ? null : JSON.stringify(patch.metadata),
        source: patch.source ?? current.source,
        content_hash: patch.contentHash ?? current.content_hash,
        embedding_state: patch.embeddingState ?? current.embedding_state,
        updated_at: patch.now,
      };
      prepare(
        `UPDATE memories SET category = ?, content = ?, search_text = COALESCE(?, search_text), metadata = ?, source = ?, content_hash = ?, embedding_state = ?, updated_at = ?
         WHERE id = ? AND ${SCOPE_WHERE}`,
      ).run(next.category, next.content, patch.searchText ?? null, next.metadata, next.source, next.content_hash, next.embedding_state, next.updated_at, id, ...scopeParams(scope));
      if (next.content_hash !== current.content_hash) {
        prepare(`DELETE FROM memory_vectors WHERE memory_id = ? AND ${SCOPE_WHERE}`).run(id, ...scopeParams(scope));
        st.vectors.removed(scope, [id]);
      }
      if (patch.edges !== undefined) {
        prepare(`DELETE FROM memory_edges WHERE src_table = 'memories' AND src_id = ? AND ${SCOPE_WHERE}`).run(id, ...scopeParams(scope));
        insertEdges(prepare, scope, id, patch.edges, patch.now);
      }
      return toRecord(next);
    });
}

function listRows(st: SqliteMemoryState, ...[scope, query]: Args<'list'>): Result<'list'> {
  const { prepare, handle } = st;
    const order = query.order === 'created_asc' ? 'created_at ASC, id ASC' : 'updated_at DESC, id DESC';
    const cats = query.categories ?? [];
    const excluded = query.excludeSources ?? [];
    const rows = handle.read('memory.list', () =>
      prepare(
        `SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${SCOPE_WHERE}
           AND (? = 1 OR deleted_at IS NULL)
           AND status IN (SELECT value FROM json_each(?))
           ${cats.length > 0 ? 'AND category IN (SELECT value FROM json_each(?))' : 'AND ? IS NULL'}
           AND (? IS NULL OR source = ?) AND (? IS NULL OR content_hash = ?)
           ${excluded.length > 0 ? 'AND (source IS NULL OR source NOT IN (SELECT value FROM json_each(?)))' : 'AND ? IS NULL'}
         ORDER BY ${order} LIMIT ?`,
      ).all(
        ...scopeParams(scope),
        query.includeDeleted === true ? 1 : 0,
        jsonList(query.statuses ?? DEFAULT_MEMORY_STATUSES),
        cats.length > 0 ? jsonList(cats) : null,
        query.source ?? null,
        query.source ?? null,
        query.contentHash ?? null,
        query.contentHash ?? null,
        excluded.length > 0 ? jsonList(excluded) : null,
        query.limit,
      ),
    ) as MemoryRow[];
    return rows.map(toRecord);
}

function countRows(st: SqliteMemoryState, ...[scope, query]: Args<'count'>): Result<'count'> {
  const { prepare, handle } = st;
    const cats = query?.categories ?? [];
    const row = handle.read('memory.count', () =>
      prepare(`SELECT COUNT(*) AS n FROM memories WHERE ${SCOPE_WHERE} AND ${VISIBLE} AND (? IS NULL OR category IN (SELECT value FROM json_each(?)))`).get(
        ...scopeParams(scope),
        cats.length > 0 ? 1 : null,
        jsonList(cats),
      ),
    ) as { n: number };
    return row.n;
}

function purgeSoftDeleted(st: SqliteMemoryState, ...[scope, cutoff]: Args<'purgeSoftDeleted'>): number {
  const { prepare } = st;
    return vectorWrite(st, 'memory.purgeSoftDeleted', () => {
      const ids = (
        prepare(`SELECT id FROM memories WHERE ${SCOPE_WHERE} AND deleted_at IS NOT NULL AND deleted_at < ?`).all(...scopeParams(scope), cutoff) as Array<{ id: number }>
      ).map((r) => r.id);
      return deleteIds(st, scope, ids);
    });
}

function expiredSoftDeletedScopes(st: SqliteMemoryState, cutoff: string): MemoryScope[] {
  const { prepare, handle } = st;
    const rows = handle.read('memory.expiredSoftDeletedScopes', () =>
      prepare('SELECT DISTINCT user_id, agent_id FROM memories WHERE deleted_at IS NOT NULL AND deleted_at < ? ORDER BY user_id, agent_id').all(cutoff),
    ) as Array<{ user_id: string; agent_id: string | null }>;
    return rows.map((r) => scopeFromRow(r.user_id, r.agent_id));
}

function retire(st: SqliteMemoryState, ...[scope, id, options]: Args<'retire'>): boolean {
  const { prepare, handle } = st;
    const info = handle.write('memory.retire', () =>
      prepare(
        `UPDATE memories SET status = 'retired', retired_at = ?, superseded_by = ?
         WHERE id = ? AND ${SCOPE_WHERE} AND status != 'retired' AND (source IS NULL OR source != 'user_manual')`,
      ).run(options.now, options.supersededBy ?? null, id, ...scopeParams(scope)),
    );
    return info.changes > 0;
}

function textRows(st: SqliteMemoryState, ...[scope, query]: Args<'textRows'>): MemoryTextRow[] {
  const { prepare, handle } = st;
    return handle.read('memory.textRows', () => {
      const [userId, agentId] = scopeParams(scope);
      if (query?.ids !== undefined) {
        if (query.ids.length === 0) return [];
        return prepare(`SELECT id, content, category FROM memories WHERE id IN (SELECT value FROM json_each(?)) AND ${SCOPE_WHERE_BY_ID} ORDER BY id`).all(
          jsonList(query.ids),
          userId,
          agentId,
        ) as MemoryTextRow[];
      }
      if (query?.afterId !== undefined && query.afterId > 0) {
        // The rows added since: a range of the (user_id, agent_id, id) index (migration v5).
        return prepare('SELECT id, content, category FROM memories INDEXED BY memories_scope_id WHERE user_id = ? AND agent_id IS ? AND id > ? ORDER BY id').all(userId, agentId, query.afterId) as MemoryTextRow[];
      }
      const rows = prepare('SELECT id, content, category FROM memories WHERE user_id = ? AND agent_id IS ?').all(userId, agentId) as MemoryTextRow[];
      return rows.sort((a, b) => a.id - b.id);
    });
}

function textChanges(st: SqliteMemoryState, ...[scope, since]: Args<'textChanges'>): Result<'textChanges'> {
  const { prepare, handle } = st;
    // A lookup is about to run: let the engine's full-text index catch up too (memory-fts-sync.ts), so it
    // stays as current as before for engine-level `searchText` and other processes.
    st.search.fts.ensureIndexed();
    return handle.read('memory.textChanges', () =>
      handle.db.transaction(() => {
        const seq = (prepare("SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'memory_text_log'), 0)").pluck().get() as number) ?? 0;
        const pruned = prepare('SELECT pruned_through FROM memory_text_log_state WHERE id = 1').pluck().get() as number;
        if (since >= seq) return { seq, reset: false, ids: [] };
        if (since < pruned) return { seq, reset: true, ids: [] };
        const ids = prepare('SELECT memory_id FROM memory_text_log WHERE user_id = ? AND agent_key = ? AND seq > ? AND seq <= ?')
          .pluck()
          .all(scope.userId, agentKey(scope), since, seq) as number[];
        return { seq, reset: false, ids };
      })(),
    );
}

function loadTextIndex(st: SqliteMemoryState, scope: MemoryScope): Uint8Array | undefined {
  const { prepare, handle } = st;
    const data = handle.read('memory.loadTextIndex', () =>
      prepare('SELECT data FROM memory_text_index WHERE user_id = ? AND agent_key = ?').pluck().get(scope.userId, agentKey(scope)),
    ) as Buffer | undefined;
    return data === undefined ? undefined : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function saveTextIndex(st: SqliteMemoryState, ...[scope, snapshot]: Args<'saveTextIndex'>): boolean {
  const { prepare, handle } = st;
    return handle.write('memory.saveTextIndex', () => {
      // In the write transaction: no change to a row the snapshot holds since its position, then the upsert.
      const pruned = prepare('SELECT pruned_through FROM memory_text_log_state WHERE id = 1').pluck().get() as number;
      if (snapshot.seq < pruned) return false;
      const changed = prepare('SELECT 1 FROM memory_text_log WHERE user_id = ? AND agent_key = ? AND seq > ? AND memory_id <= ? LIMIT 1')
        .pluck()
        .get(scope.userId, agentKey(scope), snapshot.seq, snapshot.maxId);
      if (changed !== undefined) return false;
      prepare('INSERT INTO memory_text_index (user_id, agent_key, data) VALUES (?, ?, ?) ON CONFLICT (user_id, agent_key) DO UPDATE SET data = excluded.data').run(
        scope.userId,
        agentKey(scope),
        Buffer.from(snapshot.data.buffer, snapshot.data.byteOffset, snapshot.data.byteLength),
      );
      return true;
    });
}

function listByEmbeddingState(st: SqliteMemoryState, ...[scope, states, limit]: Args<'listByEmbeddingState'>): MemoryRecord[] {
  const { prepare, handle } = st;
    const rows = handle.read('memory.listByEmbeddingState', () =>
      prepare(
        `SELECT ${MEMORY_COLUMNS} FROM memories WHERE ${SCOPE_WHERE} AND ${VISIBLE}
           AND embedding_state IN (SELECT value FROM json_each(?)) ORDER BY id ASC LIMIT ?`,
      ).all(...scopeParams(scope), jsonList(states), limit),
    ) as MemoryRow[];
    return rows.map(toRecord);
}

function appendConsolidationEvent(st: SqliteMemoryState, ...[scope, event]: Args<'appendConsolidationEvent'>): ConsolidationEvent {
  const { prepare, handle } = st;
    return handle.write('memory.appendConsolidationEvent', () => {
      const info = prepare(
        `INSERT INTO memory_consolidation_events (user_id, agent_id, pass, decision, fact_id, other_id, reason, model, model_verdict, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(...scopeParams(scope), event.pass, event.decision, event.factId, event.otherId ?? null, event.reason, event.model ?? null, event.modelVerdict ?? null, event.now);
      const { now, ...rest } = event;
      return { ...rest, id: Number(info.lastInsertRowid), createdAt: now };
    });
}

function listConsolidationEvents(st: SqliteMemoryState, ...[scope, options]: Args<'listConsolidationEvents'>): ConsolidationEvent[] {
  const { prepare, handle } = st;
    const rows = handle.read('memory.listConsolidationEvents', () =>
      prepare(
        `SELECT * FROM memory_consolidation_events WHERE ${SCOPE_WHERE} AND (? IS NULL OR fact_id = ? OR other_id = ?) ORDER BY id DESC LIMIT ?`,
      ).all(...scopeParams(scope), options.factId ?? null, options.factId ?? null, options.factId ?? null, options.limit),
    ) as Array<Record<string, unknown>>;
    return rows.map(consolidationEventFromRow);
}

function profileSet(st: SqliteMemoryState, ...[scope, key, value, now, setBy = 'user']: Args<'profileSet'>): ProfileEntry {
  const { prepare, handle } = st;
    // The person's value wins: an agent write does not replace an entry the person set (one statement, no race).
    const r = handle.write('memory.profileSet', () =>
      prepare(
        `INSERT INTO user_profile (user_id, agent_key, key, value, created_at, updated_at, set_by) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (user_id, agent_key, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at, set_by = excluded.set_by
         WHERE NOT (user_profile.set_by = 'user' AND excluded.set_by = 'agent')
         RETURNING key, value, updated_at, set_by`,
      ).get(scope.userId, agentKey(scope), key, value, now, now, setBy),
    ) as ProfileRow | undefined;
    if (r !== undefined) return profileEntry(r);
    const kept = handle.read('memory.profileSet', () =>
      prepare('SELECT key, value, updated_at, set_by FROM user_profile WHERE user_id = ? AND agent_key = ? AND key = ?').get(scope.userId, agentKey(scope), key),
    ) as ProfileRow;
    return profileEntry(kept);
}

/** The SQLite memory domain over one connection handle: wiring over a {@link SqliteMemoryState} and the functions above. */
export function createSqliteMemoryStorage(handle: SqliteHandle): SqliteMemoryStorage {
  const prepare = (sql: string) => handle.prepare(sql);
  const st: SqliteMemoryState = {
    handle,
    prepare,
    search: createSqliteMemorySearch(handle),
    vectors: createSqliteMemoryVectors(handle),
    pendingInserts: [],
    flushScheduled: false,
  };
  const { search, vectors } = st;
  const edges = createSqliteMemoryEdges(handle);
  /** One statement in a write transaction; whether it changed a row. */
  const changed = (operation: string, sql: string, ...params: unknown[]): boolean => handle.write(operation, () => prepare(sql).run(...params)).changes > 0;

  return {
    catchUpIndex: () => search.fts.ensureIndexed(),
    stats: async (scope) => sqliteMemoryStats(handle, scope),
    insert: (scope, row) => insert(st, scope, row),
    async insertMany(scope, list) {
      if (list.length === 0) return [];
      return handle.write('memory.insertMany', () => {
        const out = list.map((row) => insertOne(st, scope, row));
        search.fts.catchUp(); // a batch is indexed in its own transaction: one segment either way
        return out;
      });
    },
    async get(scope, id, options) {
      const row = handle.read('memory.get', () => getRow(st, scope, id, options?.includeDeleted === true));
      return row === undefined ? undefined : toRecord(row);
    },
    async getMany(scope, ids) {
      if (ids.length === 0) return [];
      const rows = handle.read('memory.getMany', () =>
        prepare(`SELECT ${MEMORY_COLUMNS} FROM memories WHERE id IN (SELECT value FROM json_each(?)) AND ${SCOPE_WHERE_BY_ID}`).all(jsonList(ids), ...scopeParams(scope)),
      ) as MemoryRow[];
      return rows.map(toRecord);
    },
    update: async (...a) => updateRow(st, ...a),
    list: async (...a) => listRows(st, ...a),
    count: async (...a) => countRows(st, ...a),
    softDelete: async (scope, id, at) =>
      changed('memory.softDelete', `UPDATE memories SET deleted_at = ? WHERE id = ? AND ${SCOPE_WHERE} AND deleted_at IS NULL`, at, id, ...scopeParams(scope)),
    restore: async (scope, id) =>
      changed('memory.restore', `UPDATE memories SET deleted_at = NULL WHERE id = ? AND ${SCOPE_WHERE} AND deleted_at IS NOT NULL`, id, ...scopeParams(scope)),
    hardDelete: async (scope, id) => vectorWrite(st, 'memory.hardDelete', () => deleteIds(st, scope, [id]) > 0),
    purgeSoftDeleted: async (...a) => purgeSoftDeleted(st, ...a),
    expiredSoftDeletedScopes: async (cutoff) => expiredSoftDeletedScopes(st, cutoff),
    retire: async (...a) => retire(st, ...a),
    setStatus: async (scope, id, status) =>
      changed('memory.setStatus', `UPDATE memories SET status = ? WHERE id = ? AND ${SCOPE_WHERE} AND status != 'retired'`, status, id, ...scopeParams(scope)),
    textRows: async (...a) => textRows(st, ...a),
    textChanges: async (...a) => textChanges(st, ...a),
    loadTextIndex: async (scope) => loadTextIndex(st, scope),
    saveTextIndex: async (...a) => saveTextIndex(st, ...a),
    searchText: async (scope, query, filter) => search.text(scope, query, filter),
    searchLike: async (scope, needles, filter) => search.like(scope, needles, filter),
    vectorInfo: async () => vectors.info(),
    async upsertVectors(scope, list) {
      vectors.upsert(scope, list);
    },
    vectorByContentHash: async (scope, hash) => vectors.byContentHash(scope, hash),
    searchVector: async (scope, vector, filter) => vectors.search(scope, vector, filter),
    async setEmbeddingState(scope, ids, state) {
      if (ids.length === 0) return;
      handle.write('memory.setEmbeddingState', () =>
        prepare(`UPDATE memories SET embedding_state = ? WHERE id IN (SELECT value FROM json_each(?)) AND ${SCOPE_WHERE_BY_ID}`).run(state, jsonList(ids), ...scopeParams(scope)),
      );
    },
    listByEmbeddingState: async (...a) => listByEmbeddingState(st, ...a),
    ...edges,
    appendConsolidationEvent: async (...a) => appendConsolidationEvent(st, ...a),
    listConsolidationEvents: async (...a) => listConsolidationEvents(st, ...a),
    profileList: async (scope) =>
      (
        handle.read('memory.profileList', () =>
          prepare('SELECT key, value, updated_at, set_by FROM user_profile WHERE user_id = ? AND agent_key = ? ORDER BY id ASC').all(scope.userId, agentKey(scope)),
        ) as ProfileRow[]
      ).map(profileEntry),
    async profileGet(scope, key) {
      const r = handle.read('memory.profileGet', () =>
        prepare('SELECT key, value, updated_at, set_by FROM user_profile WHERE user_id = ? AND agent_key = ? AND key = ?').get(scope.userId, agentKey(scope), key),
      ) as ProfileRow | undefined;
      return r === undefined ? undefined : profileEntry(r);
    },
    profileSet: async (...a) => profileSet(st, ...a),
    profileDelete: async (scope, key) =>
      changed('memory.profileDelete', 'DELETE FROM user_profile WHERE user_id = ? AND agent_key = ? AND key = ?', scope.userId, agentKey(scope), key),
  };
}
