/**
 * The in-memory memory domain: the same semantics as the SQLite engine (scoping, soft delete, FTS-equivalent
 * BM25 over the same tokens, phrase/AND/OR/prefix, LIKE fallback, exact cosine KNN, edges with the same
 * UNIQUE key, consolidation events, profile in first-set order). For tests and ephemeral agents.
 */
import { MinaraError } from '../../errors/minara-error';
import type {
  ConsolidationEvent,
  MemoryEdgeInput,
  MemoryEdgeRecord,
  MemoryEntityCount,
  MemoryLookupFilter,
  MemoryRecord,
  MemoryScope,
  MemoryScoredId,
  MemoryStorage,
  MemoryTextRow,
  NewMemoryRow,
  ProfileEntry,
} from '../memory-types';
import {
  categoryTokenCount, cosine, foldMemoryStats, LIKE_CANDIDATES, likeNeedles, type MemoryStatsGroup, newMemoryRecord, profileWriteKept, queryDimensionMismatch, scoreLikeMatches, topScored,
} from '../memory-logic';
import { type Bm25Doc, bm25Score, bm25Stats, matches } from './memory-bm25';

interface Row {
  record: MemoryRecord;
  doc: Bm25Doc;
}
interface Edge extends MemoryEdgeRecord {
  readonly id: number;
  readonly userId: string;
  readonly agentId: string | undefined;
}
interface StoredEvent extends ConsolidationEvent {
  readonly userId: string;
  readonly agentId: string | undefined;
}

const inScope = (r: { userId: string; agentId?: string | undefined }, s: MemoryScope) => r.userId === s.userId && (r.agentId ?? undefined) === (s.agentId ?? undefined);
const scopeId = (s: MemoryScope) => JSON.stringify([s.userId, s.agentId ?? null]);

function makeDoc(searchText: string, category: string): Bm25Doc {
  const tokens = searchText.split(' ').filter((t) => t.length > 0);
  return { tokens, size: tokens.length + categoryTokenCount(category) + 1 };
}

/** Everything the in-memory memory domain holds. */
interface MemState {
  rows: Map<number, Row>;
  vectors: Map<number, { vector: Float32Array; contentHash: string }>;
  /** The vector dimension, fixed at the first vector stored. */
  dimension: number | undefined;
  edges: Edge[];
  events: StoredEvent[];
  profiles: Map<string, Map<string, ProfileEntry>>;
  nextId: number;
  nextEdgeId: number;
  nextEventId: number;
  /** The change log of searchable text (`textChanges`): updates of content/category and deletions. */
  textLog: Array<{ seq: number; scope: string; id: number }>;
  textSeq: number;
  textPrunedThrough: number;
  /** Saved lexical index snapshots per scope (`saveTextIndex`), dropped when a row of the scope goes or its content changes. */
  textIndexes: Map<string, Uint8Array>;
}

function logText(m: MemState, record: MemoryRecord): void {
  m.textLog.push({ seq: ++m.textSeq, scope: scopeId({ userId: record.userId, agentId: record.agentId }), id: record.id });
  if (m.textLog.length > 20_000) {
    m.textLog = m.textLog.slice(10_000);
    m.textPrunedThrough = (m.textLog[0]?.seq ?? m.textSeq + 1) - 1;
  }
}

const visible = (r: MemoryRecord, statuses: readonly string[] = ['active', 'pending']) => r.deletedAt === undefined && statuses.includes(r.status);

function owned(m: MemState, scope: MemoryScope, id: number, includeDeleted = false): Row | undefined {
  const row = m.rows.get(id);
  if (row === undefined || !inScope(row.record, scope)) return undefined;
  if (!includeDeleted && row.record.deletedAt !== undefined) return undefined;
  return row;
}

