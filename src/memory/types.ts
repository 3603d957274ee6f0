/**
 * Public types of the memory store.
 */
import type { EmbeddingModel } from 'ai';
import type { MinaraBus } from '../events/bus';
import type { Storage } from '../storage/types';
import type { ConsolidationEvent, EmbeddingState, MemoryScope, MemoryStatus, ProfileAuthor, ProfileEntry } from '../storage/memory-types';
import type { Logger } from '../util/logger';
import type { FactConsolidator } from './consolidator';

/** The categories of the spec. Open to extension: any `/^[a-z][a-z0-9_]{0,39}$/` string is accepted. */
export type MemoryCategory =
  | 'preference'
  | 'observation'
  | 'trade_outcome'
  | 'lesson'
  | 'personalization'
  | 'alert'
  | 'reference'
  | 'fact'
  | (string & {});

/** Provenance of a row (the spec's `source` column). Open to extension. */
export type MemorySource =
  | 'user_manual'
  | 'user_explicit'
  | 'learned_preference'
  | 'inferred'
  | 'chat_extracted'
  | 'agent_recorded'
  | (string & {});

/** Input of {@link MemoryStore.write}. */
export interface MemoryWriteInput {
  readonly category: MemoryCategory;
  readonly content: string;
  /** Optional JSON object (at most 16 KB serialised). `metadata.source` is promoted to `source`. */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
  /** Provenance; defaults to `metadata.source` when that is a valid source string. */
  readonly source?: MemorySource | undefined;
}

/** Input of {@link MemoryStore.update}. Absent fields stay as they are. */
export interface MemoryUpdateInput {
  readonly category?: MemoryCategory | undefined;
  readonly content?: string | undefined;
  /** `null` clears the metadata. */
  readonly metadata?: Readonly<Record<string, unknown>> | null | undefined;
  readonly source?: MemorySource | undefined;
}

