/**
 * The storage contract: one async interface split by domain, so other engines (Postgres, D1, …) can
 * implement it. Nothing here imports an implementation. `createSqliteStorage` (`@minara/agent/sqlite`)
 * is the embedded default and `createInMemoryStorage` (`@minara/agent/testing`) serves tests; one shared
 * contract suite runs against both.
 *
 * Timestamps are ISO-8601 strings in UTC. Ids are strings unless a domain says otherwise.
 */
import type { ArtifactStorage, FileStorage } from './artifact-types';
import type { AlertStorage, WorkflowRunStorage } from './automation-types';
import type { AuditChainHead, AuditChainKeyOptions, AuditChainLink, AuditKind, AuditOutcome, AuditVerifyOptions, AuditVerifyReport } from './audit-types';
import type { JobStorage } from './job-types';
import type { LearningStorage } from './learning-types';
import type { UsageStorage } from './usage-types';
import type { MemoryStorage } from './memory-types';
import type { TradingStorage } from './trading-types';
import type { ControlStorage } from './control-types';

/** This instance's identity and secret, created on first open and never changed. */
export interface InstanceInfo {
  /** Stable id of this data directory (the first 16 hex chars of sha256 of the key). */
  readonly instanceId: string;
  /** Per-instance HMAC key (32 random bytes). Never leaves storage except to sign and verify. */
  readonly hmacKey: Uint8Array;
  readonly createdAt: string;
}