const passes = (r: MemoryRecord, scope: MemoryScope, filter: MemoryLookupFilter) =>
  inScope(r, scope) &&
  visible(r, filter.statuses) &&
  (filter.categories === undefined || filter.categories.length === 0 || filter.categories.includes(r.category)) &&
  !(filter.excludeIds ?? []).includes(r.id);

function addEdges(m: MemState, scope: MemoryScope, memoryId: number, list: readonly MemoryEdgeInput[], now: string): void {
  for (const e of list) {
    const dup = m.edges.some((x) => x.memoryId === memoryId && x.entityKind === e.entityKind && x.entityKey === e.entityKey && x.edgeType === e.edgeType);
    if (!dup) m.edges.push({ ...e, id: m.nextEdgeId++, memoryId, createdAt: now, userId: scope.userId, agentId: scope.agentId });
  }
}

function removeRows(m: MemState, ids: readonly number[]): void {
  for (const id of ids) {
    const gone = m.rows.get(id);
    if (gone !== undefined) {
      logText(m, gone.record);
      m.textIndexes.delete(scopeId({ userId: gone.record.userId, agentId: gone.record.agentId }));
    }
    m.rows.delete(id);
    m.vectors.delete(id);
  }
  const gone = new Set(ids);
  m.edges = m.edges.filter((e) => !gone.has(e.memoryId));
}

function visibleEdge(m: MemState, e: Edge, scope: MemoryScope): boolean {
  if (!inScope(e, scope)) return false;
  const r = m.rows.get(e.memoryId)?.record;
  return r !== undefined && inScope(r, scope) && r.deletedAt === undefined && r.status !== 'retired';
}

const strip = ({ id: _id, userId: _u, agentId: _a, ...rest }: Edge): MemoryEdgeRecord => rest;
const byUpdatedDesc = (a: MemoryRecord, b: MemoryRecord) => (a.updatedAt === b.updatedAt ? b.id - a.id : a.updatedAt < b.updatedAt ? 1 : -1);

function profileOf(m: MemState, scope: MemoryScope): Map<string, ProfileEntry> {
  let p = m.profiles.get(scopeId(scope));
  if (p === undefined) m.profiles.set(scopeId(scope), (p = new Map()));
  return p;
}

function insertOne(m: MemState, scope: MemoryScope, row: NewMemoryRow): MemoryRecord {
  const id = m.nextId++;
  const record = newMemoryRecord(scope, row, id, row.metadata === undefined ? undefined : structuredClone(row.metadata));
  m.rows.set(id, { record, doc: makeDoc(row.searchText, row.category) });
  addEdges(m, scope, id, row.edges, row.now);
  return record;
}

type Method<K extends keyof MemoryStorage> = NonNullable<MemoryStorage[K]>;
type Args<K extends keyof MemoryStorage> = Parameters<Method<K>>;
type Result<K extends keyof MemoryStorage> = Awaited<ReturnType<Method<K>>>;

function update(m: MemState, ...[scope, id, patch]: Args<'update'>): Result<'update'> {
  const row = owned(m, scope, id);
  if (row === undefined) return undefined;
  const cur = row.record;
  const { metadata: _m, ...base } = cur;
  const metadata = patch.metadata === undefined ? cur.metadata : patch.metadata === null ? undefined : structuredClone(patch.metadata);
  const next: MemoryRecord = {
    ...base,
    ...(metadata === undefined ? {} : { metadata }),
    category: patch.category ?? cur.category,
    content: patch.content ?? cur.content,
    ...(patch.source === undefined ? {} : { source: patch.source }),
    contentHash: patch.contentHash ?? cur.contentHash,
    embeddingState: patch.embeddingState ?? cur.embeddingState,
    updatedAt: patch.now,
  };
  const doc = patch.searchText !== undefined || patch.category !== undefined ? makeDoc(patch.searchText ?? row.doc.tokens.join(' '), next.category) : row.doc;
  m.rows.set(id, { record: next, doc });
  if (next.content !== cur.content || next.category !== cur.category) logText(m, next);
  if (next.content !== cur.content) m.textIndexes.delete(scopeId(scope));
  if (next.contentHash !== cur.contentHash) m.vectors.delete(id);
  if (patch.edges !== undefined) {
    m.edges = m.edges.filter((e) => e.memoryId !== id);
    addEdges(m, scope, id, patch.edges, patch.now);
  }
  return next;
}

