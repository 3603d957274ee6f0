/**
 * Public types of the learning loop (`createLearningStore`).
 */
import type { LanguageModel } from 'ai';
import type { MinaraBus } from '../events/bus';
import type { MemoryStore } from '../memory/types';
import type { PostTurnRecord, TurnLearningContext } from '../runtime/types';
import type {
  CaptureResult, LearningScope, MethodologyOrigin, MethodologyPolicy, MethodologyQuery, MethodologyRecord, PreferenceKind, PreferenceQuery,
  PreferenceRecord, RoleCaseQuery, RoleCaseRecord, TradeQuery, TradeRecord,
} from '../storage/learning-types';
import type { AuditStorage, Storage } from '../storage/types';
import type { Logger } from '../util/logger';
import type { CompiledPageOptions } from './compiled-pages';
import type { ReflectionResult } from './reflection';
import type { SynthesisOptions, SynthesisResult, SynthesisUsage } from './synthesis';

/** When a proposed behavioural preference becomes active at turn start. */
export interface PreferenceGraduationRule {
  /** Supporting observations needed. @default 5 */
  readonly minEvidence: number;
  /** Share of observations in its dimension that support it: evidence / (evidence + contradictions). @default 0.8 */
  readonly minConsistency: number;
}

/** Options of {@link createLearningStore}. */
export interface LearningStoreOptions {
  /** Any storage engine (`createSqliteStorage`, `createInMemoryStorage`). */
  readonly storage: Pick<Storage, 'learning'>;
  /** The tenant; every call is confined to it. */
  readonly scope: LearningScope;
  /** The tenant's memory store: active preferences are written to it as `learned_preference` memories. */
  readonly memory?: MemoryStore | undefined;
  /**
   * Where decisions made by a person are recorded: `acceptMethodology`, `graduateMethodology`, `quarantineMethodology`,
   * `reinstateMethodology`, `approvePreference`, `rejectPreference` each append one audit row (tool name
   * `learning.<call>`, source `learning`, the id and reason as arguments). Automatic transitions are events, not audit rows.
   */
  readonly audit?: Pick<AuditStorage, 'append'> | undefined;
  /** The app bus for `trade:recorded`, `trade:outcome_updated`, `methodology:changed`, `preference:changed`. */
  readonly bus?: MinaraBus | undefined;
  /** Graduation and quarantine thresholds. @default DEFAULT_METHODOLOGY_POLICY (0.55/10, 0.40/20) */
  readonly policy?: Partial<MethodologyPolicy> | undefined;
  /** @default { minEvidence: 5, minConsistency: 0.8 } */
  readonly preferenceGraduation?: Partial<PreferenceGraduationRule> | undefined;
  /** Methodologies in a turn's prompt at most. @default 6 */
  readonly maxPromptMethodologies?: number | undefined;
  /** Active preferences in a turn's prompt at most. @default 8 */
  readonly maxPromptPreferences?: number | undefined;
  /**
   * Mine behavioural preferences (slippage, leverage, memecoin avoidance) from each turn's executions.
   * @default true
   */
  readonly minePreferences?: boolean | undefined;
  /** How long a compiled page is served from the cache. @default 60000 */
  readonly compiledPageTtlMs?: number | undefined;
  /** Compiled pages kept (LRU). @default 256 */
  readonly compiledPageCacheSize?: number | undefined;
  /** Reflected cases and trades in a compiled page's timeline. @default 10 */
  readonly compiledPageTimeline?: number | undefined;
  /** The model `reflect()` uses when the call passes none (`createApp` passes its utility model when one is configured). */
  readonly model?: LanguageModel | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
}

/** Input of {@link LearningStore.createMethodology}. */
export interface MethodologyInput {
  readonly text: string;
  /** Asset class (`crypto_major`, `perps`, `forex`, … or `any`); derived from `asset` when absent. */
  readonly assetClass?: string | undefined;
  /** An asset the methodology is about (`BTC`, `EUR/USD`), used to derive the asset class. */
  readonly asset?: string | undefined;
  /** @default 'api' */
  readonly origin?: MethodologyOrigin | undefined;
  readonly sourceRef?: string | undefined;
  /**
   * `candidate` goes on trial at once (in prompts, scored by outcomes); `proposed` waits, out of prompts, until an
   * operator accepts it ({@link LearningStore.acceptMethodology}) — what the synthesis pass uses. @default 'candidate'
   */
  readonly state?: 'candidate' | 'proposed' | undefined;
  /** Why a `proposed` methodology waits (shown in the review queue). @default 'proposed: waiting for the operator …' */
  readonly stateReason?: string | undefined;
}

/** Input of {@link LearningStore.proposePreference}. */
export interface PreferenceInput {
  /** `slippage`, `leverage`, `asset_class`, `position_size`, … (lower snake case). */
  readonly dimension: string;
  readonly text: string;
  /** @default 'behavioural' */
  readonly kind?: PreferenceKind | undefined;
  /** A machine-readable value; for a hard constraint, a finance limit such as `{"maxLeverage":3}`. */
  readonly value?: string | undefined;
  /** @default 'api' */
  readonly source?: 'memory_learn' | 'api' | 'import' | undefined;
}

/** The scoped learning store: the learning loop of one tenant. */
export interface LearningStore {
  readonly scope: LearningScope;
  readonly policy: MethodologyPolicy;

  /**
   * Decision capture: write the record's fund-moving executions to `trade_history` (linked to turn, session,
   * methodologies in play and role), apply closes to open trades with P&L attribution, and mine preferences.
   */
  captureTurn(record: PostTurnRecord): Promise<CaptureResult>;