/** Instance metadata and a small key/value store for runtime flags (emergency stop, …). */
export interface MetaStorage {
  /** The instance record; created atomically on first call (two processes agree on one key). */
  getInstance(): Promise<InstanceInfo>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/**
 * What an audited dispatch decided. `executing` is written before a fund-moving handler runs (its outcome
 * row follows), so a process killed mid-transfer leaves a row that says the side effect may have happened.
 */
export type AuditDecision = 'allowed' | 'blocked' | 'approval_required' | 'approved' | 'denied' | 'error' | 'executing';

/** One audit row as written. */
export interface AuditEntryInput {
  readonly at: string;
  readonly toolName: string;
  /** Effective permission tier (1–4) at the time of the call. */
  readonly tier: number;
  readonly source: string;
  readonly sessionId?: string | undefined;
  readonly traceId?: string | undefined;
  readonly toolCallId?: string | undefined;
  readonly approvalId?: string | undefined;
  readonly decision: AuditDecision;
  /** Error or block code when not allowed. */
  readonly code?: string | undefined;
  /** Human-readable reason (block reason, error message). */
  readonly reason?: string | undefined;
  readonly durationMs: number;
  /** Arguments as JSON with secrets redacted. */
  readonly argsJson: string;
  /** `preview` for a fund-moving call without `confirm: true`, else `execute`. */
  readonly mode?: 'preview' | 'execute' | undefined;
  /** The tenant the call acted for. */
  readonly userId?: string | undefined;
  /** What the row records. @default 'tool_call' */
  readonly kind?: AuditKind | undefined;
  /** What the call did: status, order id, fill, transaction hash, error code (see `extractAuditOutcome`). */
  readonly outcome?: AuditOutcome | undefined;
  /** Details of a row that is not a tool call (the skills activated, the job run, the breaker tripped), as JSON-safe data. */
  readonly detail?: Readonly<Record<string, unknown>> | undefined;
}

/** One stored audit row. */
export interface AuditEntry extends AuditEntryInput {
  readonly id: number;
  /** Its place in the hash chain; absent on rows written before the chain began. */
  readonly chain?: AuditChainLink | undefined;
}

/** Filter for {@link AuditStorage.query}. All fields optional; results newest first. */
export interface AuditQuery {
  readonly toolName?: string | undefined;
  readonly sessionId?: string | undefined;
  readonly traceId?: string | undefined;
  readonly decision?: AuditDecision | undefined;
  readonly since?: string | undefined;
  readonly until?: string | undefined;
  /** Rows of this tenant only. */
  readonly userId?: string | undefined;
  /** Rows of this kind only (`tool_call` also matches rows written before kinds existed). */
  readonly kind?: AuditKind | undefined;
  /** Rows with an id above this one (paging). */
  readonly afterId?: number | undefined;
  /** Rows with an id below this one (paging). */
  readonly beforeId?: number | undefined;
  /** `newest` first (the default) or `oldest` first. */
  readonly order?: 'newest' | 'oldest' | undefined;
  /** @default 100 */
  readonly limit?: number | undefined;
}

/**
 * Append-only, hash-chained audit log. `append` computes the row's chain link in the same transaction as the
 * insert, serialised per database; `verify` walks the chain and reports edited, deleted, reordered and
 * inserted rows (see `audit-types.ts`).
 */
export interface AuditStorage {
  append(entry: AuditEntryInput): Promise<void>;
  query(filter?: AuditQuery): Promise<AuditEntry[]>;
  count(filter?: Omit<AuditQuery, 'limit' | 'order' | 'afterId' | 'beforeId'>): Promise<number>;
  /** Walk the whole chain and report what does not add up. */
  verify(options?: AuditVerifyOptions): Promise<AuditVerifyReport>;
  /** The chain head: how many rows are chained and the newest hash. */
  head(): Promise<AuditChainHead>;
  /**
   * Key the links from now on: each new row's hash is HMAC-SHA256 under this key (kept outside the database), so
   * a database writer without it cannot recompute a tail; `verify` recomputes keyed links with it. Once a keyed
   * row exists, an append without the key is refused. `createApp` calls this with `deriveAuditKeys(…).chainKey`.
   */
  useChainKey?(options: AuditChainKeyOptions): void;
  /**
   * Record the id of the key given to {@link useChainKey} in the head when none is recorded yet (one conditional
   * update), and answer the id the head records afterwards (undefined without a key). `checkAuditChainKey` calls it
   * at start, so of two instances with different keys starting on a fresh log the second one does not start.
   */
  claimChainKey?(): Promise<string | undefined>;
}

/** Lifecycle of an approval request. `executed` is terminal and single-use. */
export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'executed';

/** A persisted approval request, bound to one tool call and one input. */
export interface ApprovalRecord {
  readonly id: string;
  readonly toolName: string;
  readonly toolCallId: string;
  /** sha256 of the canonical JSON of the validated input. */
  readonly inputHash: string;
  /** The validated input as JSON (so a resumed run can execute without the model). */
  readonly inputJson: string;
  readonly tier: number;
  readonly sessionId?: string | undefined;
  readonly traceId?: string | undefined;
  readonly source: string;
  readonly reason: string;
  readonly status: ApprovalStatus;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly decidedAt?: string | undefined;
  readonly decisionReason?: string | undefined;
  readonly executedAt?: string | undefined;
  /** HMAC over the binding fields, made with the instance key. */
  readonly signature: string;
  /** HMAC over the decision, made with the instance key when approved or denied. */
  readonly decisionSignature?: string | undefined;
  /** HMAC over the `approved → executed` transition, made with the instance key when it is consumed. */
  readonly executionSignature?: string | undefined;
}

/** Filter for listing approvals; newest first. */
export interface ApprovalQuery {
  readonly status?: ApprovalStatus | readonly ApprovalStatus[] | undefined;
  readonly sessionId?: string | undefined;
  /** @default 100 */
  readonly limit?: number | undefined;
}

/** Fields a status transition may set. */
export interface ApprovalTransitionPatch {
  readonly decidedAt?: string | undefined;
  readonly decisionReason?: string | undefined;
  readonly decisionSignature?: string | undefined;
  readonly executedAt?: string | undefined;
  readonly executionSignature?: string | undefined;
}

/** Persisted approval requests. `transition` is a compare-and-set, atomic across processes. */
export interface ApprovalStorage {
  create(record: ApprovalRecord): Promise<void>;
  get(id: string): Promise<ApprovalRecord | undefined>;
  list(query?: ApprovalQuery): Promise<ApprovalRecord[]>;
  /** Move `id` from one of `from` to `to`; true when this caller won the transition. */
  transition(id: string, from: readonly ApprovalStatus[], to: ApprovalStatus, patch?: ApprovalTransitionPatch): Promise<boolean>;
}

/** Numeric and enumerated limits a stored grant places on arguments. */
export interface GrantArgLimit {
  readonly max?: number | undefined;
  readonly min?: number | undefined;
  readonly oneOf?: ReadonlyArray<string | number | boolean> | undefined;
}

/** A grant: `session` grants remember a CONFIRM_ONCE approval; `stored` grants let autonomous calls run. */
export interface GrantRecord {
  readonly id: string;
  readonly kind: 'session' | 'stored';
  readonly toolName: string;
  /** Session the grant belongs to (session grants only). */
  readonly sessionId?: string | undefined;
  /** Sources the grant covers (stored grants); empty means every autonomous source. */
  readonly sources?: readonly string[] | undefined;
  readonly argLimits?: Readonly<Record<string, GrantArgLimit>> | undefined;
  readonly createdAt: string;
  readonly expiresAt?: string | undefined;
  readonly revokedAt?: string | undefined;
  readonly note?: string | undefined;
  /** The user the grant is for (stored grants); absent: every user of the host (an SDK grant). */
  readonly userId?: string | undefined;
  /** More tools the grant covers besides `toolName` (`toolName` is `*` when only these and `toolSets` count). */
  readonly tools?: readonly string[] | undefined;
  /** Tool sets whose tools the grant covers (through `includes`). */
  readonly toolSets?: readonly string[] | undefined;
  /** Most USD one call may move under the grant, judged on the order's true notional. */
  readonly capPerCallUsd?: number | undefined;
  /** Most USD the grant lets execute per UTC day (spend is kept in `storage.controls`). */
  readonly capPerDayUsd?: number | undefined;
  /** Who created it (a user id, `cli`, `sdk`). */
  readonly createdBy?: string | undefined;
}

/** Filter for listing grants. */
export interface GrantQuery {
  readonly kind?: 'session' | 'stored' | undefined;
  readonly toolName?: string | undefined;
  readonly sessionId?: string | undefined;
  /** Only grants for this user. */
  readonly userId?: string | undefined;
  /** Include revoked grants. @default false */
  readonly includeRevoked?: boolean | undefined;
}

/** Session and stored grants. */
export interface GrantStorage {
  create(grant: GrantRecord): Promise<void>;
  get(id: string): Promise<GrantRecord | undefined>;
  list(query?: GrantQuery): Promise<GrantRecord[]>;
  revoke(id: string, at: string): Promise<boolean>;
}

/** A conversation session. */
export interface SessionRecord {
  readonly id: string;
  readonly userId?: string | undefined;
  readonly title?: string | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Free-form JSON metadata (surface, agent id, …). */
  readonly metadata?: Readonly<Record<string, unknown>> | undefined;
}

/** One stored message: an AI SDK `ModelMessage` as JSON plus bookkeeping. */
export interface StoredMessage {
  readonly sessionId: string;
  /** 1-based position in the session, assigned by storage. */
  readonly seq: number;
  readonly role: 'user' | 'assistant' | 'tool' | 'system';
  /** The message as JSON (`ModelMessage`). */
  readonly json: string;
  readonly turnId?: string | undefined;
  readonly createdAt: string;
}

/** A message to append (storage assigns `seq`). */
export type NewMessage = Omit<StoredMessage, 'seq' | 'sessionId'>;

/** Conversations: sessions and their messages. */
export interface ConversationStorage {
  /** Create the session if missing; return it either way. */
  ensureSession(session: { id: string; userId?: string | undefined; title?: string | undefined; metadata?: Readonly<Record<string, unknown>> | undefined; now: string }): Promise<SessionRecord>;
  getSession(id: string): Promise<SessionRecord | undefined>;
  listSessions(query?: { userId?: string | undefined; limit?: number | undefined }): Promise<SessionRecord[]>;
  /** Append in order, atomically; returns the stored rows with their `seq`. */
  appendMessages(sessionId: string, messages: readonly NewMessage[]): Promise<StoredMessage[]>;
  /** Messages in `seq` order, optionally after a given `seq`. */
  listMessages(sessionId: string, query?: { afterSeq?: number | undefined; limit?: number | undefined }): Promise<StoredMessage[]>;
  /** Atomically replace the whole message list (compaction, repair). */
  replaceMessages(sessionId: string, messages: readonly NewMessage[]): Promise<StoredMessage[]>;
  deleteSession(id: string): Promise<boolean>;
}

/** What an engine can do; features check here instead of guessing. */
export interface StorageCapabilities {
  /** FTS5 (or an equivalent full-text index) is available. */
  readonly fullText: boolean;
  /** A vector index (sqlite-vec `vec0`) is loaded. */
  readonly vector: boolean;
  /** Why the vector index is unavailable, when it is not. */
  readonly vectorUnavailableReason?: string | undefined;
  /** Two OS processes may share this storage. */
  readonly multiProcess: boolean;
}

/**
 * The storage every factory takes as `storage`.
 *
 * @example
 * ```ts
 * import { createSqliteStorage } from '@minara/agent/sqlite';
 * const storage = createSqliteStorage({ path: 'data/minara.db' });
 * const { instanceId } = await storage.meta.getInstance();
 * ```
 */
export interface Storage {
  /** Engine name (`sqlite`, `memory`, …). */
  readonly kind: string;
  readonly capabilities: StorageCapabilities;
  readonly meta: MetaStorage;
  readonly audit: AuditStorage;
  readonly approvals: ApprovalStorage;
  readonly grants: GrantStorage;
  readonly conversations: ConversationStorage;
  readonly memory: MemoryStorage;
  /** Paper-trading books (accounts, balances, positions, fills, daily P&L), scoped by account id. */
  readonly trading: TradingStorage;
  /** Background job runs: one per job and scheduled slot across every process on this storage. */
  readonly jobs: JobStorage;
  /** The usage ledger: tokens and cost per turn, summed by day, session, user and source. */
  readonly usage: UsageStorage;
  /** The learning loop: trade history, methodologies, role-memory cases, learned preferences, the trade-history mirror. */
  readonly learning: LearningStorage;
  /** Charts, reports and spreadsheets the agent made (`chat_artifacts`), scoped by user. */
  readonly artifacts: ArtifactStorage;
  /** Metadata of uploaded files (the bytes stay on disk or in an object store), scoped by user. */
  readonly files: FileStorage;
  /** Operator controls: daily spend under grants, capability switches, quotas and their counters, session locks. */
  readonly controls: ControlStorage;
  /** Stored workflow runs (status, each step's input and output), one per workflow and trigger across processes. */
  readonly workflows: WorkflowRunStorage;
  /** Price alerts per user; an alert fires once across processes. */
  readonly alerts: AlertStorage;
  /** Schema version per domain, after migrations. */
  schemaVersions(): Promise<Record<string, number>>;
  /**
   * Optional: commit the writes `start` begins as one transaction, all or nothing. SQLite runs them inside one
   * `BEGIN IMMEDIATE … COMMIT` (one commit instead of one per write) and throws, having committed none, when
   * any of them failed. `start` must begin every write synchronously (no `await` between them); a write begun
   * later runs on its own. Engines without it leave it out and callers run the writes one by one.
   */
  batchWrites?(start: () => void): void;
  /**
   * Optional: run the reads `start` begins (synchronously, no `await` between them) as one look at the database.
   * SQLite's read caches check `PRAGMA data_version` once for all of them instead of once each (a write begun
   * inside ends the sharing). Results are the same as running them one after another. Engines without it leave it
   * out and callers run the reads as usual.
   */
  batchReads?(start: () => void): void;
  /** Release the connection. Further calls fail with STORAGE_ERROR. */
  close(): Promise<void>;
}