function list(m: MemState, ...[scope, query]: Args<'list'>): Result<'list'> {
  const statuses = query.statuses ?? ['active', 'pending'];
  const out = Array.from(m.rows.values(), (r) => r.record).filter(
    (r) =>
      inScope(r, scope) &&
      (query.includeDeleted === true || r.deletedAt === undefined) &&
      statuses.includes(r.status) &&
      (query.categories === undefined || query.categories.length === 0 || query.categories.includes(r.category)) &&
      (query.source === undefined || r.source === query.source) &&
      (query.excludeSources === undefined || r.source === undefined || !query.excludeSources.includes(r.source)) &&
      (query.contentHash === undefined || r.contentHash === query.contentHash),
  );
  out.sort(query.order === 'created_asc' ? (a, b) => (a.createdAt === b.createdAt ? a.id - b.id : a.createdAt < b.createdAt ? -1 : 1) : byUpdatedDesc);
  return out.slice(0, query.limit);
}

function count(m: MemState, ...[scope, query]: Args<'count'>): Result<'count'> {
  const cats = query?.categories ?? [];
  let n = 0;
  for (const { record: r } of m.rows.values()) if (inScope(r, scope) && r.deletedAt === undefined && r.status !== 'retired' && (cats.length === 0 || cats.includes(r.category))) n++;
  return n;
}

function expiredSoftDeletedScopes(m: MemState, cutoff: string): MemoryScope[] {
  const found = new Map<string, MemoryScope>();
  for (const { record: r } of m.rows.values()) {
    if (r.deletedAt === undefined || r.deletedAt >= cutoff) continue;
    const scope: MemoryScope = r.agentId === undefined ? { userId: r.userId } : { userId: r.userId, agentId: r.agentId };
    found.set(scopeId(scope), scope);
  }
  return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
}

function retire(m: MemState, ...[scope, id, options]: Args<'retire'>): boolean {
  const row = owned(m, scope, id, true);
  if (row === undefined || row.record.status === 'retired' || row.record.source === 'user_manual') return false;
  m.rows.set(id, { ...row, record: { ...row.record, status: 'retired', retiredAt: options.now, ...(options.supersededBy === undefined ? {} : { supersededBy: options.supersededBy }) } });
  return true;
}

function textRows(m: MemState, ...[scope, query]: Args<'textRows'>): MemoryTextRow[] {
  const wanted = query?.ids === undefined ? undefined : new Set(query.ids);
  const after = query?.afterId ?? 0;
  const out: MemoryTextRow[] = [];
  for (const { record: r } of m.rows.values()) {
    if (!inScope(r, scope) || r.id <= after || (wanted !== undefined && !wanted.has(r.id))) continue;
    out.push({ id: r.id, content: r.content, category: r.category });
  }
  return out.sort((a, b) => a.id - b.id);
}

function textChanges(m: MemState, ...[scope, since]: Args<'textChanges'>): Result<'textChanges'> {
  const key = scopeId(scope);
  if (since >= m.textSeq) return { seq: m.textSeq, reset: false, ids: [] };
  if (since < m.textPrunedThrough) return { seq: m.textSeq, reset: true, ids: [] };
  return { seq: m.textSeq, reset: false, ids: m.textLog.filter((e) => e.seq > since && e.scope === key).map((e) => e.id) };
}

