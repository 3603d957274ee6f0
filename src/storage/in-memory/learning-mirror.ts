/**
 * The in-memory engine's side tables: the trade-history mirror (perp fills, spot activities, sync states),
 * personalization snapshots, the memory-extraction queue, and the counts of `stats`.
 */
import type { ExtractionClaim, NewPersonalizationSnapshot } from '../learning-domain';
import { type LearningCounts, nextSyncState, queued } from '../learning-logic';
import type { ExternalSpotRecord, HistorySyncAttempt, HistorySyncState, LearningScope, NewExternalSpotActivity, NewExtractionTurn, NewPerpsFill, PerpsFillRecord, PersonalizationSnapshot } from '../learning-types';
import { compact } from './copy';
import { copy, type InMemoryLearningState, inScope, rowsOf, scopeFields, scopeKey } from './learning-state';

const newestFirst = (a: { tsMs: number; id: number }, b: { tsMs: number; id: number }) => b.tsMs - a.tsMs || b.id - a.id;

export function insertPerpsFills(st: InMemoryLearningState, scope: LearningScope, input: readonly NewPerpsFill[]): number {
  let n = 0;
  for (const f of input) {
    const k = `${scopeKey(scope)}\u0000${f.subAccountId}\u0000${f.fillUid}`;
    if (st.fillKeys.has(k)) continue;
    st.fillKeys.add(k);
    const { now, ...rest } = f;
    const row: PerpsFillRecord = compact({ ...rest, id: st.nextId++, createdAt: now });
    st.fills.push(row);
    st.fillScope.set(row.id, scopeKey(scope));
    n++;
  }
  return n;
}

export function insertExternalSpot(st: InMemoryLearningState, scope: LearningScope, input: readonly NewExternalSpotActivity[]): number {
  let n = 0;
  for (const a of input) {
    const k = `${scopeKey(scope)}\u0000${a.txHash}`;
    if (st.spotKeys.has(k)) continue;
    st.spotKeys.add(k);
    const { now, ...rest } = a;
    const row: ExternalSpotRecord = compact({ ...rest, id: st.nextId++, createdAt: now });
    st.spots.push(row);
    st.spotScope.set(row.id, scopeKey(scope));
    n++;
  }
  return n;
}

export function listPerpsFills(st: InMemoryLearningState, scope: LearningScope, subAccountId: string | undefined, limit: number): PerpsFillRecord[] {
  return st.fills
    .filter((f) => st.fillScope.get(f.id) === scopeKey(scope) && (subAccountId === undefined || f.subAccountId === subAccountId))
    .sort(newestFirst)
    .slice(0, limit)
    .map(copy);
}

export function listExternalSpot(st: InMemoryLearningState, scope: LearningScope, limit: number): ExternalSpotRecord[] {
  return st.spots.filter((a) => st.spotScope.get(a.id) === scopeKey(scope)).sort(newestFirst).slice(0, limit).map(copy);
}

export function listSyncStates(st: InMemoryLearningState, scope: LearningScope): HistorySyncState[] {
  const prefix = `${scopeKey(scope)}\u0000`;
  return [...st.sync.entries()]
    .filter(([k]) => k.startsWith(prefix) && k.split('\u0000').length === 4)
    .map(([, v]) => copy(v))
    .sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : a.subAccountId < b.subAccountId ? -1 : a.subAccountId > b.subAccountId ? 1 : 0));
}

const syncKey = (scope: LearningScope, source: string, subAccountId: string) => `${scopeKey(scope)}\u0000${source}\u0000${subAccountId}`;

export function getSyncState(st: InMemoryLearningState, scope: LearningScope, source: string, subAccountId: string): HistorySyncState | undefined {
  const s = st.sync.get(syncKey(scope, source, subAccountId));
  return s && copy(s);
}

export function recordSyncAttempt(st: InMemoryLearningState, scope: LearningScope, a: HistorySyncAttempt): HistorySyncState {
  const k = syncKey(scope, a.source, a.subAccountId);
  const next = compact(nextSyncState(st.sync.get(k), a));
  st.sync.set(k, next);
  return copy(next);
}

