/**
 * The memory domain of {@link Storage}: the engine-level operations the memory store
 * (`createMemoryStore`) is built on. Engines implement storage, indexing and lookup; ranking (RRF, entity
 * boost), query sanitising, validation and text segmentation live in `src/memory` and reach the engine
 * already prepared (a {@link MemoryQueryNode} tree of pre-tokenised terms, a `searchText` per row).
 *
 * Tenancy: every operation takes a {@link MemoryScope}, and every statement an engine runs filters on
 * `user_id` and on the exact `agent_id` of the scope (a scope without `agentId` sees only rows whose
 * `agent_id` is null). Metadata never influences scoping.
 *
 * Ids are positive integers (SQLite `INTEGER PRIMARY KEY AUTOINCREMENT`; never reused). Timestamps are
 * ISO-8601 strings in UTC supplied by the caller (`now`), so a fake clock drives every engine alike.
 */
/** The tenant a memory belongs to. `agentId` narrows the scope to one agent of the user. */
export interface MemoryScope {
  /** Required, non-empty. */
  readonly userId: string;
  /** Optional agent. A scope without it sees only user-level rows (agent_id null); with it, only that agent's rows. */
  readonly agentId?: string | undefined;
}

/** Lifecycle of a row's vector. `pending` until embedded (or forever when no embedder is configured). */
export type EmbeddingState = 'pending' | 'embedded' | 'failed' | 'skipped';

/**
 * Lifecycle of a row in the general fact layer. Ordinary memories are `active`; a fact recorded by the agent
 * starts `pending` until consolidation settles it; a superseded or duplicate fact becomes `retired` (kept for
 * the audit trail, excluded from every read path).
 */
export type MemoryStatus = 'active' | 'pending' | 'retired';

