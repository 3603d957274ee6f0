/**
 * The `learning` domain of {@link Storage}: the finance learning loop's tables. Trade history (one row per
 * fund-moving execution, linked to its turn, session, methodologies and role), outcome attribution to
 * methodologies (Wilson-scored, graduation proposed and quarantine applied in the same transaction), role
 * memory cases for reflection, learned preferences, the off-agent trade-history mirror (`perps_fills`,
 * `external_spot_activities`, `history_sync_state`) and personalization rebuild snapshots.
 *
 * Tenancy: every method takes a {@link LearningScope}; every row carries `user_id` and an exact `agent_id`
 * (a scope without `agentId` sees only user-level rows), and no statement runs unscoped.
 *
 * Ids are positive integers. Timestamps are ISO-8601 strings in UTC supplied by the caller (`now`, `at`).
 * The outcome arithmetic (FIFO close allocation, Wilson bound, state transitions) is shared by every engine
 * (`learning-logic.ts`), so engines agree on every number; `learning-domain.ts` checks every input and puts
 * those rules in front of an engine's queries (`LearningEngine`).
 */
import type { MemoryScope } from './memory-types';

/** The tenant of learning rows: the same shape as a memory scope. */
export type LearningScope = MemoryScope;

/** What an execution did to a position: opened (or added to) one, closed (part of) one, or moved funds out. */
export type TradeAction = 'open' | 'close' | 'transfer';
/** Spot holdings, a perpetual position, or a transfer. */
export type TradeKind = 'spot' | 'perp' | 'transfer';
/** `open` until fully closed; `closed` afterwards; close and transfer rows are `settled` when written. */
export type TradeStatus = 'open' | 'closed' | 'settled';
/** A closed trade won when its realised P&L (fees included) is positive. */
export type TradeOutcome = 'win' | 'loss';

/** One fund-moving execution to record (decision capture builds these from the post-turn record). */
export interface NewTradeExecution {
  /** The provider's order id (client order id): unique per scope, so recording twice is a no-op. */
  readonly orderId: string;
  readonly sessionId?: string | undefined;
  readonly turnId?: string | undefined;
  readonly toolCallId?: string | undefined;
  readonly toolName: string;
  readonly action: TradeAction;
  readonly kind: TradeKind;
  /** Upper-case symbol (`BTC`, `EURUSD`). */
  readonly asset: string;
  /** The asset's class (`crypto_major`, …), when known. */
  readonly assetClass?: string | undefined;
  /** The order side (`buy`, `sell`, `long`, `short`, `close`, `swap`, `transfer`, `withdraw`). */
  readonly side: string;
  /** Direction of an opening trade. */
  readonly direction?: 'long' | 'short' | undefined;
  /** Units filled (≥ 0). */
  readonly quantity: number;
  /** Fill price (≥ 0). */
  readonly price: number;
  readonly notionalUsd: number;
  readonly feeUsd: number;
  /** P&L this fill realised (a close: what it realises; an opening fill: usually minus its fee). */
  readonly realizedPnlUsd: number;
  /** The agent role or skill that proposed the execution. */
  readonly role: string;
  /** Methodologies in play when the execution was decided (an opening trade's outcome is attributed to them). */
  readonly methodologyIds: readonly number[];
  /**
   * Link only the methodologies of these asset classes that are not quarantined (checked in the write
   * transaction). Absent: every listed methodology of the scope.
   */
  readonly methodologyClasses?: readonly string[] | undefined;
  readonly simulated: boolean;
  /** Provider name (`paper`, `minara`, …). */
  readonly provider: string;
  readonly at: string;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
}

/** One stored `trade_history` row. */
export interface TradeRecord extends Omit<NewTradeExecution, 'details' | 'methodologyClasses'> {
  readonly id: number;
  readonly userId: string;
  readonly agentId?: string | undefined;
  readonly status: TradeStatus;
  /** Units of an opening trade closed so far. */
  readonly closedQuantity: number;
  /** Average exit price of the closed units (opening trades). */
  readonly exitPrice?: number | undefined;
  readonly closedAt?: string | undefined;
  /** Milliseconds from open to the close that completed it. */
  readonly holdingMs?: number | undefined;
  readonly outcome?: TradeOutcome | undefined;
  /** The opening trades a close row closed. */
  readonly closesTradeIds?: readonly number[] | undefined;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
}