function saveTextIndex(m: MemState, ...[scope, snapshot]: Args<'saveTextIndex'>): boolean {
  const key = scopeId(scope);
  if (snapshot.seq < m.textPrunedThrough || m.textLog.some((e) => e.seq > snapshot.seq && e.scope === key && e.id <= snapshot.maxId)) return false;
  m.textIndexes.set(key, snapshot.data.slice());
  return true;
}

function searchText(m: MemState, ...[scope, query, filter]: Args<'searchText'>): MemoryScoredId[] {
  const docs = Array.from(m.rows.values());
  const stats = bm25Stats(query, docs.map((r) => r.doc));
  const cats = filter.categories ?? [];
  let found = docs.filter((r) => inScope(r.record, scope) && (cats.length === 0 || cats.includes(r.record.category)) && matches(query, r.doc.tokens));
  if (filter.window !== undefined) found = found.sort((a, b) => b.record.id - a.record.id).slice(0, filter.window);
  const hits: MemoryScoredId[] = found.filter((r) => passes(r.record, scope, filter)).map((r) => ({ id: r.record.id, score: bm25Score(query, r.doc, stats) }));
  return hits.sort((a, b) => b.score - a.score || b.id - a.id).slice(0, filter.limit);
}

function searchLike(m: MemState, ...[scope, needles, filter]: Args<'searchLike'>): MemoryScoredId[] {
  const list = likeNeedles(needles);
  if (list.length === 0) return [];
  const candidates = Array.from(m.rows.values(), (r) => r.record)
    .filter((r) => passes(r, scope, filter) && list.some((n) => r.content.toLowerCase().includes(n)))
    .sort(byUpdatedDesc)
    .slice(0, LIKE_CANDIDATES);
  return scoreLikeMatches(candidates, list, filter.limit);
}

function upsertVectors(m: MemState, ...[scope, list]: Args<'upsertVectors'>): void {
  for (const v of list) {
    if (v.vector.length === 0 || (m.dimension !== undefined && v.vector.length !== m.dimension)) {
      throw new MinaraError('MEMORY_INVALID', `embedding has ${v.vector.length} dimensions but this store's memory vectors have ${m.dimension ?? '?'} (fixed at first use)`);
    }
  }
  for (const v of list) {
    const row = owned(m, scope, v.id, true);
    if (row === undefined || row.record.contentHash !== v.contentHash) continue;
    m.dimension ??= v.vector.length;
    m.vectors.set(v.id, { vector: Float32Array.from(v.vector), contentHash: v.contentHash });
    m.rows.set(v.id, { ...row, record: { ...row.record, embeddingState: 'embedded' } });
  }
}

function searchVector(m: MemState, ...[scope, vector, filter]: Args<'searchVector'>): MemoryScoredId[] {
  if (m.dimension !== undefined && vector.length !== m.dimension) {
    throw queryDimensionMismatch(vector.length, m.dimension);
  }
  const hits: MemoryScoredId[] = [];
  for (const [id, v] of m.vectors) {
    const r = m.rows.get(id)?.record;
    if (r !== undefined && passes(r, scope, filter)) hits.push({ id, score: cosine(vector, v.vector) });
  }
  return topScored(hits, filter.limit);
}

function edgesForEntity(m: MemState, ...[scope, key, options]: Args<'edgesForEntity'>): MemoryEdgeRecord[] {
  const found = m.edges.filter((e) => e.entityKey === key && (options.entityKind === undefined || e.entityKind === options.entityKind) && visibleEdge(m, e, scope));
  found.sort((a, b) => byUpdatedDesc(m.rows.get(a.memoryId)?.record as MemoryRecord, m.rows.get(b.memoryId)?.record as MemoryRecord) || a.id - b.id);
  return found.slice(0, options.limit).map(strip);
}