/** One stored memory row. */
export interface MemoryRecord {
  readonly id: number;
  readonly userId: string;
  readonly agentId?: string | undefined;
  readonly category: string;
  readonly content: string;
  /** Parsed metadata JSON object, when present. */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
  /** Provenance (`user_manual`, `agent_recorded`, …), promoted from `metadata.source`. */
  readonly source?: string | undefined;
  readonly status: MemoryStatus;
  /** sha256 (hex) of the normalised content: embedding cache key and exact-dedup key. */
  readonly contentHash: string;
  readonly embeddingState: EmbeddingState;
  readonly deletedAt?: string | undefined;
  readonly retiredAt?: string | undefined;
  /** The row that superseded this one, when retired by consolidation. */
  readonly supersededBy?: number | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A typed edge from a memory to an entity, as the extractor emits it. */
export interface MemoryEdgeInput {
  /** `ticker`, `chain`, `address`, `forex`, `ticker_pair`, `scenario`, … */
  readonly entityKind: string;
  /** Normalised key (`BTC`, `base`, `0xabc…`, `EURUSD`, `BTC|ETH`, a scenario id). */
  readonly entityKey: string;
  /** `holds`, `exited`, `traded`, `watched`, `mentions`, `co_occurs_with`, `belongs_to_scenario`. */
  readonly edgeType: string;
  readonly weight: number;
}

/** A row to insert. Engines insert the row, index it and write its edges in one transaction. */
export interface NewMemoryRow {
  readonly category: string;
  readonly content: string;
  /** The text the full-text index sees (content with unsegmented scripts split into bigrams). */
  readonly searchText: string;
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
  readonly source?: string | undefined;
  readonly status: MemoryStatus;
  readonly contentHash: string;
  readonly embeddingState: EmbeddingState;
  readonly edges: readonly MemoryEdgeInput[];
  readonly now: string;
}

/** Fields an update may change. `updatedAt` is always bumped to `now`. */
export interface MemoryRowPatch {
  readonly category?: string | undefined;
  readonly content?: string | undefined;
  readonly searchText?: string | undefined;
  /** `null` clears the metadata. */
  readonly metadata?: Readonly<Record<string, unknown>> | null | undefined;
  readonly source?: string | undefined;
  readonly contentHash?: string | undefined;
  readonly embeddingState?: EmbeddingState | undefined;
  /** When given, replaces the row's edges (same transaction). */
  readonly edges?: readonly MemoryEdgeInput[] | undefined;
  readonly now: string;
}

/**
 * A full-text query, already sanitised and tokenised by the memory layer. Every `text`/`tokens` entry is
 * one lower-case token as the `unicode61` tokenizer would produce it (letters and digits only), so engines
 * can compile it without escaping concerns.
 */
export type MemoryQueryNode =
  | { readonly kind: 'term'; readonly text: string; readonly prefix?: boolean | undefined }
  | { readonly kind: 'phrase'; readonly tokens: readonly string[] }
  | { readonly kind: 'and'; readonly children: readonly MemoryQueryNode[] }
  | { readonly kind: 'or'; readonly children: readonly MemoryQueryNode[] };

/** Filters shared by the ranked lookups. Retired and soft-deleted rows are always excluded. */
export interface MemoryLookupFilter {
  /** Restrict to these categories (OR). Empty or absent: every category. */
  readonly categories?: readonly string[] | undefined;
  /** Restrict to these statuses. @default ['active', 'pending'] */
  readonly statuses?: readonly MemoryStatus[] | undefined;
  /** Exclude these ids. */
  readonly excludeIds?: readonly number[] | undefined;
  readonly limit: number;
  /**
   * Full-text only: rank at most this many matches, the newest (highest id) first, so a very common term
   * costs a bounded amount. Absent: rank every match.
   */
  readonly window?: number | undefined;
}

/** One row as the lexical index of the memory layer reads it. */
export interface MemoryTextRow {
  readonly id: number;
  readonly content: string;
  readonly category: string;
}

/** What {@link MemoryStorage.saveTextIndex} stores. */
export interface MemoryTextIndexSnapshot {
  /** The encoded index (opaque to the engine). */
  readonly data: Uint8Array;
  /** The change-log position (from {@link MemoryStorage.textChanges}) the index's rows were read after. */
  readonly seq: number;
  /** The highest row id the index has seen. */
  readonly maxId: number;
}

/** What {@link MemoryStorage.textChanges} returns. */
export interface MemoryTextChanges {
  /** The log's current sequence number: pass it as `since` next time. */
  readonly seq: number;
  /**
   * True when the log no longer holds every change after `since` (it was pruned): the caller must reload
   * the scope from {@link MemoryStorage.textRows}.
   */
  readonly reset: boolean;
  /** Ids of the scope changed or deleted after `since` (may repeat). */
  readonly ids: readonly number[];
}

/** One ranked id; higher `score` is better. */
export interface MemoryScoredId {
  readonly id: number;
  readonly score: number;
}

/** Options of {@link MemoryStorage.list}. */
export interface MemoryListQuery {
  readonly categories?: readonly string[] | undefined;
  readonly statuses?: readonly MemoryStatus[] | undefined;
  readonly source?: string | undefined;
  /** Leave out rows of these sources (the frozen snapshot leaves out `trade_case` rows). */
  readonly excludeSources?: readonly string[] | undefined;
  /** Only rows with this content hash. */
  readonly contentHash?: string | undefined;
  /** Include soft-deleted rows. @default false */
  readonly includeDeleted?: boolean | undefined;
  /** `updated_desc` (default, ties by id desc) or `created_asc` (ties by id asc). */
  readonly order?: 'updated_desc' | 'created_asc' | undefined;
  readonly limit: number;
}

/** A stored vector and its row. */
export interface MemoryVectorInput {
  readonly id: number;
  /** The content hash the vector was computed for; a row whose content changed since is left alone. */
  readonly contentHash: string;
  readonly vector: Float32Array;
}

/** One stored edge joined with its (visible) memory. */
export interface MemoryEdgeRecord extends MemoryEdgeInput {
  readonly memoryId: number;
  readonly createdAt: string;
}

/** Row counts of a scope for health reports (`runDoctor`). */
export interface MemoryStats {
  /** Rows by category and status; soft-deleted rows are counted under `deleted`, not here. */
  readonly rows: ReadonlyArray<{ readonly category: string; readonly status: MemoryStatus; readonly count: number }>;
  /** Soft-deleted rows waiting for the purge. */
  readonly deleted: number;
  /** Rows (not soft-deleted) by embedding state. */
  readonly embedding: Readonly<Record<EmbeddingState, number>>;
  /** Edges of the scope's rows. */
  readonly edges: number;
  /** Stored vectors of the scope's rows. */
  readonly vectors: number;
}

/** An entity and how often the visible memories of a scope point at it. */
export interface MemoryEntityCount {
  readonly entityKind: string;
  readonly entityKey: string;
  /** Distinct visible memories with at least one edge to the entity. */
  readonly memoryCount: number;
  /** Edge count per edge type. */
  readonly edgeTypes: Readonly<Record<string, number>>;
}

/** The outcome a consolidation pass recorded. */
export type ConsolidationDecision = 'retired_duplicate' | 'superseded' | 'kept_both' | 'kept_protected' | 'skipped';

/** One row of `memory_consolidation_events` to append. */
export interface ConsolidationEventInput {
  /** `dedup` (deterministic) or `llm` (FactConsolidator). */
  readonly pass: 'dedup' | 'llm';
  readonly decision: ConsolidationDecision;
  /** The fact being settled. */
  readonly factId: number;
  /** The older fact it was compared with, if any. */
  readonly otherId?: number | undefined;
  readonly reason: string;
  /** Model id for `llm` decisions. */
  readonly model?: string | undefined;
  /** Raw model verdict (JSON) for `llm` decisions, before invariants were applied. */
  readonly modelVerdict?: string | undefined;
  readonly now: string;
}

/** One stored consolidation event. */
export interface ConsolidationEvent extends Omit<ConsolidationEventInput, 'now'> {
  readonly id: number;
  readonly createdAt: string;
}

/** Who set a profile entry: the person (through an editor, the CLI, an import or an approved constraint) or the agent. */
export type ProfileAuthor = 'user' | 'agent';

/** One profile entry. */
export interface ProfileEntry {
  readonly key: string;
  readonly value: string;
  readonly updatedAt: string;
  /** Who set it last; entries stored before the column existed are the person's. @default 'user' */
  readonly setBy?: ProfileAuthor | undefined;
}

/** Vector-index facts of an engine. */
export interface MemoryVectorInfo {
  /** A vector index can be used (SQLite: sqlite-vec loaded). */
  readonly available: boolean;
  /** Why not, when not. */
  readonly unavailableReason?: string | undefined;
  /** Dimension fixed at first use, when vectors exist. */
  readonly dimensions?: number | undefined;
}

/**
 * The memory domain every storage engine implements. All methods are async and scoped.
 * Writes that touch several tables (row + full-text index + edges) are one transaction.
 */
export interface MemoryStorage {
  /** Insert a row, index it and write its edges atomically. */
  insert(scope: MemoryScope, row: NewMemoryRow): Promise<MemoryRecord>;
  /** Insert several rows in one transaction: all of them (in order, ids ascending) or none. */
  insertMany(scope: MemoryScope, rows: readonly NewMemoryRow[]): Promise<MemoryRecord[]>;
  /** One row of the scope (soft-deleted rows only with `includeDeleted`). */
  get(scope: MemoryScope, id: number, options?: { includeDeleted?: boolean | undefined }): Promise<MemoryRecord | undefined>;
  /** Rows of the scope by id, in no particular order; ids outside the scope are silently absent. */
  getMany(scope: MemoryScope, ids: readonly number[]): Promise<MemoryRecord[]>;
  /** Update a visible (not soft-deleted) row; undefined when it does not exist in the scope. */
  update(scope: MemoryScope, id: number, patch: MemoryRowPatch): Promise<MemoryRecord | undefined>;
  /** Rows of the scope, newest `updated_at` first unless `order` says otherwise. */
  list(scope: MemoryScope, query: MemoryListQuery): Promise<MemoryRecord[]>;
  /** Count visible rows (not soft-deleted, not retired). */
  count(scope: MemoryScope, query?: { categories?: readonly string[] | undefined }): Promise<number>;
  /** Set `deleted_at`; false when absent or already deleted. */
  softDelete(scope: MemoryScope, id: number, at: string): Promise<boolean>;
  /** Clear `deleted_at`; false when absent or not deleted. */
  restore(scope: MemoryScope, id: number, now: string): Promise<boolean>;
  /** Physically delete one row (its index entries, edges and vector go with it). */
  hardDelete(scope: MemoryScope, id: number): Promise<boolean>;
  /** Physically delete soft-deleted rows with `deleted_at < cutoff`; returns how many. */
  purgeSoftDeleted(scope: MemoryScope, cutoff: string): Promise<number>;
  /**
   * Every scope of the file or database that holds soft-deleted rows with `deleted_at < cutoff`, so a purge job can
   * reach tenants this process does not serve. Optional for engines written elsewhere; the built-in ones have it.
   */
  expiredSoftDeletedScopes?(cutoff: string): Promise<MemoryScope[]>;
  /** Mark a row retired (fact layer). Never applies to rows with `source = 'user_manual'`. */
  retire(scope: MemoryScope, id: number, options: { supersededBy?: number | undefined; now: string }): Promise<boolean>;
  /** Settle a pending fact as active. */
  setStatus(scope: MemoryScope, id: number, status: MemoryStatus): Promise<boolean>;