/** Filter of {@link LearningStorage.listTrades}; newest first. */
export interface TradeQuery {
  readonly asset?: string | undefined;
  readonly status?: TradeStatus | undefined;
  readonly action?: TradeAction | undefined;
  readonly sessionId?: string | undefined;
  /** @default 100 */
  readonly limit?: number | undefined;
}

/** Where a methodology came from. */
export type MethodologyOrigin = 'seed' | 'lesson' | 'synthesis' | 'memory_learn' | 'api' | 'import';
/**
 * `proposed` waits for the operator's review and never reaches a prompt (what the synthesis pass writes);
 * `candidate` is on trial, in prompts, scored as it is used; `graduated` by an operator call; `quarantined` never
 * reaches a prompt.
 */
export type MethodologyState = 'proposed' | 'candidate' | 'graduated' | 'quarantined';

/** One stored methodology. */
export interface MethodologyRecord {
  readonly id: number;
  readonly userId: string;
  readonly agentId?: string | undefined;
  /** Asset class it applies to (`crypto_major`, `perps`, `forex`, … or `any`). */
  readonly assetClass: string;
  readonly text: string;
  /** Dedup key: lower case, whitespace collapsed, trailing punctuation dropped. */
  readonly normalizedText: string;
  readonly origin: MethodologyOrigin;
  /** What it came from (`case:12`, a seed file name, …). */
  readonly sourceRef?: string | undefined;
  readonly state: MethodologyState;
  /** Attributed closed trades. */
  readonly uses: number;
  readonly wins: number;
  /** Wilson lower bound (95 %) of the win rate; 0 with no uses. */
  readonly confidence: number;
  /** Set while the graduation rule holds and the methodology is still a candidate. */
  readonly graduationProposedAt?: string | undefined;
  readonly graduatedAt?: string | undefined;
  readonly quarantinedAt?: string | undefined;
  /** Why the last state change happened. */
  readonly stateReason?: string | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Input of {@link LearningStorage.upsertMethodology}. */
export interface NewMethodology {
  readonly assetClass: string;
  readonly text: string;
  readonly normalizedText: string;
  readonly origin: MethodologyOrigin;
  readonly sourceRef?: string | undefined;
  readonly now: string;
  /**
   * State of a new row: `candidate` (on trial at once) or `proposed` (kept out of prompts until an operator accepts
   * it). A dedup match keeps its own state. @default 'candidate'
   */
  readonly state?: 'candidate' | 'proposed' | undefined;
  /** Why the new row has its state (shown beside it). */
  readonly stateReason?: string | undefined;
  /**
   * A restore (memory import, signed channel): the new row gets this state, these scores and times instead of a
   * fresh candidate's. A dedup match is returned unchanged.
   */
  readonly restore?: MethodologyRestore | undefined;
}

/** State and scores a restored methodology keeps (see {@link NewMethodology.restore}). */
export interface MethodologyRestore
  extends Pick<MethodologyRecord, 'state' | 'uses' | 'wins' | 'confidence' | 'graduationProposedAt' | 'graduatedAt' | 'quarantinedAt' | 'stateReason' | 'createdAt'> {
  /** Kept when no row of the table has it; otherwise the row gets a new id. */
  readonly id?: number | undefined;
}

/** Filter of {@link LearningStorage.listMethodologies}: graduated first, then candidates, proposed, quarantined; by confidence. */
export interface MethodologyQuery {
  readonly states?: readonly MethodologyState[] | undefined;
  readonly assetClasses?: readonly string[] | undefined;
  readonly ids?: readonly number[] | undefined;
  /** @default 100 */
  readonly limit?: number | undefined;
}

/** The graduation and demotion rule (NOTES.md §8). */
export interface MethodologyPolicy {
  /** Graduation is proposed at this Wilson lower bound or above… @default 0.55 */
  readonly graduationMinConfidence: number;
  /** …with at least this many uses. @default 10 */
  readonly graduationMinUses: number;
  /** Quarantine below this Wilson lower bound… @default 0.40 */
  readonly demotionMaxConfidence: number;
  /** …with at least this many uses. @default 20 */
  readonly demotionMinUses: number;
}

/** A change to a methodology made while attributing outcomes. */
export interface MethodologyChange {
  readonly methodology: MethodologyRecord;
  /** `scored` (counts changed), `graduation_proposed`, `graduation_withdrawn` (the rule stopped holding), `quarantined`. */
  readonly change: 'scored' | 'graduation_proposed' | 'graduation_withdrawn' | 'quarantined';
}

/** Role-memory outcome classes of the reflector (NOTES.md §8). */
export type RoleOutcomeClass = 'logic_error' | 'missing_data' | 'exogenous' | 'variance';

/** One `role_memory` case: a closed trade waiting for (or done with) reflection. */
export interface RoleCaseRecord {
  readonly id: number;
  readonly userId: string;
  readonly agentId?: string | undefined;
  readonly tradeId: number;
  readonly role: string;
  readonly asset: string;
  readonly assetClass?: string | undefined;
  readonly kind: TradeKind;
  readonly direction?: 'long' | 'short' | undefined;
  /** One line describing the trade and its outcome. */
  readonly summary: string;
  readonly outcome: TradeOutcome;
  readonly realizedPnlUsd: number;
  readonly holdingMs: number;
  readonly methodologyIds: readonly number[];
  readonly openedAt: string;
  readonly closedAt: string;
  readonly createdAt: string;
  /** Set once; a reflection is never rewritten. */
  readonly reflectedAt?: string | undefined;
  readonly classification?: RoleOutcomeClass | undefined;
  /** The reflection as JSON text (stage-1 rationale and stage-2 lessons). */
  readonly reflection?: string | undefined;
  readonly lessonMemoryIds: readonly number[];
  /** The case's own memory row (category `trade_outcome`, source `trade_case`): its edges and embedding make it searchable. */
  readonly memoryId?: number | undefined;
}

/** Filter of {@link LearningStorage.listCases}. Pending: oldest first; reflected: newest reflection first. */
export interface RoleCaseQuery {
  /** `pending` (not reflected), `reflected`, or both when absent (newest first). */
  readonly status?: 'pending' | 'reflected' | undefined;
  readonly role?: string | undefined;
  readonly asset?: string | undefined;
  /** Only cases without their memory row yet (oldest first): what the trade-case index still has to write. */
  readonly withoutMemory?: boolean | undefined;
  /** @default 100 */
  readonly limit?: number | undefined;
}

/** What {@link LearningStorage.recordExecutions} did, in one transaction. */
export interface CaptureResult {
  /** Rows written now, in input order. */
  readonly recorded: readonly TradeRecord[];
  /** Order ids already recorded (nothing changed for them). */
  readonly duplicates: readonly string[];
  /** Opening trades that became fully closed, with their outcome. */
  readonly closed: readonly TradeRecord[];
  /** Opening trades a close touched (partially or fully), as they are now. */
  readonly updated: readonly TradeRecord[];
  readonly methodologyChanges: readonly MethodologyChange[];
  /** Role-memory cases created for the closed trades. */
  readonly cases: readonly RoleCaseRecord[];
  /** Preferences the observations created or changed (same transaction). */
  readonly preferences: readonly PreferenceRecord[];
}

/** A behavioural preference (mined, may graduate) or a hard constraint (activated only by an explicit call). */
export type PreferenceKind = 'behavioural' | 'hard_constraint';
export type PreferenceState = 'proposed' | 'active' | 'rejected';
/** Where a preference came from. */
export type PreferenceSource = 'mined' | 'memory_learn' | 'api' | 'import';

/** One stored learned preference. */
export interface PreferenceRecord {
  readonly id: number;
  readonly userId: string;
  readonly agentId?: string | undefined;
  /** What it is about (`slippage`, `leverage`, `asset_class`, `position_size`, …). */
  readonly dimension: string;
  readonly kind: PreferenceKind;
  readonly text: string;
  readonly normalizedText: string;
  /** A machine-readable value (`50` bps, `avoid:crypto_meme`, a finance-limit JSON). */
  readonly value?: string | undefined;
  readonly source: PreferenceSource;
  readonly state: PreferenceState;
  /** Observations that support it. */
  readonly evidence: number;
  /** Observations in the same dimension that went another way. */
  readonly contradictions: number;
  readonly lastEvidenceAt: string;
  readonly activatedAt?: string | undefined;
  readonly decidedAt?: string | undefined;
  /** The `learned_preference` memory written when it became active. */
  readonly memoryId?: number | undefined;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Input of {@link LearningStorage.upsertPreference}. */
export interface NewPreference {
  readonly dimension: string;
  readonly kind: PreferenceKind;
  readonly text: string;
  readonly normalizedText: string;
  readonly value?: string | undefined;
  readonly source: PreferenceSource;
  readonly now: string;
  /** A restore (memory import, signed channel): the new row keeps this state, evidence and times. A dedup match is returned unchanged. */
  readonly restore?: PreferenceRestore | undefined;
}

/** State and evidence a restored preference keeps (see {@link NewPreference.restore}). */
export interface PreferenceRestore
  extends Pick<PreferenceRecord, 'state' | 'evidence' | 'contradictions' | 'lastEvidenceAt' | 'activatedAt' | 'decidedAt' | 'memoryId' | 'createdAt'> {
  /** Kept when no row of the table has it; otherwise the row gets a new id. */
  readonly id?: number | undefined;
}

/** Filter of {@link LearningStorage.listPreferences}; newest first. */
export interface PreferenceQuery {
  readonly states?: readonly PreferenceState[] | undefined;
  readonly kinds?: readonly PreferenceKind[] | undefined;
  readonly dimension?: string | undefined;
  /** @default 100 */
  readonly limit?: number | undefined;
}

/** One observed behaviour in a dimension (preference mining). */
export interface PreferenceObservation {
  readonly dimension: string;
  readonly text: string;
  readonly normalizedText: string;
  readonly value?: string | undefined;
  /**
   * `support` adds evidence to the matching preference (created `proposed` when missing) and a contradiction
   * to the others of the dimension; `contradict` only adds a contradiction to the matching one (if any).
   */
  readonly effect: 'support' | 'contradict';
}

/** A Hyperliquid-style perp fill of the mirror. */
export interface NewPerpsFill {
  readonly subAccountId: string;
  readonly walletAddress?: string | undefined;
  readonly oid: string;
  readonly tsMs: number;
  readonly symbol: string;
  readonly side: string;
  readonly dir?: string | undefined;
  readonly size: number;
  readonly price: number;
  readonly fee: number;
  readonly closedPnl: number;
  readonly rawJson?: string | undefined;
  /** Fill-level dedup key (tid → hash → sha1 of the raw JSON). */
  readonly fillUid: string;
  readonly now: string;
}

/** One stored perp fill. */
export interface PerpsFillRecord extends Omit<NewPerpsFill, 'now'> {
  readonly id: number;
  readonly createdAt: string;
}

/** An off-agent spot swap or transfer of the mirror. */
export interface NewExternalSpotActivity {
  readonly txHash: string;
  readonly tsMs: number;
  /** `swap`, `transfer`, … */
  readonly type: string;
  readonly fromToken?: string | undefined;
  readonly toToken?: string | undefined;
  readonly amount?: string | undefined;
  readonly valueUsd?: number | undefined;
  readonly status: string;
  readonly rawJson?: string | undefined;
  readonly now: string;
}

/** One stored spot activity. */
export interface ExternalSpotRecord extends Omit<NewExternalSpotActivity, 'now'> {
  readonly id: number;
  readonly createdAt: string;
}

/** The per-(source, sub-account) sync watermark and failure counter. */
export interface HistorySyncState {
  /** `perps_fills` or `spot_activities`. */
  readonly source: string;
  /** `''` for a source without sub-accounts. */
  readonly subAccountId: string;
  readonly lastSyncedTsMs?: number | undefined;
  /** When the last attempt (success or failure) happened. */
  readonly lastSyncedAt: string;
  readonly lastError?: string | undefined;
  readonly consecutiveFailures: number;
}

/** What one sync attempt of a (source, sub-account) did. */
export type HistorySyncAttempt =
  | { readonly ok: true; readonly source: string; readonly subAccountId: string; readonly watermarkMs?: number | undefined; readonly now: string }
  | { readonly ok: false; readonly source: string; readonly subAccountId: string; readonly error: string; readonly now: string };

/** A personalization rebuild snapshot: what the last rebuild read and wrote, for cheap diffs. */
export interface PersonalizationSnapshot {
  readonly id: number;
  /** The newest time among what was read: sessions' `updatedAt` and the mirrored fills' and spot activities' `createdAt`. */
  readonly sessionWatermark: string;
  readonly sessionIds: readonly string[];
  /** sha256 of each fact kept (normalised). */
  readonly factHashes: readonly string[];
  readonly writtenIds: readonly number[];
  readonly createdAt: string;
}

/**
 * A reflected trade case carried by a memory export, restored with its opening trade (a closed
 * `trade_history` row, provider `import`) so the case's evidence and lessons survive a move between stores.
 */
export interface ImportedTradeCase
  extends Pick<RoleCaseRecord, 'role' | 'asset' | 'assetClass' | 'kind' | 'direction' | 'summary' | 'outcome' | 'realizedPnlUsd' | 'holdingMs' | 'methodologyIds' | 'openedAt' | 'closedAt' | 'reflectedAt' | 'classification' | 'reflection'> {
  /** Kept when no case row has it; otherwise a new id. */
  readonly id?: number | undefined;
  /** The restored trade's order id, unique per scope: a second import of the same case is a no-op. */
  readonly orderId: string;
  /** The opening trade's side, quantity, prices and notional. */
  readonly side: string;
  readonly quantity: number;
  readonly entryPrice: number;
  readonly exitPrice?: number | undefined;
  readonly notionalUsd: number;
  readonly simulated: boolean;
  readonly now: string;
}

/**
 * One user turn waiting for the memory extraction pass (`MEMORY_EXTRACTION`): queued after the turn, claimed
 * under a lease by the background pass, deleted once its memories are written (the audit log keeps the record).
 */
export interface ExtractionTurnRecord {
  readonly id: number;
  readonly userId: string;
  readonly agentId?: string | undefined;
  readonly sessionId: string;
  readonly turnId: string;
  /** The user's message of the turn (capped by the caller). */
  readonly text: string;
  readonly createdAt: string;
  /** Claims so far, this one included. */
  readonly attempts: number;
}

/** Input of {@link LearningStorage.enqueueExtraction}. */
export interface NewExtractionTurn {
  readonly sessionId: string;
  readonly turnId: string;
  readonly text: string;
  readonly now: string;
}

/** Counts of a scope's learning tables, for health reports (`runDoctor`). */
export interface LearningStats {
  readonly methodologies: Readonly<Record<MethodologyState, number>>;
  /** Candidates whose graduation is proposed (waiting for the operator). */
  readonly graduationProposed: number;
  readonly preferences: Readonly<Record<PreferenceState, number>>;
  /** Hard constraints among the preferences, by state. */
  readonly hardConstraints: Readonly<Record<PreferenceState, number>>;
  /** Role-memory cases: pending, pending and closed before `overdueBefore`, reflected. */
  readonly cases: { readonly pending: number; readonly overdue: number; readonly reflected: number };
  readonly trades: { readonly open: number; readonly closed: number; readonly settled: number };
  readonly perpsFills: number;
  readonly externalSpot: number;
  /** User turns waiting for the memory extraction pass, and when the oldest was queued. */
  readonly extractionQueue: { readonly waiting: number; readonly oldestAt?: string | undefined };
}

/** The learning domain every storage engine implements. All methods are async and scoped. */
export interface LearningStorage {
  /**
   * Record executions in order, in one transaction: each new order id writes a `trade_history` row; a close
   * closes the scope's open trades of the same asset and kind first-in first-out, allocates its realised P&L,
   * and for every trade it completes attributes the outcome to the trade's methodologies (re-scoring them
   * under `policy`: proposing graduation, quarantining) and opens a role-memory case. One transaction per call.
   */
  recordExecutions(
    scope: LearningScope,
    input: {
      readonly executions: readonly NewTradeExecution[];
      readonly policy: MethodologyPolicy;
      readonly now: string;
      /** Preference observations of the same turn, applied in the same transaction (see {@link LearningStorage.observePreferences}). */
      readonly observations?: readonly PreferenceObservation[] | undefined;
    },
  ): Promise<CaptureResult>;
  getTrade(scope: LearningScope, id: number): Promise<TradeRecord | undefined>;
  listTrades(scope: LearningScope, query?: TradeQuery): Promise<TradeRecord[]>;

