/**
 * The learning domain's arithmetic and rules, shared by every engine so they agree on every number: the
 * Wilson lower bound, the graduation/quarantine rule, first-in first-out close allocation, case summaries,
 * the two drivers that run inside an engine's write transaction over a small set of synchronous row
 * operations (decision capture, preference evidence), and what a new, transitioned or imported row holds.
 * The input checks are in `learning-checks.ts`; `learning-domain.ts` puts both in front of an engine.
 * Engine-neutral: no driver import here.
 */
import { invalidArgument } from './sqlite/checks';
import type {
  CaptureResult, HistorySyncAttempt, HistorySyncState, ImportedTradeCase, LearningStats, LearningStorage, MethodologyChange, MethodologyPolicy, MethodologyRecord, MethodologyState, NewMethodology,
  NewPreference, NewTradeExecution, PreferenceObservation, PreferenceRecord, PreferenceState, RoleCaseQuery, RoleCaseRecord, TradeOutcome, TradeRecord,
} from './learning-types';

/** z for a two-sided 95 % interval. */
export const WILSON_Z_95 = 1.959963984540054;

/** The graduation and demotion rule of NOTES.md §8. */
export const DEFAULT_METHODOLOGY_POLICY: MethodologyPolicy = Object.freeze({
  graduationMinConfidence: 0.55,
  graduationMinUses: 10,
  demotionMaxConfidence: 0.4,
  demotionMinUses: 20,
});

/**
 * The Wilson score interval's lower bound for `wins` successes in `uses` trials (95 % by default): the win
 * rate we can claim with confidence, which punishes small samples. 0 when there are no trials.
 *
 * @example
 * ```ts
 * wilsonLowerBound(7, 10);  // 0.3968…
 * wilsonLowerBound(14, 20); // 0.4810…
 * ```
 */
export function wilsonLowerBound(wins: number, uses: number, z: number = WILSON_Z_95): number {
  if (!Number.isInteger(uses) || uses < 0) throw invalidArgument('wilsonLowerBound', `uses must be a non-negative integer, got ${String(uses)}`);
  if (!Number.isInteger(wins) || wins < 0 || wins > uses) throw invalidArgument('wilsonLowerBound', `wins must be an integer from 0 to uses (${uses}), got ${String(wins)}`);
  if (!(z > 0)) throw invalidArgument('wilsonLowerBound', `z must be positive, got ${String(z)}`);
  if (uses === 0) return 0;
  const p = wins / uses;
  const z2 = z * z;
  const centre = p + z2 / (2 * uses);
  const margin = z * Math.sqrt((p * (1 - p)) / uses + z2 / (4 * uses * uses));
  return Math.max(0, (centre - margin) / (1 + z2 / uses));
}

/** What re-scoring a methodology changes. */
export interface MethodologyScore {
  readonly uses: number;
  readonly wins: number;
  readonly confidence: number;
  readonly state: MethodologyState;
  readonly graduationProposedAt: string | undefined;
  readonly quarantinedAt: string | undefined;
  readonly stateReason: string | undefined;
  readonly change: MethodologyChange['change'];
}

/**
 * Re-score a methodology with new counts: quarantine is automatic (bound below the demotion threshold with
 * enough uses, from candidate or graduated); graduation is only proposed (a candidate meeting the rule gets
 * `graduationProposedAt`; one that stops meeting it loses the proposal).
 */