  /**
   * The scope's stored rows for the lexical index of the memory layer (`src/memory/lexical-cache.ts`, which
   * ranks): every row of the scope whatever its status or `deleted_at`, id ascending. `afterId`: only rows with
   * a higher id (the rows added since the caller last looked); `ids`: only these ids (rows the change log
   * named). Neither: every row.
   */
  textRows(scope: MemoryScope, query?: { afterId?: number | undefined; ids?: readonly number[] | undefined }): Promise<MemoryTextRow[]>;
  /**
   * The change log of searchable text: ids of the scope whose `content` or `category` changed, or that were
   * physically deleted, after sequence number `since`. Inserts are not logged (they are found by id).
   */
  textChanges(scope: MemoryScope, since: number): Promise<MemoryTextChanges>;
  /**
   * The scope's saved lexical index snapshot (the bytes last stored by {@link MemoryStorage.saveTextIndex}),
   * or `undefined`. The memory layer checks the bytes itself and ignores ones it cannot use. Optional for
   * engines written elsewhere (the first lookup of a scope in a process then reads every row); the built-in
   * engines have it.
   */
  loadTextIndex?(scope: MemoryScope): Promise<Uint8Array | undefined>;
  /**
   * Store the scope's lexical index snapshot, replacing any, unless a row of the scope with an id up to
   * `maxId` appears in the change log after position `seq` (or the log was pruned past `seq`): the snapshot
   * could then hold text that is no longer stored. Check and write are atomic with respect to other writers.
   * The engine must drop the scope's snapshot whenever one of its rows is deleted or its `content` changes.
   * Returns whether it stored the snapshot.
   */
  saveTextIndex?(scope: MemoryScope, snapshot: MemoryTextIndexSnapshot): Promise<boolean>;