  /** Create a methodology, or return the one with the same asset class and normalised text. */
  upsertMethodology(scope: LearningScope, input: NewMethodology): Promise<{ readonly methodology: MethodologyRecord; readonly created: boolean }>;
  getMethodology(scope: LearningScope, id: number): Promise<MethodologyRecord | undefined>;
  listMethodologies(scope: LearningScope, query?: MethodologyQuery): Promise<MethodologyRecord[]>;
  /** Compare-and-set a state change; undefined when the row is absent or not in one of `from`. */
  transitionMethodology(
    scope: LearningScope,
    id: number,
    change: { readonly from: readonly MethodologyState[]; readonly to: MethodologyState; readonly reason: string; readonly now: string },
  ): Promise<MethodologyRecord | undefined>;

  listCases(scope: LearningScope, query?: RoleCaseQuery): Promise<RoleCaseRecord[]>;
  /** Set the reflection once: false when the case is absent or already reflected (nothing is rewritten). */
  markCaseReflected(
    scope: LearningScope,
    id: number,
    reflection: { readonly classification: RoleOutcomeClass; readonly reflection: string; readonly lessonMemoryIds: readonly number[]; readonly now: string },
  ): Promise<boolean>;

  /** Create a preference, or return the existing one of the same dimension, kind and normalised text. */
  upsertPreference(scope: LearningScope, input: NewPreference): Promise<{ readonly preference: PreferenceRecord; readonly created: boolean }>;
  /** Apply observations (one transaction); returns the preferences created or changed. */
  observePreferences(scope: LearningScope, observations: readonly PreferenceObservation[], now: string): Promise<PreferenceRecord[]>;
  getPreference(scope: LearningScope, id: number): Promise<PreferenceRecord | undefined>;
  listPreferences(scope: LearningScope, query?: PreferenceQuery): Promise<PreferenceRecord[]>;
  /** Compare-and-set a state change; undefined when absent or not in one of `from`. */
  transitionPreference(
    scope: LearningScope,
    id: number,
    change: { readonly from: readonly PreferenceState[]; readonly to: PreferenceState; readonly now: string; readonly memoryId?: number | undefined },
  ): Promise<PreferenceRecord | undefined>;

