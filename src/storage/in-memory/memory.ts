/**
 * The in-memory memory domain: the same semantics as the SQLite engine (scoping, soft delete, FTS-equivalent
 * BM25 over the same tokens, phrase/AND/OR/prefix, LIKE fallback, exact cosine KNN, edges with the same
 * UNIQUE key, consolidation events, profile in first-set order). For tests and ephemeral agents.
 */
import { MinaraError } from '../../errors/minara-error';
import type {
  ConsolidationEvent,
  EmbeddingState,
  MemoryEdgeInput,
  MemoryEdgeRecord,
  MemoryEntityCount,
  MemoryLookupFilter,
  MemoryRecord,
  MemoryScope,
  MemoryScoredId,
  MemoryStatus,
  MemoryStorage,
  MemoryTextRow,
  NewMemoryRow,
  ProfileEntry,
} from '../memory-types';
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

function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += (a[i] as number) * (b[i] as number);
    na += (a[i] as number) ** 2;
    nb += (b[i] as number) ** 2;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

function makeDoc(searchText: string, category: string): Bm25Doc {
  const tokens = searchText.split(' ').filter((t) => t.length > 0);
  const categoryTokens = category.split(/[^a-z0-9]+/u).filter((t) => t.length > 0).length;
  return { tokens, size: tokens.length + categoryTokens + 1 };
}