export function scoreMethodology(m: MethodologyRecord, uses: number, wins: number, policy: MethodologyPolicy, now: string): MethodologyScore {
  const confidence = wilsonLowerBound(wins, uses);
  const bound = confidence.toFixed(3);
  if ((m.state === 'candidate' || m.state === 'graduated') && uses >= policy.demotionMinUses && confidence < policy.demotionMaxConfidence) {
    return {
      uses, wins, confidence, state: 'quarantined', graduationProposedAt: undefined, quarantinedAt: now, change: 'quarantined',
      stateReason: `Wilson lower bound ${bound} < ${policy.demotionMaxConfidence} after ${uses} uses (${wins} wins)`,
    };
  }
  const meets = uses >= policy.graduationMinUses && confidence >= policy.graduationMinConfidence;
  if (m.state === 'candidate' && meets && m.graduationProposedAt === undefined) {
    return {
      uses, wins, confidence, state: 'candidate', graduationProposedAt: now, quarantinedAt: m.quarantinedAt, change: 'graduation_proposed',
      stateReason: `graduation proposed: Wilson lower bound ${bound} ≥ ${policy.graduationMinConfidence} with ${uses} uses (${wins} wins)`,
    };
  }
  if (m.state === 'candidate' && !meets && m.graduationProposedAt !== undefined) {
    return {
      uses, wins, confidence, state: 'candidate', graduationProposedAt: undefined, quarantinedAt: m.quarantinedAt, change: 'graduation_withdrawn',
      stateReason: `graduation proposal withdrawn: Wilson lower bound ${bound} with ${uses} uses`,
    };
  }
  return { uses, wins, confidence, state: m.state, graduationProposedAt: m.graduationProposedAt, quarantinedAt: m.quarantinedAt, stateReason: m.stateReason, change: 'scored' };
}

/** Lower case, whitespace collapsed, trailing punctuation dropped: the dedup key of methodologies and preferences. */
export function normalizeLearningText(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/\s+/gu, ' ').trim().replace(/[\s.!?;:,。！？；：，]+$/u, '');
}

/** Allowed methodology transitions through {@link LearningStorage.transitionMethodology}. */
export const METHODOLOGY_STATES: readonly MethodologyState[] = ['proposed', 'candidate', 'graduated', 'quarantined'];
export const PREFERENCE_STATES: readonly PreferenceState[] = ['proposed', 'active', 'rejected'];

/** The synchronous row operations the capture driver needs, run inside one engine transaction. */
export interface CaptureOps {
  /** True when the scope already has a row with this order id. */
  hasOrder(orderId: string): boolean;
  insertTrade(e: NewTradeExecution, status: TradeRecord['status'], now: string): TradeRecord;
  /** Open trades of the scope for an asset and kind, oldest first (by `at`, then id). */
  openTrades(asset: string, kind: string): TradeRecord[];
  /** Apply a close patch to an opening trade; returns the trade as it is now. */
  updateTrade(trade: TradeRecord, patch: TradeClosePatch): TradeRecord;
  setClosedIds(trade: TradeRecord, ids: readonly number[]): TradeRecord;
  methodology(id: number): MethodologyRecord | undefined;
  /** Insert the (methodology, trade) attribution; false when it already exists. */
  insertAttribution(methodologyId: number, tradeId: number, outcome: TradeOutcome, now: string): boolean;
  updateMethodologyScore(methodology: MethodologyRecord, score: MethodologyScore, now: string): MethodologyRecord;
  /** Insert a case for a trade; undefined when the trade already has one. */
  insertCase(c: Omit<RoleCaseRecord, 'id' | 'userId' | 'agentId' | 'lessonMemoryIds'>): RoleCaseRecord | undefined;
}

/** What a close changes on an opening trade. */
export interface TradeClosePatch {
  readonly closedQuantity: number;
  readonly realizedPnlUsd: number;
  readonly exitPrice: number;
  readonly status: 'open' | 'closed';
  readonly closedAt?: string | undefined;
  readonly holdingMs?: number | undefined;
  readonly outcome?: TradeOutcome | undefined;
}

const EPS = 1e-9;

/** A trade as one line: `long BTC perp 0.01 @ 97000 → 98000, +$8.20 (win) in 2h 0m; methodologies #3; role minara.core`. */
export function caseSummary(t: TradeRecord): string {
  const pnl = t.realizedPnlUsd;
  const money = `${pnl >= 0 ? '+' : '-'}$${Math.abs(pnl).toFixed(2)}`;
  const mins = Math.round((t.holdingMs ?? 0) / 60_000);
  const held = mins >= 60 ? `${Math.floor(mins / 60)}h ${mins % 60}m` : `${mins}m`;
  const meth = t.methodologyIds.length > 0 ? `; methodologies ${t.methodologyIds.map((id) => `#${id}`).join(', ')}` : '';
  return `${t.direction ?? 'long'} ${t.asset} ${t.kind} ${fmtNum(t.quantity)} @ ${fmtNum(t.price)} → ${fmtNum(t.exitPrice ?? 0)}, ${money} (${t.outcome ?? 'open'}) in ${held}${meth}; role ${t.role}`;
}