  /** `INSERT OR IGNORE` by (sub-account, fill uid); returns how many rows were inserted. */
  insertPerpsFills(scope: LearningScope, fills: readonly NewPerpsFill[]): Promise<number>;
  /** `INSERT OR IGNORE` by transaction hash; returns how many rows were inserted. */
  insertExternalSpot(scope: LearningScope, activities: readonly NewExternalSpotActivity[]): Promise<number>;
  /** Fills newest first. */
  listPerpsFills(scope: LearningScope, query?: { readonly subAccountId?: string | undefined; readonly limit?: number | undefined }): Promise<PerpsFillRecord[]>;
  /** Activities newest first. */
  listExternalSpot(scope: LearningScope, query?: { readonly limit?: number | undefined }): Promise<ExternalSpotRecord[]>;
  getSyncState(scope: LearningScope, source: string, subAccountId: string): Promise<HistorySyncState | undefined>;
  listSyncStates(scope: LearningScope): Promise<HistorySyncState[]>;
  /**
   * Record one attempt: success moves the watermark forward (never back) and resets the failure counter;
   * failure increments it and keeps the watermark.
   */
  recordSyncAttempt(scope: LearningScope, attempt: HistorySyncAttempt): Promise<HistorySyncState>;

  recordPersonalizationSnapshot(scope: LearningScope, snapshot: Omit<PersonalizationSnapshot, 'id' | 'createdAt'> & { readonly now: string }): Promise<PersonalizationSnapshot>;
  latestPersonalizationSnapshot(scope: LearningScope): Promise<PersonalizationSnapshot | undefined>;