  /**
   * Full-text match ranked by the engine's own BM25 (higher is better; file-wide statistics on SQLite).
   * Not used by memory search, which ranks in the memory layer over {@link MemoryStorage.textRows}; kept
   * for engine-level tools. May throw on an engine error.
   */
  searchText(scope: MemoryScope, query: MemoryQueryNode, filter: MemoryLookupFilter): Promise<MemoryScoredId[]>;
  /** Substring fallback: rows whose content contains any of `needles` (case-insensitive), scored by how many. */
  searchLike(scope: MemoryScope, needles: readonly string[], filter: MemoryLookupFilter): Promise<MemoryScoredId[]>;

  /** Vector index facts. */
  vectorInfo(): Promise<MemoryVectorInfo>;
  /** Store vectors and mark the rows `embedded`. Throws MEMORY_INVALID when the dimension differs from the fixed one. */
  upsertVectors(scope: MemoryScope, vectors: readonly MemoryVectorInput[]): Promise<void>;
  /** A stored vector of any visible-or-not row in the scope with this content hash (embedding reuse). */
  vectorByContentHash(scope: MemoryScope, contentHash: string): Promise<Float32Array | undefined>;
  /** Nearest visible rows by cosine similarity (score = similarity, higher is better). */
  searchVector(scope: MemoryScope, vector: Float32Array, filter: MemoryLookupFilter): Promise<MemoryScoredId[]>;
  /** Set `embedding_state` on rows of the scope. */
  setEmbeddingState(scope: MemoryScope, ids: readonly number[], state: EmbeddingState): Promise<void>;
  /** Rows of the scope in a given embedding state, oldest first (backfill). */
  listByEmbeddingState(scope: MemoryScope, states: readonly EmbeddingState[], limit: number): Promise<MemoryRecord[]>;

  /** Edges to an entity from visible rows of the scope. `entityKind` narrows the match. */
  edgesForEntity(scope: MemoryScope, entityKey: string, options: { entityKind?: string | undefined; limit: number }): Promise<MemoryEdgeRecord[]>;
  /** Every edge of the given (visible) rows. */
  edgesForMemories(scope: MemoryScope, ids: readonly number[]): Promise<MemoryEdgeRecord[]>;
  /** Entities ranked by how many visible rows point at them (`ticker_pair` only when asked for by kind). */
  topEntities(scope: MemoryScope, options: { entityKind?: string | undefined; limit: number }): Promise<MemoryEntityCount[]>;
  /** Row, embedding-state, edge and vector counts of the scope (one pass; for health reports). */
  stats(scope: MemoryScope): Promise<MemoryStats>;

  /** Append a consolidation audit row. */
  appendConsolidationEvent(scope: MemoryScope, event: ConsolidationEventInput): Promise<ConsolidationEvent>;
  /** Consolidation audit rows, newest first. */
  listConsolidationEvents(scope: MemoryScope, options: { factId?: number | undefined; limit: number }): Promise<ConsolidationEvent[]>;

  /** Profile entries in the order they were first set. */
  profileList(scope: MemoryScope): Promise<ProfileEntry[]>;
  profileGet(scope: MemoryScope, key: string): Promise<ProfileEntry | undefined>;
  /**
   * Set a profile entry. The person's value wins: a write with `setBy: 'agent'` leaves an entry the person set
   * unchanged (atomically, in the same statement) and returns that entry. @param setBy @default 'user'
   */
  profileSet(scope: MemoryScope, key: string, value: string, now: string, setBy?: ProfileAuthor): Promise<ProfileEntry>;
  profileDelete(scope: MemoryScope, key: string): Promise<boolean>;
}