function fmtNum(n: number): string {
  return Number(n.toPrecision(8)).toString();
}

/**
 * The capture driver: record executions in order over `ops` (inside the engine's write transaction). See
 * {@link LearningStorage.recordExecutions}.
 */
export function runCapture(ops: CaptureOps, executions: readonly NewTradeExecution[], policy: MethodologyPolicy, now: string): Omit<CaptureResult, 'preferences'> {
  const recorded: TradeRecord[] = [];
  const duplicates: string[] = [];
  const closed: TradeRecord[] = [];
  const updated = new Map<number, TradeRecord>();
  const changes = new Map<number, MethodologyChange>();
  const cases: RoleCaseRecord[] = [];
  for (const e of executions) {
    if (ops.hasOrder(e.orderId)) {
      duplicates.push(e.orderId);
      continue;
    }
    // Only the scope's own methodologies are linked (an id from another tenant is dropped, never stored),
    // and of those only the ones of the execution's asset classes that are not quarantined; a proposed one never
    // reached a prompt, so it is never linked.
    const own = e.methodologyIds.filter((id, k) => {
      if (e.methodologyIds.indexOf(id) !== k) return false;
      const m = ops.methodology(id);
      return m !== undefined && m.state !== 'proposed' && (e.methodologyClasses === undefined || (m.state !== 'quarantined' && e.methodologyClasses.includes(m.assetClass)));
    });
    const { methodologyClasses: _classes, ...stored } = e;
    let row = ops.insertTrade({ ...stored, methodologyIds: own }, e.action === 'open' ? 'open' : 'settled', now);
    if (e.action === 'close' && e.quantity > 0) {
      let remaining = e.quantity;
      const touched: number[] = [];
      for (const open of ops.openTrades(e.asset, e.kind)) {
        if (remaining <= EPS) break;
        const left = open.quantity - open.closedQuantity;
        if (left <= EPS) continue;
        const take = Math.min(left, remaining);
        remaining -= take;
        const share = e.realizedPnlUsd * (take / e.quantity);
        const closedQuantity = open.closedQuantity + take;
        const exitPrice = ((open.exitPrice ?? 0) * open.closedQuantity + e.price * take) / closedQuantity;
        const realizedPnlUsd = open.realizedPnlUsd + share;
        const done = closedQuantity >= open.quantity * (1 - 1e-9) - EPS;
        const holdingMs = Math.max(0, Date.parse(e.at) - Date.parse(open.at));
        const outcome: TradeOutcome = realizedPnlUsd > 0 ? 'win' : 'loss';
        const next = ops.updateTrade(open, {
          closedQuantity: done ? open.quantity : closedQuantity, realizedPnlUsd, exitPrice, status: done ? 'closed' : 'open',
          ...(done ? { closedAt: e.at, holdingMs, outcome } : {}),
        });
        touched.push(open.id);
        updated.set(next.id, next);
        if (!done) continue;
        closed.push(next);
        for (const mid of next.methodologyIds) {
          const m = ops.methodology(mid);
          if (!m || !ops.insertAttribution(mid, next.id, outcome, now)) continue;
          const score = scoreMethodology(m, m.uses + 1, m.wins + (outcome === 'win' ? 1 : 0), policy, now);
          const after = ops.updateMethodologyScore(m, score, now);
          const prev = changes.get(mid);
          // Keep the most telling change of the batch (quarantined > proposed/withdrawn > scored).
          const rank = (c: MethodologyChange['change']) => (c === 'quarantined' ? 3 : c === 'scored' ? 1 : 2);
          changes.set(mid, { methodology: after, change: prev && rank(prev.change) > rank(score.change) ? prev.change : score.change });
        }
        const c = ops.insertCase({
          tradeId: next.id, role: next.role, asset: next.asset, ...(next.assetClass !== undefined ? { assetClass: next.assetClass } : {}), kind: next.kind,
          ...(next.direction !== undefined ? { direction: next.direction } : {}), summary: caseSummary(next), outcome, realizedPnlUsd: next.realizedPnlUsd,
          holdingMs, methodologyIds: next.methodologyIds, openedAt: next.at, closedAt: e.at, createdAt: now,
        });
        if (c) cases.push(c);
      }
      if (touched.length > 0) row = ops.setClosedIds(row, touched);
    }
    recorded.push(row);
  }
  return { recorded, duplicates, closed, updated: [...updated.values()], methodologyChanges: [...changes.values()], cases };
}