function stats(m: MemState, scope: MemoryScope): Result<'stats'> {
  const groups: MemoryStatsGroup[] = [];
  for (const { record: r } of m.rows.values()) {
    if (inScope(r, scope)) groups.push({ category: r.category, status: r.status, deleted: r.deletedAt !== undefined, embeddingState: r.embeddingState, n: 1 });
  }
  let vectorCount = 0;
  for (const id of m.vectors.keys()) {
    const row = m.rows.get(id);
    if (row !== undefined && inScope(row.record, scope)) vectorCount++;
  }
  return foldMemoryStats(groups, m.edges.filter((e) => e.userId === scope.userId && (e.agentId ?? undefined) === (scope.agentId ?? undefined)).length, vectorCount);
}

function topEntitiesOf(m: MemState, ...[scope, options]: Args<'topEntities'>): MemoryEntityCount[] {
  const groups = new Map<string, { kind: string; key: string; mems: Set<number>; types: Record<string, number> }>();
  for (const e of m.edges) {
    if (!visibleEdge(m, e, scope)) continue;
    if (options.entityKind === undefined ? e.entityKind === 'ticker_pair' : e.entityKind !== options.entityKind) continue;
    const id = `${e.entityKind}\u0000${e.entityKey}`;
    let g = groups.get(id);
    if (g === undefined) groups.set(id, (g = { kind: e.entityKind, key: e.entityKey, mems: new Set(), types: {} }));
    g.mems.add(e.memoryId);
    g.types[e.edgeType] = (g.types[e.edgeType] ?? 0) + 1;
  }
  return Array.from(groups.values())
    .sort((a, b) => b.mems.size - a.mems.size || (a.key < b.key ? -1 : a.key > b.key ? 1 : a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0))
    .slice(0, options.limit)
    .map((g): MemoryEntityCount => ({ entityKind: g.kind, entityKey: g.key, memoryCount: g.mems.size, edgeTypes: g.types }));
}

function appendConsolidationEvent(m: MemState, ...[scope, event]: Args<'appendConsolidationEvent'>): ConsolidationEvent {
  const { now, ...rest } = event;
  const stored: StoredEvent = { ...rest, id: m.nextEventId++, createdAt: now, userId: scope.userId, agentId: scope.agentId };
  m.events.push(stored);
  const { userId: _u, agentId: _a, ...out } = stored;
  return out;
}

function profileSet(m: MemState, ...[scope, key, value, now, setBy = 'user']: Args<'profileSet'>): ProfileEntry {
  const profile = profileOf(m, scope);
  const current = profile.get(key);
  // The person's value wins over the agent's.
  if (profileWriteKept(current, setBy)) return current as ProfileEntry;
  const entry: ProfileEntry = { key, value, updatedAt: now, setBy };
  profile.set(key, entry);
  return entry;
}

/** Replace a row's record (soft delete, restore, status and embedding-state changes). */
function setRecord(m: MemState, id: number, row: Row, record: MemoryRecord): void {
  m.rows.set(id, { ...row, record });
}