  /** Create a methodology (a candidate, or `proposed` for review), or return the one with the same asset class and normalised text. */
  createMethodology(input: MethodologyInput): Promise<{ readonly methodology: MethodologyRecord; readonly created: boolean }>;
  /** Create methodologies from a seed file (markdown `## asset_class` sections of `- text` lines, or JSON). */
  seedMethodologies(seed: string, options?: { readonly sourceRef?: string | undefined }): Promise<{ readonly created: number; readonly existing: number }>;
  getMethodology(id: number): Promise<MethodologyRecord | undefined>;
  listMethodologies(query?: MethodologyQuery): Promise<MethodologyRecord[]>;
  /**
   * The operator's graduation call: a candidate whose graduation was proposed becomes `graduated`. Throws
   * `LEARNING_TRANSITION_REFUSED` when it is not proposed (unless `force`) or quarantined.
   */
  graduateMethodology(id: number, options?: { readonly force?: boolean | undefined; readonly reason?: string | undefined }): Promise<MethodologyRecord>;
  /**
   * The operator's review of a `proposed` methodology (one the synthesis pass wrote): it becomes a `candidate`, on
   * trial in prompts and scored by outcomes. Throws `LEARNING_TRANSITION_REFUSED` when it is not proposed. To turn
   * a proposal down, quarantine it.
   */
  acceptMethodology(id: number, reason?: string): Promise<MethodologyRecord>;
  /** Quarantine by hand (the automatic demotion does this too); turns a proposal down. */
  quarantineMethodology(id: number, reason?: string): Promise<MethodologyRecord>;
  /** Put a quarantined methodology back on trial (operator call). */
  reinstateMethodology(id: number, reason?: string): Promise<MethodologyRecord>;

  listTrades(query?: TradeQuery): Promise<TradeRecord[]>;
  /**
   * Write the memory row of every case that has none yet (oldest first, at most `limit`, default 1000): category
   * `trade_outcome`, source `trade_case`, with entity edges and an embedding, linked from the case. Decision capture
   * does it for each new case; this is the backfill (`createApp` runs it when it opens the storage). Needs `memory`.
   */
  indexCases(options?: { readonly limit?: number | undefined }): Promise<{ readonly linked: number }>;
  listCases(query?: RoleCaseQuery): Promise<RoleCaseRecord[]>;

  /** Propose a preference (`proposed`); a hard constraint is only ever activated by {@link LearningStore.approvePreference}. */
  proposePreference(input: PreferenceInput): Promise<{ readonly preference: PreferenceRecord; readonly created: boolean }>;
  listPreferences(query?: PreferenceQuery): Promise<PreferenceRecord[]>;
  /** Activate a proposed preference (the explicit call; the only way a hard constraint becomes active). */
  approvePreference(id: number): Promise<PreferenceRecord>;
  /** Reject a proposed or active preference. */
  rejectPreference(id: number): Promise<PreferenceRecord>;
  /** Promote proposed behavioural preferences that meet the graduation rule (run at turn start). Hard constraints never. */
  graduatePreferences(): Promise<PreferenceRecord[]>;

  /** The learned block for a turn's dynamic tail: methodologies for the message's assets (never quarantined) and active preferences. */
  promptContext(message?: string): Promise<TurnLearningContext>;

  /**
   * The role reflector over pending cases, oldest first: stage 1 classifies each outcome, stage 2 writes lessons
   * (`lesson` memories linked to the case) and maybe a methodology (a candidate of the case's asset class). The
   * reflection is set once; a failing or malformed model answer changes nothing. Needs `memory`, and a model:
   * the call's, else the store's `model` (`MODEL_NOT_CONFIGURED` when neither).
   */
  reflect(options?: { readonly model?: LanguageModel | undefined; readonly limit?: number | undefined; readonly role?: string | undefined; readonly signal?: AbortSignal | undefined }): Promise<ReflectionResult>;

  /**
   * Methodologies proposed from outcomes: group the reflected trade cases by pattern (asset, scenario, lifecycle
   * stage) and outcome, and ask the model (the call's, else the store's) for one candidate methodology per
   * winning pattern not synthesized before (≥ `minCases` cases, Wilson lower bound ≥ `minConfidence`). Candidates
   * land as `candidate` (origin `synthesis`), never graduated without the operator; a losing pattern is never
   * offered; a rerun offers no pattern twice. No winning pattern: no model call. `recordUsage` and `admit` are the
   * host's ledger and daily budget (the app's `learning:synthesis` job passes them).
   */
  synthesize(
    options?: SynthesisOptions & {
      readonly recordUsage?: ((usage: SynthesisUsage) => Promise<void>) | undefined;
      readonly admit?: (() => Promise<string | undefined>) | undefined;
    },
  ): Promise<SynthesisResult>;

  /**
   * The compiled page of one asset (`BTC`, `$eth`, `EUR/USD` → `EURUSD`): byte-deterministic markdown with the
   * graduated methodologies and active hard constraints (unless `includeHardConstraints: false`), then the
   * latest reflected cases and trades. Served from a 60 s LRU keyed by entity and variant, cleared by this
   * tenant's `memory:written`, `trade:recorded`, `trade:outcome_updated` (and methodology, preference and
   * reflection changes) on the bus and by this store's own writes.
   */
  compiledPage(entity: string, options?: CompiledPageOptions): Promise<string>;
  /** Stop listening to the bus (compiled-page invalidation). */
  close(): void;
}