/** One memory as the read and search paths return it. */
export interface MemoryHit {
  readonly id: number;
  readonly category: string;
  readonly content: string;
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
  readonly source?: string | undefined;
  /** Ranking score (higher is better); for `read`, 0. */
  readonly score: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A full memory row (from {@link MemoryStore.get}). */
export interface MemoryItem extends Omit<MemoryHit, 'score'> {
  readonly status: MemoryStatus;
  readonly embeddingState: EmbeddingState;
  readonly deletedAt?: string | undefined;
  readonly retiredAt?: string | undefined;
  readonly supersededBy?: number | undefined;
}

/** Search mode: `auto` is hybrid when an embedder and a vector index are available, else BM25. */
export type MemorySearchMode = 'auto' | 'bm25' | 'hybrid';

/** Options of {@link MemoryStore.search}. */
export interface MemorySearchOptions {
  /** @default 10 */
  readonly limit?: number | undefined;
  /** Restrict to one category (combined with any `category:` filter in the query). */
  readonly category?: MemoryCategory | undefined;
  /** @default 'auto' */
  readonly mode?: MemorySearchMode | undefined;
  /** Apply the finance entity boost (`× (1 + 0.3 × overlap)`). @default true */
  readonly entityBoost?: boolean | undefined;
}

/** What path produced a search result; `degraded` says why hybrid was not used when it was asked for. */
export interface MemorySearchInfo {
  readonly hits: MemoryHit[];
  /** `bm25` (FTS5 + entity boost), `hybrid` (FTS5 + vectors, RRF, boost), `like` (substring fallback), `none`. */
  readonly path: 'bm25' | 'hybrid' | 'like' | 'none';
  /** Why the vector arm was skipped: `no_embedder`, `vector_unavailable`, `query_embedding_failed`, `mode_bm25`. */
  readonly degraded?: 'no_embedder' | 'vector_unavailable' | 'query_embedding_failed' | 'mode_bm25' | undefined;
  /** The query was relaxed from AND to OR because the strict form found too few rows. */
  readonly relaxed: boolean;
}

/** Options of {@link MemoryStore.read}. */
export interface MemoryReadOptions {
  readonly category?: MemoryCategory | undefined;
  /** Only rows of this provenance (`chat_extracted`: what the extraction pass learned from conversations). */
  readonly source?: MemorySource | undefined;
  /** @default 20 */
  readonly limit?: number | undefined;
}

/** The frozen memory block a session injects once into its system prompt. */
export interface MemorySnapshot {
  /** The fenced `<memory-context>` block, or `''` when there is nothing to recall. */
  readonly text: string;
  /** Ids of the memories in the block, in rendered order. */
  readonly memoryIds: readonly number[];
  /** Profile keys in the block, in rendered order. */
  readonly profileKeys: readonly string[];
  /** sha256 (hex) of `text`: equal hashes mean a byte-identical block. */
  readonly hash: string;
}

/** Options of {@link MemoryStore.loadSnapshot}. */
export interface LoadSnapshotOptions {
  /** When given, the first snapshot of this session is cached and returned again: frozen for the session. */
  readonly sessionId?: string | undefined;
  /** @default 50 */
  readonly limit?: number | undefined;
}

/** An entity and the memories around it. */
export interface EntityNeighborhood {
  readonly entity: { readonly kind?: string | undefined; readonly key: string };
  /** Memories with an edge to the entity, newest first. */
  readonly memories: ReadonlyArray<{ readonly id: number; readonly edgeTypes: readonly string[]; readonly category: string; readonly content: string; readonly updatedAt: string }>;
  /** Other entities those memories point at, most shared first. */
  readonly related: ReadonlyArray<{ readonly kind: string; readonly key: string; readonly count: number }>;
}

/** Result of a fact-layer consolidation sweep. */
export interface ConsolidationResult {
  /** Pending facts examined. */
  readonly processed: number;
  /** Facts retired as duplicates of an older statement. */
  readonly retired: number;
  /** Facts settled as active. */
  readonly settled: number;
  /** Decisions the LLM consolidator made (0 when disabled). */
  readonly llmDecisions: number;
}

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** Any storage engine (`createSqliteStorage`, `createInMemoryStorage`). */
  readonly storage: Pick<Storage, 'memory' | 'capabilities'>;
  /** The tenant. Required; every call is confined to it. */
  readonly scope: MemoryScope;
  /** Any AI SDK embedding model; without it search is BM25 + entity boost. */
  readonly embedder?: EmbeddingModel | undefined;
  /** The optional LLM contradiction resolver of the fact layer (see `createFactConsolidator`). */
  readonly consolidator?: FactConsolidator | undefined;
  /** Clock. @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** App bus for `memory:written`, `fact:recorded`, …. */
  readonly bus?: MinaraBus | undefined;
  readonly logger?: Logger | undefined;
  /** Largest content in UTF-8 bytes. @default 65536 */
  readonly maxContentBytes?: number | undefined;
  /** Soft-delete retention for {@link MemoryStore.purgeExpiredSoftDeleted}. @default 30 */
  readonly softDeleteRetentionDays?: number | undefined;
  /** Embedding batches in flight at once. @default 2 */
  readonly embeddingConcurrency?: number | undefined;
  /** Values per embedding call. @default 32 */
  readonly embeddingBatchSize?: number | undefined;
  /** Retries of a failed embedding call (AI SDK `maxRetries`). @default 2 */
  readonly embeddingRetries?: number | undefined;
  /** Time budget of the query embedding before search falls back to BM25. @default 2000 */
  readonly queryEmbeddingTimeoutMs?: number | undefined;
  /**
   * Vector hits below this cosine similarity do not enter the fusion (they would only pad results with
   * unrelated rows). Tune per embedding model. @default 0.2
   */
  readonly minVectorSimilarity?: number | undefined;
  /**
   * @deprecated Ignored. Search used to rank only the newest N full-text matches; it now ranks every match of
   * the scope exactly, at the same latency (see docs/memory.md, Ranking).
   */
  readonly ftsRankWindow?: number | undefined;
  /** Debounce of the background fact sweep after `fact:recorded`. @default 250 */
  readonly factSweepDebounceMs?: number | undefined;
}