/** The synchronous row operations the preference-evidence driver needs, run inside one engine transaction. */
export interface ObserveOps {
  /** The id of the scope's behavioural preference with this dimension and normalised text (any state). */
  match(dimension: string, normalizedText: string): number | undefined;
  /** Insert a mined, proposed behavioural preference with one piece of evidence; its id. */
  insertMined(observation: PreferenceObservation): number;
  /** One more piece of evidence (`lastEvidenceAt` moves to now). */
  support(id: number): void;
  /** One more contradiction. */
  contradict(id: number): void;
  /** Ids of the scope's other behavioural preferences of the dimension that are not rejected. */
  rivals(dimension: string, id: number): readonly number[];
}

/**
 * The preference-evidence driver: apply observations in order over `ops` (inside the engine's write
 * transaction). `support` adds evidence to the matching preference (a new proposed one when missing) and a
 * contradiction to every other live one of the dimension; `contradict` adds a contradiction to the match only.
 * Returns the ids touched, ascending.
 */
export function runObserve(ops: ObserveOps, observations: readonly PreferenceObservation[]): number[] {
  const touched = new Set<number>();
  for (const ob of observations) {
    const match = ops.match(ob.dimension, ob.normalizedText);
    if (ob.effect === 'contradict') {
      if (match !== undefined) (ops.contradict(match), touched.add(match));
      continue;
    }
    let id = match;
    if (id === undefined) id = ops.insertMined(ob);
    else ops.support(id);
    touched.add(id);
    for (const other of ops.rivals(ob.dimension, id)) (ops.contradict(other), touched.add(other));
  }
  return [...touched].sort((a, b) => a - b);
}

/** The columns of a methodology row besides its id and scope. */
export type MethodologyFields = Omit<MethodologyRecord, 'id' | 'userId' | 'agentId'>;
/** The columns of a preference row besides its id and scope. */
export type PreferenceFields = Omit<PreferenceRecord, 'id' | 'userId' | 'agentId'>;

/** A new methodology row: a restore's state, scores and times, or a fresh candidate's (or proposed one's). */
export function newMethodologyFields(input: NewMethodology): MethodologyFields {
  const r = input.restore;
  return {
    assetClass: input.assetClass, text: input.text, normalizedText: input.normalizedText, origin: input.origin, sourceRef: input.sourceRef,
    state: r?.state ?? input.state ?? 'candidate', uses: r?.uses ?? 0, wins: r?.wins ?? 0, confidence: r?.confidence ?? 0, graduationProposedAt: r?.graduationProposedAt,
    graduatedAt: r?.graduatedAt, quarantinedAt: r?.quarantinedAt, stateReason: r?.stateReason ?? input.stateReason, createdAt: r?.createdAt ?? input.now, updatedAt: input.now,
  };
}

/** A new preference row: a restore's state, evidence and times, or a fresh proposal's. */
export function newPreferenceFields(input: NewPreference): PreferenceFields {
  const r = input.restore;
  return {
    dimension: input.dimension, kind: input.kind, text: input.text, normalizedText: input.normalizedText, value: input.value, source: input.source,
    state: r?.state ?? 'proposed', evidence: r?.evidence ?? 0, contradictions: r?.contradictions ?? 0, lastEvidenceAt: r?.lastEvidenceAt ?? input.now,
    activatedAt: r?.activatedAt, decidedAt: r?.decidedAt, memoryId: r?.memoryId, createdAt: r?.createdAt ?? input.now, updatedAt: input.now,
  };
}

/** A mined preference's first row (see {@link ObserveOps.insertMined}). */
export function minedPreferenceFields(ob: PreferenceObservation, now: string): PreferenceFields {
  return {
    dimension: ob.dimension, kind: 'behavioural', text: ob.text, normalizedText: ob.normalizedText, value: ob.value, source: 'mined', state: 'proposed',
    evidence: 1, contradictions: 0, lastEvidenceAt: now, createdAt: now, updatedAt: now,
  };
}