export function recordPersonalizationSnapshot(st: InMemoryLearningState, scope: LearningScope, s: NewPersonalizationSnapshot): PersonalizationSnapshot {
  const row = { ...scopeFields(scope), id: st.nextId++, sessionWatermark: s.sessionWatermark, sessionIds: [...s.sessionIds], factHashes: [...s.factHashes], writtenIds: [...s.writtenIds], createdAt: s.now };
  st.snapshots.push(row);
  const { userId: _u, agentId: _a, ...out } = row as typeof row & { agentId?: string };
  return copy(out);
}

export function latestPersonalizationSnapshot(st: InMemoryLearningState, scope: LearningScope): PersonalizationSnapshot | undefined {
  const s = st.snapshots.filter((x) => inScope(x, scope)).at(-1);
  if (!s) return undefined;
  const { userId: _u, agentId: _a, ...out } = s;
  return copy(out);
}

export function enqueueExtraction(st: InMemoryLearningState, scope: LearningScope, t: NewExtractionTurn): boolean {
  if (rowsOf(st.queue, scope).some((q) => q.turnId === t.turnId)) return false;
  const id = st.nextId++;
  st.queue.set(id, { id, ...scopeFields(scope), sessionId: t.sessionId, turnId: t.turnId, text: t.text, createdAt: t.now, attempts: 0 });
  return true;
}

export function claimExtractions(st: InMemoryLearningState, scope: LearningScope, c: ExtractionClaim, limit: number) {
  const free = rowsOf(st.queue, scope).filter((q) => q.claimedUntil === undefined || q.claimedUntil < c.now).sort((a, b) => a.id - b.id).slice(0, limit);
  return free.map((q) => {
    const next = { ...q, attempts: q.attempts + 1, claimedBy: c.owner, claimedUntil: c.leaseUntil };
    st.queue.set(q.id, next);
    const { claimedBy: _b, claimedUntil: _u, ...record } = next;
    return copy(record);
  });
}

export function completeExtractions(st: InMemoryLearningState, scope: LearningScope, ids: readonly number[]): number {
  let n = 0;
  for (const id of ids) {
    const q = st.queue.get(id);
    if (q && inScope(q, scope)) n += st.queue.delete(id) ? 1 : 0;
  }
  return n;
}

/** The scope's counts for `stats`. */
export function counts(st: InMemoryLearningState, scope: LearningScope, overdueBefore: string): LearningCounts {
  const tally = (values: Iterable<string>) => {
    const out: Record<string, number> = {};
    for (const v of values) out[v] = (out[v] ?? 0) + 1;
    return out;
  };
  const ms = rowsOf(st.methodologies, scope);
  const ps = rowsOf(st.preferences, scope);
  const cs = rowsOf(st.cases, scope);
  const qs = rowsOf(st.queue, scope);
  const k = scopeKey(scope);
  return {
    methodologies: tally(ms.map((m) => m.state)),
    graduationProposed: ms.filter((m) => m.state === 'candidate' && m.graduationProposedAt !== undefined).length,
    preferences: tally(ps.map((p) => p.state)),
    hardConstraints: tally(ps.filter((p) => p.kind === 'hard_constraint').map((p) => p.state)),
    cases: {
      pending: cs.filter((c) => c.reflectedAt === undefined).length,
      overdue: cs.filter((c) => c.reflectedAt === undefined && c.closedAt < overdueBefore).length,
      reflected: cs.filter((c) => c.reflectedAt !== undefined).length,
    },
    trades: tally(rowsOf(st.trades, scope).map((t) => t.status)),
    perpsFills: st.fills.filter((f) => st.fillScope.get(f.id) === k).length,
    externalSpot: st.spots.filter((a) => st.spotScope.get(a.id) === k).length,
    extractionQueue: queued({ n: qs.length, oldest: qs.map((q) => q.createdAt).sort()[0] }),
  };
}