/** The in-memory memory domain. `now` is accepted for parity with other engines. */
export function createInMemoryMemoryStorage(_options: { now: () => Date }): MemoryStorage {
  const rows = new Map<number, Row>();
  const vectors = new Map<number, { vector: Float32Array; contentHash: string }>();
  let dimension: number | undefined;
  let edges: Edge[] = [];
  const events: StoredEvent[] = [];
  const profiles = new Map<string, Map<string, ProfileEntry>>();
  let nextId = 1;
  /** The change log of searchable text (`textChanges`): updates of content/category and deletions. */
  let textLog: Array<{ seq: number; scope: string; id: number }> = [];
  let textSeq = 0;
  let textPrunedThrough = 0;
  const logText = (record: MemoryRecord) => {
    textLog.push({ seq: ++textSeq, scope: scopeId({ userId: record.userId, agentId: record.agentId }), id: record.id });
    if (textLog.length > 20_000) {
      textLog = textLog.slice(10_000);
      textPrunedThrough = (textLog[0]?.seq ?? textSeq + 1) - 1;
    }
  };
  let nextEdgeId = 1;
  let nextEventId = 1;

  const visible = (r: MemoryRecord, statuses: readonly string[] = ['active', 'pending']) => r.deletedAt === undefined && statuses.includes(r.status);
  const owned = (scope: MemoryScope, id: number, includeDeleted = false): Row | undefined => {
    const row = rows.get(id);
    if (row === undefined || !inScope(row.record, scope)) return undefined;
    if (!includeDeleted && row.record.deletedAt !== undefined) return undefined;
    return row;
  };
  const passes = (r: MemoryRecord, scope: MemoryScope, filter: MemoryLookupFilter) =>
    inScope(r, scope) &&
    visible(r, filter.statuses) &&
    (filter.categories === undefined || filter.categories.length === 0 || filter.categories.includes(r.category)) &&
    !(filter.excludeIds ?? []).includes(r.id);
  const addEdges = (scope: MemoryScope, memoryId: number, list: readonly MemoryEdgeInput[], now: string) => {
    for (const e of list) {
      const dup = edges.some((x) => x.memoryId === memoryId && x.entityKind === e.entityKind && x.entityKey === e.entityKey && x.edgeType === e.edgeType);
      if (!dup) edges.push({ ...e, id: nextEdgeId++, memoryId, createdAt: now, userId: scope.userId, agentId: scope.agentId });
    }
  };
  /** Saved lexical index snapshots per scope (`saveTextIndex`), dropped when a row of the scope goes or its content changes. */
  const textIndexes = new Map<string, Uint8Array>();
  const removeRows = (ids: readonly number[]) => {
    for (const id of ids) {
      const gone = rows.get(id);
      if (gone !== undefined) {
        logText(gone.record);
        textIndexes.delete(scopeId({ userId: gone.record.userId, agentId: gone.record.agentId }));
      }
      rows.delete(id);
      vectors.delete(id);
    }
    const gone = new Set(ids);
    edges = edges.filter((e) => !gone.has(e.memoryId));
  };
  const visibleEdge = (e: Edge, scope: MemoryScope) => {
    if (!inScope(e, scope)) return false;
    const r = rows.get(e.memoryId)?.record;
    return r !== undefined && inScope(r, scope) && r.deletedAt === undefined && r.status !== 'retired';
  };
  const strip = ({ id: _id, userId: _u, agentId: _a, ...rest }: Edge): MemoryEdgeRecord => rest;
  const byUpdatedDesc = (a: MemoryRecord, b: MemoryRecord) => (a.updatedAt === b.updatedAt ? b.id - a.id : a.updatedAt < b.updatedAt ? 1 : -1);
  const profileOf = (scope: MemoryScope) => {
    let p = profiles.get(scopeId(scope));
    if (p === undefined) profiles.set(scopeId(scope), (p = new Map()));
    return p;
  };

  const insertOne = (scope: MemoryScope, row: NewMemoryRow): MemoryRecord => {
    const id = nextId++;
    const record: MemoryRecord = {
      id,
      userId: scope.userId,
      ...(scope.agentId === undefined ? {} : { agentId: scope.agentId }),
      category: row.category,
      content: row.content,
      ...(row.metadata === undefined ? {} : { metadata: structuredClone(row.metadata) }),
      ...(row.source === undefined ? {} : { source: row.source }),
      status: row.status,
      contentHash: row.contentHash,
      embeddingState: row.embeddingState,
      createdAt: row.now,
      updatedAt: row.now,
    };
    rows.set(id, { record, doc: makeDoc(row.searchText, row.category) });
    addEdges(scope, id, row.edges, row.now);
    return record;
  };

  return {
    async insert(scope, row) {
      return insertOne(scope, row);
    },
    async insertMany(scope, list) {
      return list.map((row) => insertOne(scope, row));
    },
    async get(scope, id, options) {
      return owned(scope, id, options?.includeDeleted === true)?.record;
    },
    async getMany(scope, ids) {
      return ids.map((id) => owned(scope, id, true)?.record).filter((r): r is MemoryRecord => r !== undefined);
    },
    async update(scope, id, patch) {
      const row = owned(scope, id);
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
      rows.set(id, { record: next, doc });
      if (next.content !== cur.content || next.category !== cur.category) logText(next);
      if (next.content !== cur.content) textIndexes.delete(scopeId(scope));
      if (next.contentHash !== cur.contentHash) vectors.delete(id);
      if (patch.edges !== undefined) {
        edges = edges.filter((e) => e.memoryId !== id);
        addEdges(scope, id, patch.edges, patch.now);
      }
      return next;
    },
    async list(scope, query) {
      const statuses = query.statuses ?? ['active', 'pending'];
      const out = Array.from(rows.values(), (r) => r.record).filter(
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
    },
    async count(scope, query) {
      const cats = query?.categories ?? [];
      let n = 0;
      for (const { record: r } of rows.values()) if (inScope(r, scope) && r.deletedAt === undefined && r.status !== 'retired' && (cats.length === 0 || cats.includes(r.category))) n++;
      return n;
    },
    async softDelete(scope, id, at) {
      const row = owned(scope, id);
      if (row === undefined) return false;
      rows.set(id, { ...row, record: { ...row.record, deletedAt: at } });
      return true;
    },
    async restore(scope, id) {
      const row = owned(scope, id, true);
      if (row?.record.deletedAt === undefined) return false;
      const { deletedAt: _d, ...rest } = row.record;
      rows.set(id, { ...row, record: rest });
      return true;
    },
    async hardDelete(scope, id) {
      if (owned(scope, id, true) === undefined) return false;
      removeRows([id]);
      return true;
    },
    async purgeSoftDeleted(scope, cutoff) {
      const ids = Array.from(rows.values(), (r) => r.record).filter((r) => inScope(r, scope) && r.deletedAt !== undefined && r.deletedAt < cutoff).map((r) => r.id);
      removeRows(ids);
      return ids.length;
    },
    async expiredSoftDeletedScopes(cutoff) {
      const found = new Map<string, MemoryScope>();
      for (const { record: r } of rows.values()) {
        if (r.deletedAt === undefined || r.deletedAt >= cutoff) continue;
        const scope: MemoryScope = r.agentId === undefined ? { userId: r.userId } : { userId: r.userId, agentId: r.agentId };
        found.set(scopeId(scope), scope);
      }
      return [...found.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, s]) => s);
    },

    async retire(scope, id, options) {
      const row = owned(scope, id, true);
      if (row === undefined || row.record.status === 'retired' || row.record.source === 'user_manual') return false;
      rows.set(id, { ...row, record: { ...row.record, status: 'retired', retiredAt: options.now, ...(options.supersededBy === undefined ? {} : { supersededBy: options.supersededBy }) } });
      return true;
    },
    async setStatus(scope, id, status) {
      const row = owned(scope, id, true);
      if (row === undefined || row.record.status === 'retired') return false;
      rows.set(id, { ...row, record: { ...row.record, status } });
      return true;
    },
    async textRows(scope, query) {
      const wanted = query?.ids === undefined ? undefined : new Set(query.ids);
      const after = query?.afterId ?? 0;
      const out: MemoryTextRow[] = [];
      for (const { record: r } of rows.values()) {
        if (!inScope(r, scope) || r.id <= after || (wanted !== undefined && !wanted.has(r.id))) continue;
        out.push({ id: r.id, content: r.content, category: r.category });
      }
      return out.sort((a, b) => a.id - b.id);
    },
    async textChanges(scope, since) {
      const key = scopeId(scope);
      if (since >= textSeq) return { seq: textSeq, reset: false, ids: [] };
      if (since < textPrunedThrough) return { seq: textSeq, reset: true, ids: [] };
      return { seq: textSeq, reset: false, ids: textLog.filter((e) => e.seq > since && e.scope === key).map((e) => e.id) };
    },
    async loadTextIndex(scope) {
      const data = textIndexes.get(scopeId(scope));
      return data === undefined ? undefined : data.slice();
    },
    async saveTextIndex(scope, snapshot) {
      const key = scopeId(scope);
      if (snapshot.seq < textPrunedThrough || textLog.some((e) => e.seq > snapshot.seq && e.scope === key && e.id <= snapshot.maxId)) return false;
      textIndexes.set(key, snapshot.data.slice());
      return true;
    },
    async searchText(scope, query, filter) {
      const docs = Array.from(rows.values());
      const stats = bm25Stats(query, docs.map((r) => r.doc));
      const cats = filter.categories ?? [];
      let found = docs.filter((r) => inScope(r.record, scope) && (cats.length === 0 || cats.includes(r.record.category)) && matches(query, r.doc.tokens));
      if (filter.window !== undefined) found = found.sort((a, b) => b.record.id - a.record.id).slice(0, filter.window);
      const hits: MemoryScoredId[] = found.filter((r) => passes(r.record, scope, filter)).map((r) => ({ id: r.record.id, score: bm25Score(query, r.doc, stats) }));
      return hits.sort((a, b) => b.score - a.score || b.id - a.id).slice(0, filter.limit);
    },
    async searchLike(scope, needles, filter) {
      const list = needles.map((n) => n.toLowerCase()).filter((n) => n.length > 0).slice(0, 16);
      if (list.length === 0) return [];
      const candidates = Array.from(rows.values(), (r) => r.record)
        .filter((r) => passes(r, scope, filter) && list.some((n) => r.content.toLowerCase().includes(n)))
        .sort(byUpdatedDesc)
        .slice(0, 500);
      return candidates
        .map((r) => ({ id: r.id, score: list.filter((n) => r.content.toLowerCase().includes(n)).length }))
        .sort((a, b) => b.score - a.score)
        .slice(0, filter.limit);
    },
    async vectorInfo() {
      return { available: true, ...(dimension === undefined ? {} : { dimensions: dimension }) };
    },
    async upsertVectors(scope, list) {
      for (const v of list) {
        if (v.vector.length === 0 || (dimension !== undefined && v.vector.length !== dimension)) {
          throw new MinaraError('MEMORY_INVALID', `embedding has ${v.vector.length} dimensions but this store's memory vectors have ${dimension ?? '?'} (fixed at first use)`);
        }
      }
      for (const v of list) {
        const row = owned(scope, v.id, true);
        if (row === undefined || row.record.contentHash !== v.contentHash) continue;
        dimension ??= v.vector.length;
        vectors.set(v.id, { vector: Float32Array.from(v.vector), contentHash: v.contentHash });
        rows.set(v.id, { ...row, record: { ...row.record, embeddingState: 'embedded' } });
      }
    },
    async vectorByContentHash(scope, hash) {
      for (const [id, v] of vectors) if (v.contentHash === hash && owned(scope, id, true) !== undefined) return Float32Array.from(v.vector);
      return undefined;
    },
    async searchVector(scope, vector, filter) {
      if (dimension !== undefined && vector.length !== dimension) {
        throw new MinaraError('MEMORY_INVALID', `query embedding has ${vector.length} dimensions but stored memory vectors have ${dimension}`);
      }
      const hits: MemoryScoredId[] = [];
      for (const [id, v] of vectors) {
        const r = rows.get(id)?.record;
        if (r !== undefined && passes(r, scope, filter)) hits.push({ id, score: cosine(vector, v.vector) });
      }
      return hits.sort((a, b) => b.score - a.score || b.id - a.id).slice(0, filter.limit);
    },
    async setEmbeddingState(scope, ids, state) {
      for (const id of ids) {
        const row = owned(scope, id, true);
        if (row !== undefined) rows.set(id, { ...row, record: { ...row.record, embeddingState: state } });
      }
    },
    async listByEmbeddingState(scope, states, limit) {
      return Array.from(rows.values(), (r) => r.record)
        .filter((r) => inScope(r, scope) && r.deletedAt === undefined && r.status !== 'retired' && states.includes(r.embeddingState))
        .sort((a, b) => a.id - b.id)
        .slice(0, limit);
    },
    async edgesForEntity(scope, key, options) {
      const found = edges.filter((e) => e.entityKey === key && (options.entityKind === undefined || e.entityKind === options.entityKind) && visibleEdge(e, scope));
      found.sort((a, b) => byUpdatedDesc(rows.get(a.memoryId)?.record as MemoryRecord, rows.get(b.memoryId)?.record as MemoryRecord) || a.id - b.id);
      return found.slice(0, options.limit).map(strip);
    },
    async edgesForMemories(scope, ids) {
      const set = new Set(ids);
      return edges
        .filter((e) => set.has(e.memoryId) && visibleEdge(e, scope))
        .sort((a, b) => a.memoryId - b.memoryId || a.id - b.id)
        .map(strip);
    },
    async stats(scope) {
      const grouped = new Map<string, { category: string; status: MemoryStatus; count: number }>();
      const embedding: Record<EmbeddingState, number> = { pending: 0, embedded: 0, failed: 0, skipped: 0 };
      let deleted = 0;
      let vectorCount = 0;
      for (const { record: r } of rows.values()) {
        if (!inScope(r, scope)) continue;
        if (r.deletedAt !== undefined) {
          deleted++;
          continue;
        }
        embedding[r.embeddingState]++;
        const key = `${r.category}\u0000${r.status}`;
        const g = grouped.get(key) ?? { category: r.category, status: r.status, count: 0 };
        g.count++;
        grouped.set(key, g);
      }
      for (const id of vectors.keys()) {
        const row = rows.get(id);
        if (row !== undefined && inScope(row.record, scope)) vectorCount++;
      }
      const sorted = [...grouped.values()].sort((a, b) => (a.category < b.category ? -1 : a.category > b.category ? 1 : a.status < b.status ? -1 : a.status > b.status ? 1 : 0));
      return { rows: sorted, deleted, embedding, edges: edges.filter((e) => e.userId === scope.userId && (e.agentId ?? undefined) === (scope.agentId ?? undefined)).length, vectors: vectorCount };
    },
    async topEntities(scope, options) {
      const groups = new Map<string, { kind: string; key: string; mems: Set<number>; types: Record<string, number> }>();
      for (const e of edges) {
        if (!visibleEdge(e, scope)) continue;
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
    },
    async appendConsolidationEvent(scope, event) {
      const { now, ...rest } = event;
      const stored: StoredEvent = { ...rest, id: nextEventId++, createdAt: now, userId: scope.userId, agentId: scope.agentId };
      events.push(stored);
      const { userId: _u, agentId: _a, ...out } = stored;
      return out;
    },
    async listConsolidationEvents(scope, options) {
      return events
        .filter((e) => inScope(e, scope) && (options.factId === undefined || e.factId === options.factId || e.otherId === options.factId))
        .sort((a, b) => b.id - a.id)
        .slice(0, options.limit)
        .map(({ userId: _u, agentId: _a, ...e }) => e);
    },
    async profileList(scope) {
      return Array.from(profileOf(scope).values());
    },
    async profileGet(scope, key) {
      return profileOf(scope).get(key);
    },
    async profileSet(scope, key, value, now, setBy = 'user') {
      const profile = profileOf(scope);
      const current = profile.get(key);
      // The person's value wins over the agent's.
      if (current !== undefined && current.setBy !== 'agent' && setBy === 'agent') return current;
      const entry: ProfileEntry = { key, value, updatedAt: now, setBy };
      profile.set(key, entry);
      return entry;
    },
    async profileDelete(scope, key) {
      return profileOf(scope).delete(key);
    },
  };
}
