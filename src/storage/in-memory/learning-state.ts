/** The in-memory learning engine's state (its tables as maps) and the scope helpers its parts share. */
import type {
  ExternalSpotRecord, ExtractionTurnRecord, HistorySyncState, LearningScope, MethodologyRecord, PerpsFillRecord, PersonalizationSnapshot, PreferenceRecord, RoleCaseRecord,
  TradeRecord,
} from '../learning-types';
import { jsonCopy } from './copy';

type Scoped<T> = T & { readonly userId: string; readonly agentId?: string | undefined };

/** A queued extraction turn with its lease. */
export type QueuedTurn = ExtractionTurnRecord & { readonly claimedBy?: string; readonly claimedUntil?: string };

/** The in-memory learning tables. Ids come from one counter shared by every table. */
export interface InMemoryLearningState {
  nextId: number;
  readonly trades: Map<number, TradeRecord>;
  readonly methodologies: Map<number, MethodologyRecord>;
  /** `methodologyId:tradeId` of every attribution. */
  readonly attributions: Set<string>;
  readonly cases: Map<number, RoleCaseRecord>;
  readonly preferences: Map<number, PreferenceRecord>;
  readonly fills: PerpsFillRecord[];
  readonly fillKeys: Set<string>;
  readonly fillScope: Map<number, string>;
  readonly spots: ExternalSpotRecord[];
  readonly spotKeys: Set<string>;
  readonly spotScope: Map<number, string>;
  /** By `scope key \0 source \0 sub-account`. */
  readonly sync: Map<string, HistorySyncState>;
  readonly snapshots: Array<Scoped<PersonalizationSnapshot>>;
  readonly queue: Map<number, QueuedTurn>;
}

/** Empty tables. */
export function newLearningState(): InMemoryLearningState {
  return {
    nextId: 1, trades: new Map(), methodologies: new Map(), attributions: new Set(), cases: new Map(), preferences: new Map(), fills: [], fillKeys: new Set(),
    fillScope: new Map(), spots: [], spotKeys: new Set(), spotScope: new Map(), sync: new Map(), snapshots: [], queue: new Map(),
  };
}

/** The scope as one string key. */
export const scopeKey = (s: LearningScope) => `${s.userId}\u0000${s.agentId ?? ''}`;
/** Whether a row belongs to the scope (exact agent; none for user-level rows). */
export const inScope = (r: { userId: string; agentId?: string | undefined }, s: LearningScope) => r.userId === s.userId && (r.agentId ?? '') === (s.agentId ?? '');
/** The scope's fields of a row. */
export const scopeFields = (s: LearningScope) => ({ userId: s.userId, ...(s.agentId === undefined ? {} : { agentId: s.agentId }) });
/** Every read hands out a copy. */
export const copy = <T>(v: T): T => jsonCopy(v);

/** A restored row keeps its id when the table has none such (ids stay above every kept one). */
export function takeId(st: InMemoryLearningState, table: ReadonlyMap<number, unknown>, wanted: number | undefined): number {
  if (wanted !== undefined && !table.has(wanted)) {
    st.nextId = Math.max(st.nextId, wanted + 1);
    return wanted;
  }
  return st.nextId++;
}

/** The scope's rows of a table. */
export function rowsOf<T extends { userId: string; agentId?: string | undefined }>(table: ReadonlyMap<number, T>, scope: LearningScope): T[] {
  return [...table.values()].filter((r) => inScope(r, scope));
}

/** Distinct scopes of some rows, by scope key, at most `n`. */
export function distinctScopes(rows: Iterable<{ userId: string; agentId?: string | undefined }>, n: number): LearningScope[] {
  const seen = new Map<string, LearningScope>();
  for (const r of rows) seen.set(scopeKey(r), scopeFields(r));
  return [...seen.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).slice(0, n).map(([, v]) => v);
}