/** The change of {@link LearningStorage.transitionMethodology}. */
export type MethodologyTransition = Parameters<LearningStorage['transitionMethodology']>[2];
/** The change of {@link LearningStorage.transitionPreference}. */
export type PreferenceTransition = Parameters<LearningStorage['transitionPreference']>[2];
/** What a methodology transition writes (an absent time is written empty). */
export type MethodologyStatePatch = Pick<MethodologyRecord, 'state' | 'stateReason' | 'updatedAt' | 'graduatedAt' | 'quarantinedAt' | 'graduationProposedAt'>;
/** What a preference transition writes. */
export type PreferenceStatePatch = Pick<PreferenceRecord, 'state' | 'decidedAt' | 'updatedAt' | 'activatedAt' | 'memoryId'>;

/**
 * The compare-and-set rule of a methodology transition: undefined when the row is not in one of `from`;
 * otherwise the new state and reason, graduation/quarantine times set on entering those states and cleared on
 * going back to candidate, and any graduation proposal withdrawn.
 */
export function methodologyTransition(m: MethodologyRecord, change: MethodologyTransition): MethodologyStatePatch | undefined {
  if (!change.from.includes(m.state)) return undefined;
  return {
    state: change.to, stateReason: change.reason, updatedAt: change.now,
    graduatedAt: change.to === 'graduated' ? change.now : change.to === 'candidate' ? undefined : m.graduatedAt,
    quarantinedAt: change.to === 'quarantined' ? change.now : change.to === 'candidate' ? undefined : m.quarantinedAt,
    graduationProposedAt: undefined,
  };
}

/** The compare-and-set rule of a preference transition: undefined when not in one of `from`; `activatedAt` set on activation, the memory id kept unless a new one is given. */
export function preferenceTransition(p: PreferenceRecord, change: PreferenceTransition): PreferenceStatePatch | undefined {
  if (!change.from.includes(p.state)) return undefined;
  return { state: change.to, decidedAt: change.now, updatedAt: change.now, activatedAt: change.to === 'active' ? change.now : p.activatedAt, memoryId: change.memoryId ?? p.memoryId };
}

/** Order of a listing: graduated first, then candidates, proposed, quarantined (then by confidence, uses, id). */
export const METHODOLOGY_RANK: Readonly<Record<MethodologyState, number>> = Object.freeze({ graduated: 0, candidate: 1, proposed: 2, quarantined: 3 });

/** {@link METHODOLOGY_RANK} as an SQL expression over the `state` column (SQLite and PostgreSQL alike). */
export function methodologyRankSql(): string {
  const ranked = Object.entries(METHODOLOGY_RANK).sort((a, b) => a[1] - b[1]);
  const last = ranked.pop()!;
  return `CASE state ${ranked.map(([state, rank]) => `WHEN '${state}' THEN ${rank}`).join(' ')} ELSE ${last[1]} END`;
}

/** How {@link LearningStorage.listCases} orders: pending or memory-less oldest first, reflected newest reflection first, otherwise newest first. */
export type CaseOrder = 'oldest' | 'newest_reflection' | 'newest';
export function caseOrderOf(query: RoleCaseQuery): CaseOrder {
  return query.status === 'pending' || query.withoutMemory === true ? 'oldest' : query.status === 'reflected' ? 'newest_reflection' : 'newest';
}

/** A trade restored by a memory import: the opening trade of its case, already closed (provider `import`). */
export function importedTradeFields(c: ImportedTradeCase): Omit<TradeRecord, 'id' | 'userId' | 'agentId'> {
  return {
    orderId: c.orderId, toolName: 'memory_import', action: 'open', kind: c.kind, asset: c.asset, assetClass: c.assetClass, side: c.side, direction: c.direction,
    quantity: c.quantity, price: c.entryPrice, notionalUsd: c.notionalUsd, feeUsd: 0, realizedPnlUsd: c.realizedPnlUsd, role: c.role, methodologyIds: [...c.methodologyIds],
    simulated: c.simulated, provider: 'import', at: c.openedAt, status: 'closed', closedQuantity: c.quantity, exitPrice: c.exitPrice, closedAt: c.closedAt,
    holdingMs: c.holdingMs, outcome: c.outcome,
  };
}