/** The in-memory memory domain. `now` is accepted for parity with other engines. */
export function createInMemoryMemoryStorage(_options: { now: () => Date }): MemoryStorage {
  const m: MemState = {
    rows: new Map(), vectors: new Map(), dimension: undefined, edges: [], events: [], profiles: new Map(), nextId: 1, nextEdgeId: 1, nextEventId: 1,
    textLog: [], textSeq: 0, textPrunedThrough: 0, textIndexes: new Map(),
  };
  return {
    insert: async (scope, row) => insertOne(m, scope, row),
    insertMany: async (scope, rows) => rows.map((row) => insertOne(m, scope, row)),
    get: async (scope, id, options) => owned(m, scope, id, options?.includeDeleted === true)?.record,
    getMany: async (scope, ids) => ids.map((id) => owned(m, scope, id, true)?.record).filter((r): r is MemoryRecord => r !== undefined),
    update: async (...a) => update(m, ...a),
    list: async (...a) => list(m, ...a),
    count: async (...a) => count(m, ...a),
    async softDelete(scope, id, at) {
      const row = owned(m, scope, id);
      if (row === undefined) return false;
      setRecord(m, id, row, { ...row.record, deletedAt: at });
      return true;
    },
    async restore(scope, id) {
      const row = owned(m, scope, id, true);
      if (row?.record.deletedAt === undefined) return false;
      const { deletedAt: _d, ...rest } = row.record;
      setRecord(m, id, row, rest);
      return true;
    },
    async hardDelete(scope, id) {
      if (owned(m, scope, id, true) === undefined) return false;
      removeRows(m, [id]);
      return true;
    },
    async purgeSoftDeleted(scope, cutoff) {
      const ids = Array.from(m.rows.values(), (r) => r.record).filter((r) => inScope(r, scope) && r.deletedAt !== undefined && r.deletedAt < cutoff).map((r) => r.id);
      removeRows(m, ids);
      return ids.length;
    },
    expiredSoftDeletedScopes: async (cutoff) => expiredSoftDeletedScopes(m, cutoff),
    retire: async (...a) => retire(m, ...a),
    async setStatus(scope, id, status) {
      const row = owned(m, scope, id, true);
      if (row === undefined || row.record.status === 'retired') return false;
      setRecord(m, id, row, { ...row.record, status });
      return true;
    },
    textRows: async (...a) => textRows(m, ...a),
    textChanges: async (...a) => textChanges(m, ...a),
    async loadTextIndex(scope) {
      const data = m.textIndexes.get(scopeId(scope));
      return data === undefined ? undefined : data.slice();
    },
    saveTextIndex: async (...a) => saveTextIndex(m, ...a),
    searchText: async (...a) => searchText(m, ...a),
    searchLike: async (...a) => searchLike(m, ...a),
    vectorInfo: async () => ({ available: true, ...(m.dimension === undefined ? {} : { dimensions: m.dimension }) }),
    upsertVectors: async (...a) => upsertVectors(m, ...a),
    async vectorByContentHash(scope, hash) {
      for (const [id, v] of m.vectors) if (v.contentHash === hash && owned(m, scope, id, true) !== undefined) return Float32Array.from(v.vector);
      return undefined;
    },
    searchVector: async (...a) => searchVector(m, ...a),
    async setEmbeddingState(scope, ids, state) {
      for (const id of ids) {
        const row = owned(m, scope, id, true);
        if (row !== undefined) setRecord(m, id, row, { ...row.record, embeddingState: state });
      }
    },
    listByEmbeddingState: async (scope, states, limit) =>
      Array.from(m.rows.values(), (r) => r.record)
        .filter((r) => inScope(r, scope) && r.deletedAt === undefined && r.status !== 'retired' && states.includes(r.embeddingState))
        .sort((a, b) => a.id - b.id)
        .slice(0, limit),
    edgesForEntity: async (...a) => edgesForEntity(m, ...a),
    async edgesForMemories(scope, ids) {
      const set = new Set(ids);
      return m.edges.filter((e) => set.has(e.memoryId) && visibleEdge(m, e, scope)).sort((a, b) => a.memoryId - b.memoryId || a.id - b.id).map(strip);
    },
    stats: async (scope) => stats(m, scope),
    topEntities: async (...a) => topEntitiesOf(m, ...a),
    appendConsolidationEvent: async (...a) => appendConsolidationEvent(m, ...a),
    listConsolidationEvents: async (scope, options) =>
      m.events
        .filter((e) => inScope(e, scope) && (options.factId === undefined || e.factId === options.factId || e.otherId === options.factId))
        .sort((a, b) => b.id - a.id)
        .slice(0, options.limit)
        .map(({ userId: _u, agentId: _a, ...e }) => e),
    profileList: async (scope) => Array.from(profileOf(m, scope).values()),
    profileGet: async (scope, key) => profileOf(m, scope).get(key),
    profileSet: async (...a) => profileSet(m, ...a),
    profileDelete: async (scope, key) => profileOf(m, scope).delete(key),
  };
}