  /** Restore a reflected trade case with its opening trade (memory import); the existing case when the order id is known. */
  importTradeCase(scope: LearningScope, input: ImportedTradeCase): Promise<{ readonly case: RoleCaseRecord; readonly created: boolean }>;
  /** Link a case to its memory row, once: false when the case is absent or already linked (the caller then removes its row). */
  linkCaseMemory(scope: LearningScope, caseId: number, memoryId: number): Promise<boolean>;
  /** Scopes that have cases without their memory row (the trade-case index backfills them); at most `limit`. */
  caseMemoryScopes(limit: number): Promise<LearningScope[]>;
  /** Queue a user turn for the memory extraction pass; false when this turn id is already queued in the scope. */
  enqueueExtraction(scope: LearningScope, turn: NewExtractionTurn): Promise<boolean>;
  /**
   * Claim up to `limit` queued turns of the scope, oldest first: those never claimed or whose lease ended before
   * `now` (their pass died). Each claim sets `owner` and `leaseUntil` and increments `attempts`, atomically, so two
   * processes never claim the same turn under a live lease.
   */
  claimExtractions(
    scope: LearningScope,
    claim: { readonly owner: string; readonly now: string; readonly leaseUntil: string; readonly limit: number },
  ): Promise<ExtractionTurnRecord[]>;
  /** Remove processed (or abandoned) turns from the queue; returns how many were removed. */
  completeExtractions(scope: LearningScope, ids: readonly number[]): Promise<number>;
  /** Scopes with queued turns (any lease state), for the background pass; at most `limit`. */
  extractionScopes(limit: number): Promise<LearningScope[]>;
  /** Counts for health reports; cases closed before `overdueBefore` and still pending are `overdue`. */
  stats(scope: LearningScope, options: { readonly overdueBefore: string }): Promise<LearningStats>;
}