/** The case restored by a memory import, on its restored trade. */
export function importedCaseFields(c: ImportedTradeCase, tradeId: number): Omit<RoleCaseRecord, 'id' | 'userId' | 'agentId'> {
  return {
    tradeId, role: c.role, asset: c.asset, assetClass: c.assetClass, kind: c.kind, direction: c.direction, summary: c.summary, outcome: c.outcome,
    realizedPnlUsd: c.realizedPnlUsd, holdingMs: c.holdingMs, methodologyIds: [...c.methodologyIds], openedAt: c.openedAt, closedAt: c.closedAt, createdAt: c.now,
    reflectedAt: c.reflectedAt, classification: c.classification, reflection: c.reflection, lessonMemoryIds: [],
  };
}

/** An import whose order id is already a trade of the scope: its case unchanged, or INVALID_ARGUMENT when that trade has none. */
export function knownImport(operation: string, orderId: string, existing: RoleCaseRecord | undefined): { readonly case: RoleCaseRecord; readonly created: false } {
  if (existing) return { case: existing, created: false };
  throw invalidArgument(operation, `orderId ${JSON.stringify(orderId)} is a trade of this scope without a case; import it under another order id`);
}

/** The sync state after an attempt: success moves the watermark forward (never back) and resets the failures; failure counts one more. */
export function nextSyncState(current: HistorySyncState | undefined, a: HistorySyncAttempt): HistorySyncState {
  if (a.ok) {
    const marks = [current?.lastSyncedTsMs, a.watermarkMs].filter((x): x is number => x !== undefined);
    return { source: a.source, subAccountId: a.subAccountId, lastSyncedTsMs: marks.length > 0 ? Math.max(...marks) : undefined, lastSyncedAt: a.now, consecutiveFailures: 0 };
  }
  return {
    source: a.source, subAccountId: a.subAccountId, lastSyncedTsMs: current?.lastSyncedTsMs, lastSyncedAt: a.now, lastError: a.error.slice(0, 2000),
    consecutiveFailures: (current?.consecutiveFailures ?? 0) + 1,
  };
}

/** The counts an engine reads for {@link LearningStats}: per-state counts may omit a state with no row. */
export interface LearningCounts {
  readonly methodologies: Readonly<Record<string, number>>;
  readonly graduationProposed: number;
  readonly preferences: Readonly<Record<string, number>>;
  readonly hardConstraints: Readonly<Record<string, number>>;
  readonly cases: LearningStats['cases'];
  readonly trades: Readonly<Record<string, number>>;
  readonly perpsFills: number;
  readonly externalSpot: number;
  readonly extractionQueue: LearningStats['extractionQueue'];
}

/** {@link LearningStats} from an engine's counts, every state present. */
export function learningStatsOf(c: LearningCounts): LearningStats {
  const all = <K extends string>(keys: readonly K[], counts: Readonly<Record<string, number>>) => Object.fromEntries(keys.map((k) => [k, counts[k] ?? 0])) as Record<K, number>;
  return {
    methodologies: all(METHODOLOGY_STATES, c.methodologies), graduationProposed: c.graduationProposed, preferences: all(PREFERENCE_STATES, c.preferences),
    hardConstraints: all(PREFERENCE_STATES, c.hardConstraints), cases: c.cases, trades: all(['open', 'closed', 'settled'] as const, c.trades),
    perpsFills: c.perpsFills, externalSpot: c.externalSpot, extractionQueue: c.extractionQueue,
  };
}

/** The extraction-queue figures of {@link LearningStats} from a `COUNT(*) AS n, MIN(created_at) AS oldest` row. */
export function queued(row: { readonly n?: unknown; readonly oldest?: unknown } | undefined): LearningStats['extractionQueue'] {
  const waiting = Number(row?.n ?? 0);
  return { waiting, ...(waiting > 0 && typeof row?.oldest === 'string' ? { oldestAt: row.oldest } : {}) };
}