/** The scoped memory store. Every method is confined to the store's scope. */
export interface MemoryStore {
  readonly scope: MemoryScope;
  /** Write a memory; returns before its embedding is computed. `category: 'fact'` routes to {@link MemoryStore.recordFact}. */
  write(input: MemoryWriteInput): Promise<{ id: number }>;
  /**
   * Write 1–1000 memories in one transaction: every input is validated first (a bad one throws naming its
   * index and nothing is stored), then all rows, their index entries and edges commit together. Returns the
   * ids in input order. `fact` inputs are stored as pending facts, like {@link MemoryStore.recordFact}.
   */
  writeMany(inputs: readonly MemoryWriteInput[]): Promise<Array<{ id: number }>>;
  /** One visible memory (soft-deleted only with `includeDeleted`). */
  get(id: number, options?: { includeDeleted?: boolean }): Promise<MemoryItem | undefined>;
  /** Change a memory; bumps `updatedAt`. Throws NOT_FOUND when absent in this scope. */
  update(id: number, input: MemoryUpdateInput): Promise<MemoryItem>;
  /** Memories newest `updatedAt` first. */
  read(options?: MemoryReadOptions): Promise<MemoryHit[]>;
  /** Ranked search (best first). Never throws on user text. */
  search(query: string, options?: MemorySearchOptions): Promise<MemoryHit[]>;
  /** Like `search`, also saying which path answered and why hybrid was skipped. */
  searchWithInfo(query: string, options?: MemorySearchOptions): Promise<MemorySearchInfo>;
  softDelete(id: number): Promise<boolean>;
  restore(id: number): Promise<boolean>;
  /** Physically delete one memory with its index entries, edges and vector. */
  hardDelete(id: number): Promise<boolean>;
  /** Physically delete soft-deleted rows older than `cutoff` (default: now − retention). */
  purgeExpiredSoftDeleted(cutoff?: Date): Promise<number>;
  /** The user profile key/value store of the scope. */
  readonly profile: {
    get(key: string): Promise<string | undefined>;
    /**
     * Set a key. `setBy: 'agent'` never replaces a value the person set (it returns the person's entry unchanged);
     * the person's writes (the default) always win.
     */
    set(key: string, value: string, options?: { readonly setBy?: ProfileAuthor | undefined }): Promise<ProfileEntry>;
    list(): Promise<ProfileEntry[]>;
    delete(key: string): Promise<boolean>;
  };
  /** Render the frozen `<memory-context>` block. */
  loadSnapshot(options?: LoadSnapshotOptions): Promise<MemorySnapshot>;
  /**
   * Record a fact as pending; a debounced background sweep consolidates it (dedup, then the LLM consolidator).
   * `source` is `agent_recorded` by default; the memory extraction pass records `chat_extracted`. `user_manual`
   * is refused (`MEMORY_INVALID`): a recorded fact never poses as one a person wrote.
   */
  recordFact(content: string, options?: { metadata?: Readonly<Record<string, unknown>> | undefined; source?: MemorySource | undefined }): Promise<{ id: number }>;
  /** Run the fact consolidation now (deterministic dedup, then the LLM consolidator when enabled). */
  consolidatePending(): Promise<ConsolidationResult>;
  /** Consolidation audit rows, newest first. */
  consolidationEvents(options?: { factId?: number; limit?: number }): Promise<ConsolidationEvent[]>;
  /** Memories and related entities around one entity (`BTC`, `$eth`, `EUR/USD`, an address). */
  getEntityNeighborhood(entity: string, options?: { limit?: number }): Promise<EntityNeighborhood>;
  /** Entities most memories point at. */
  topEntities(options?: { limit?: number; kind?: string }): Promise<Array<{ kind: string; key: string; count: number; edgeTypes: Readonly<Record<string, number>> }>>;
  /** Wait until every queued embedding has been computed and stored (or failed). */
  flushEmbeddings(): Promise<void>;
  /** Embed rows still `pending` (or `failed` with `includeFailed`); returns how many were queued. */
  backfillEmbeddings(options?: { includeFailed?: boolean; limit?: number }): Promise<number>;
  /** Wait for background work (embeddings, fact sweep) and stop scheduling more. */
  close(): Promise<void>;
}
