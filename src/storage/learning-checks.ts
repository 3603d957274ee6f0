/**
 * Every input check of the learning domain, in one place: the shared domain (`learning-domain.ts`) runs them
 * before an engine sees a call, and the learning store and its jobs reuse the scope and row-id checks. Each
 * throws INVALID_ARGUMENT naming the field and what was expected.
 */
import { invalidArgument } from './sqlite/checks';
import type { ImportedTradeCase, MethodologyPolicy, NewMethodology, NewPreference, NewTradeExecution, PreferenceObservation } from './learning-types';
import { METHODOLOGY_STATES, PREFERENCE_STATES } from './learning-logic';

/** Check a policy's four numbers; throws INVALID_ARGUMENT naming the field. */
export function checkMethodologyPolicy(operation: string, policy: MethodologyPolicy): void {
  for (const k of ['graduationMinConfidence', 'demotionMaxConfidence'] as const) {
    if (!(typeof policy[k] === 'number' && policy[k] >= 0 && policy[k] <= 1)) throw invalidArgument(operation, `policy.${k} must be a number from 0 to 1, got ${String(policy[k])}`);
  }
  for (const k of ['graduationMinUses', 'demotionMinUses'] as const) {
    if (!(Number.isSafeInteger(policy[k]) && policy[k] >= 1)) throw invalidArgument(operation, `policy.${k} must be a positive integer, got ${String(policy[k])}`);
  }
}

const ACTIONS = new Set(['open', 'close', 'transfer']);
const KINDS = new Set(['spot', 'perp', 'transfer']);
const nonNeg = (n: unknown): n is number => typeof n === 'number' && Number.isFinite(n) && n >= 0;

/** Check one execution; throws INVALID_ARGUMENT naming `executions[i].field`. */
export function checkExecution(operation: string, e: NewTradeExecution, i: number): void {
  const f = (field: string, msg: string) => invalidArgument(operation, `executions[${i}].${field} ${msg}`);
  if (typeof e !== 'object' || e === null) throw invalidArgument(operation, `executions[${i}] must be an object`);
  for (const k of ['orderId', 'toolName', 'asset', 'side', 'role', 'provider'] as const) {
    if (typeof e[k] !== 'string' || e[k].length === 0 || e[k].length > 512) throw f(k, `must be a non-empty string of at most 512 characters, got ${JSON.stringify(e[k])}`);
  }
  if (!ACTIONS.has(e.action)) throw f('action', `must be open, close or transfer, got ${JSON.stringify(e.action)}`);
  if (!KINDS.has(e.kind)) throw f('kind', `must be spot, perp or transfer, got ${JSON.stringify(e.kind)}`);
  for (const k of ['quantity', 'price', 'notionalUsd', 'feeUsd'] as const) if (!nonNeg(e[k])) throw f(k, `must be a non-negative number, got ${String(e[k])}`);
  if (!(typeof e.realizedPnlUsd === 'number' && Number.isFinite(e.realizedPnlUsd))) throw f('realizedPnlUsd', `must be a finite number, got ${String(e.realizedPnlUsd)}`);
  if (e.direction !== undefined && e.direction !== 'long' && e.direction !== 'short') throw f('direction', `must be long or short, got ${JSON.stringify(e.direction)}`);
  if (!Array.isArray(e.methodologyIds) || !e.methodologyIds.every((x) => Number.isSafeInteger(x) && x > 0)) throw f('methodologyIds', 'must be an array of positive integer ids');
  if (e.methodologyClasses !== undefined && (!Array.isArray(e.methodologyClasses) || !e.methodologyClasses.every((c) => typeof c === 'string'))) throw f('methodologyClasses', 'must be an array of asset class names');
  if (typeof e.simulated !== 'boolean') throw f('simulated', 'must be a boolean');
  if (typeof e.at !== 'string' || Number.isNaN(Date.parse(e.at))) throw f('at', `must be an ISO time, got ${JSON.stringify(e.at)}`);
}

/** A scope with a non-empty `userId` (and `agentId` when given); throws INVALID_ARGUMENT otherwise. */
export function checkLearningScope(operation: string, scope: { readonly userId: string; readonly agentId?: string | undefined }): void {
  if (typeof scope !== 'object' || scope === null || typeof scope.userId !== 'string' || scope.userId.length === 0) {
    throw invalidArgument(operation, 'scope.userId must be a non-empty string');
  }
  if (scope.agentId !== undefined && (typeof scope.agentId !== 'string' || scope.agentId.length === 0)) {
    throw invalidArgument(operation, 'scope.agentId must be a non-empty string when given');
  }
}

/** A positive integer id; throws INVALID_ARGUMENT naming the field. */
export function checkRowId(operation: string, field: string, id: unknown): number {
  if (!Number.isSafeInteger(id) || (id as number) < 1) throw invalidArgument(operation, `${field} must be a positive integer, got ${String(id)}`);
  return id as number;
}

const str = (v: unknown, max = 4000): v is string => typeof v === 'string' && v.length > 0 && v.length <= max;

/** Check a methodology input; throws INVALID_ARGUMENT naming the field. */
export function checkNewMethodology(operation: string, m: { assetClass: unknown; text: unknown; normalizedText: unknown; origin: unknown; state?: unknown; stateReason?: unknown }): void {
  if (!str(m.assetClass, 64) || !/^[a-z][a-z0-9_]*$/u.test(m.assetClass)) throw invalidArgument(operation, `assetClass must be a lower snake case name (crypto_major, perps, any, …), got ${JSON.stringify(m.assetClass)}`);
  if (!str(m.text)) throw invalidArgument(operation, 'text must be a non-empty string of at most 4000 characters');
  if (!str(m.normalizedText)) throw invalidArgument(operation, 'normalizedText must be a non-empty string');
  if (!['seed', 'lesson', 'synthesis', 'memory_learn', 'api', 'import'].includes(m.origin as string)) throw invalidArgument(operation, `origin must be seed, lesson, synthesis, memory_learn, api or import, got ${JSON.stringify(m.origin)}`);
  if (m.state !== undefined && m.state !== 'candidate' && m.state !== 'proposed') throw invalidArgument(operation, `state must be candidate or proposed, got ${JSON.stringify(m.state)}`);
  if (m.stateReason !== undefined && !str(m.stateReason, 2000)) throw invalidArgument(operation, 'stateReason must be a non-empty string of at most 2000 characters');
}

const iso = (v: unknown): v is string => typeof v === 'string' && v.length <= 40 && !Number.isNaN(Date.parse(v));
const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** Check a methodology restore (memory import); throws INVALID_ARGUMENT naming the field. */
export function checkMethodologyRestore(operation: string, r: NewMethodology['restore']): void {
  if (r === undefined) return;
  if (typeof r !== 'object' || r === null) throw invalidArgument(operation, 'restore must be an object');
  if (r.id !== undefined) checkRowId(operation, 'restore.id', r.id);
  if (!METHODOLOGY_STATES.includes(r.state)) throw invalidArgument(operation, `restore.state must be one of ${METHODOLOGY_STATES.join(', ')}, got ${JSON.stringify(r.state)}`);
  if (!count(r.uses) || !count(r.wins) || r.wins > r.uses) throw invalidArgument(operation, `restore.uses and restore.wins must be integers with 0 ≤ wins ≤ uses, got ${String(r.wins)}/${String(r.uses)}`);
  if (!(typeof r.confidence === 'number' && r.confidence >= 0 && r.confidence <= 1)) throw invalidArgument(operation, `restore.confidence must be a number from 0 to 1, got ${String(r.confidence)}`);
  for (const k of ['graduationProposedAt', 'graduatedAt', 'quarantinedAt'] as const) if (r[k] !== undefined && !iso(r[k])) throw invalidArgument(operation, `restore.${k} must be an ISO date, got ${JSON.stringify(r[k])}`);
  if (!iso(r.createdAt)) throw invalidArgument(operation, `restore.createdAt must be an ISO date, got ${JSON.stringify(r.createdAt)}`);
  if (r.stateReason !== undefined && !str(r.stateReason, 2000)) throw invalidArgument(operation, 'restore.stateReason must be a non-empty string of at most 2000 characters');
}

/** Check a preference restore (memory import); throws INVALID_ARGUMENT naming the field. */
export function checkPreferenceRestore(operation: string, r: NewPreference['restore']): void {
  if (r === undefined) return;
  if (typeof r !== 'object' || r === null) throw invalidArgument(operation, 'restore must be an object');
  if (r.id !== undefined) checkRowId(operation, 'restore.id', r.id);
  if (!PREFERENCE_STATES.includes(r.state)) throw invalidArgument(operation, `restore.state must be one of ${PREFERENCE_STATES.join(', ')}, got ${JSON.stringify(r.state)}`);
  if (!count(r.evidence) || !count(r.contradictions)) throw invalidArgument(operation, 'restore.evidence and restore.contradictions must be non-negative integers');
  for (const k of ['lastEvidenceAt', 'createdAt'] as const) if (!iso(r[k])) throw invalidArgument(operation, `restore.${k} must be an ISO date, got ${JSON.stringify(r[k])}`);
  for (const k of ['activatedAt', 'decidedAt'] as const) if (r[k] !== undefined && !iso(r[k])) throw invalidArgument(operation, `restore.${k} must be an ISO date, got ${JSON.stringify(r[k])}`);
  if (r.memoryId !== undefined) checkRowId(operation, 'restore.memoryId', r.memoryId);
}

/** Check an imported trade case; throws INVALID_ARGUMENT naming the field. */
export function checkImportedTradeCase(operation: string, c: ImportedTradeCase): void {
  if (typeof c !== 'object' || c === null) throw invalidArgument(operation, 'input must be an object');
  if (c.id !== undefined) checkRowId(operation, 'id', c.id);
  for (const k of ['orderId', 'role', 'asset', 'side'] as const) if (!str(c[k], 256)) throw invalidArgument(operation, `${k} must be a non-empty string of at most 256 characters`);
  if (!str(c.summary)) throw invalidArgument(operation, 'summary must be a non-empty string of at most 4000 characters');
  if (c.kind !== 'spot' && c.kind !== 'perp' && c.kind !== 'transfer') throw invalidArgument(operation, `kind must be spot, perp or transfer, got ${JSON.stringify(c.kind)}`);
  if (c.direction !== undefined && c.direction !== 'long' && c.direction !== 'short') throw invalidArgument(operation, `direction must be long or short, got ${JSON.stringify(c.direction)}`);
  if (c.outcome !== 'win' && c.outcome !== 'loss') throw invalidArgument(operation, `outcome must be win or loss, got ${JSON.stringify(c.outcome)}`);
  for (const k of ['quantity', 'entryPrice', 'notionalUsd', 'realizedPnlUsd'] as const) if (!(typeof c[k] === 'number' && Number.isFinite(c[k]))) throw invalidArgument(operation, `${k} must be a finite number, got ${String(c[k])}`);
  if (c.exitPrice !== undefined && !(typeof c.exitPrice === 'number' && Number.isFinite(c.exitPrice))) throw invalidArgument(operation, `exitPrice must be a finite number, got ${String(c.exitPrice)}`);
  if (!count(c.holdingMs)) throw invalidArgument(operation, `holdingMs must be a non-negative integer, got ${String(c.holdingMs)}`);
  if (!Array.isArray(c.methodologyIds) || !c.methodologyIds.every((id) => Number.isSafeInteger(id) && id > 0)) throw invalidArgument(operation, 'methodologyIds must be an array of positive integers');
  for (const k of ['openedAt', 'closedAt', 'now'] as const) if (!iso(c[k])) throw invalidArgument(operation, `${k} must be an ISO date, got ${JSON.stringify(c[k])}`);
  if (c.reflectedAt !== undefined && !iso(c.reflectedAt)) throw invalidArgument(operation, `reflectedAt must be an ISO date, got ${JSON.stringify(c.reflectedAt)}`);
  if (c.classification !== undefined && !['logic_error', 'missing_data', 'exogenous', 'variance'].includes(c.classification)) throw invalidArgument(operation, `classification must be logic_error, missing_data, exogenous or variance, got ${JSON.stringify(c.classification)}`);
  if (c.reflection !== undefined && !str(c.reflection, 20_000)) throw invalidArgument(operation, 'reflection must be a non-empty string of at most 20000 characters');
  if (typeof c.simulated !== 'boolean') throw invalidArgument(operation, 'simulated must be a boolean');
}

/** Check a preference input; throws INVALID_ARGUMENT naming the field. */
export function checkNewPreference(operation: string, p: { dimension: unknown; kind?: unknown; text: unknown; normalizedText: unknown; source?: unknown }): void {
  if (!str(p.dimension, 64) || !/^[a-z][a-z0-9_]*$/u.test(p.dimension)) throw invalidArgument(operation, `dimension must be a lower snake case name (slippage, leverage, …), got ${JSON.stringify(p.dimension)}`);
  if (p.kind !== undefined && p.kind !== 'behavioural' && p.kind !== 'hard_constraint') throw invalidArgument(operation, `kind must be behavioural or hard_constraint, got ${JSON.stringify(p.kind)}`);
  if (!str(p.text, 2000)) throw invalidArgument(operation, 'text must be a non-empty string of at most 2000 characters');
  if (!str(p.normalizedText, 2000)) throw invalidArgument(operation, 'normalizedText must be a non-empty string');
  if (p.source !== undefined && !['mined', 'memory_learn', 'api', 'import'].includes(p.source as string)) throw invalidArgument(operation, `source must be mined, memory_learn, api or import, got ${JSON.stringify(p.source)}`);
}

/** Check a perp fill of the mirror. */
export function checkPerpsFill(operation: string, f: { subAccountId: unknown; oid: unknown; tsMs: unknown; symbol: unknown; side: unknown; size: unknown; price: unknown; fee: unknown; closedPnl: unknown; fillUid: unknown }, i: number): void {
  const bad = (field: string, msg: string) => invalidArgument(operation, `fills[${i}].${field} ${msg}`);
  if (typeof f.subAccountId !== 'string') throw bad('subAccountId', 'must be a string');
  for (const k of ['oid', 'symbol', 'side', 'fillUid'] as const) if (!str(f[k], 512)) throw bad(k, 'must be a non-empty string');
  if (!Number.isSafeInteger(f.tsMs) || (f.tsMs as number) < 0) throw bad('tsMs', `must be a non-negative integer (ms), got ${String(f.tsMs)}`);
  for (const k of ['size', 'price', 'fee', 'closedPnl'] as const) if (!(typeof f[k] === 'number' && Number.isFinite(f[k]))) throw bad(k, `must be a finite number, got ${String(f[k])}`);
}

/** Check a spot activity of the mirror. */
export function checkSpotActivity(operation: string, a: { txHash: unknown; tsMs: unknown; type: unknown; status: unknown; valueUsd?: unknown }, i: number): void {
  const bad = (field: string, msg: string) => invalidArgument(operation, `activities[${i}].${field} ${msg}`);
  for (const k of ['txHash', 'type', 'status'] as const) if (!str(a[k], 512)) throw bad(k, 'must be a non-empty string');
  if (!Number.isSafeInteger(a.tsMs) || (a.tsMs as number) < 0) throw bad('tsMs', `must be a non-negative integer (ms), got ${String(a.tsMs)}`);
  if (a.valueUsd !== undefined && !(typeof a.valueUsd === 'number' && Number.isFinite(a.valueUsd))) throw bad('valueUsd', 'must be a finite number');
}

/** A list of known states (or absent); throws INVALID_ARGUMENT naming the field. */
export function checkStateList(operation: string, field: string, states: readonly string[] | undefined, allowed: readonly string[]): void {
  if (states === undefined) return;
  if (!Array.isArray(states) || !states.every((s) => allowed.includes(s))) throw invalidArgument(operation, `${field} must be a list of ${allowed.join(', ')}`);
}

/** The checks of a compare-and-set transition: scope, id, `from` and `to` states. */
export function checkTransition(operation: string, scope: LearningScopeLike, id: unknown, change: { readonly from: readonly string[]; readonly to: string }, allowed: readonly string[]): void {
  checkLearningScope(operation, scope);
  checkRowId(operation, 'id', id);
  checkStateList(operation, 'from', change.from, allowed);
  checkStateList(operation, 'to', [change.to], allowed);
}

/** The checks of `recordExecutions`: scope, every execution, the policy. */
export function checkCaptureInput(
  operation: string,
  scope: LearningScopeLike,
  input: { readonly executions: readonly NewTradeExecution[]; readonly policy: MethodologyPolicy; readonly observations?: readonly PreferenceObservation[] | undefined },
): void {
  checkLearningScope(operation, scope);
  if (!Array.isArray(input.executions)) throw invalidArgument(operation, 'executions must be an array');
  input.executions.forEach((e, i) => checkExecution(operation, e, i));
  checkMethodologyPolicy(operation, input.policy);
  if (input.observations !== undefined) checkObservations(operation, scope, input.observations);
}

/** The checks of `observePreferences`. */
export function checkObservations(operation: string, scope: LearningScopeLike, observations: ReadonlyArray<{ dimension: unknown; text: unknown; normalizedText: unknown; effect: unknown }>): void {
  checkLearningScope(operation, scope);
  observations.forEach((ob, i) => {
    checkNewPreference(`${operation} observations[${i}]`, ob);
    if (ob.effect !== 'support' && ob.effect !== 'contradict') throw invalidArgument(operation, `observations[${i}].effect must be support or contradict`);
  });
}

/** The checks of `recordSyncAttempt`. */
export function checkSyncAttempt(operation: string, scope: LearningScopeLike, a: { ok: boolean; source: unknown; subAccountId: unknown; watermarkMs?: unknown }): void {
  checkLearningScope(operation, scope);
  if (typeof a.source !== 'string' || a.source.length === 0) throw invalidArgument(operation, 'source must be a non-empty string');
  if (typeof a.subAccountId !== 'string') throw invalidArgument(operation, 'subAccountId must be a string (empty for none)');
  if (a.ok && a.watermarkMs !== undefined && !(Number.isSafeInteger(a.watermarkMs) && (a.watermarkMs as number) >= 0)) throw invalidArgument(operation, 'watermarkMs must be a non-negative integer');
}

type LearningScopeLike = { readonly userId: string; readonly agentId?: string | undefined };

/** Longest user text an extraction queue row keeps (the caller cuts longer messages). */
export const MAX_EXTRACTION_TEXT = 8000;

/** Check a turn to queue for memory extraction; throws INVALID_ARGUMENT naming the field. */
export function checkExtractionTurn(operation: string, scope: LearningScopeLike, t: { sessionId: unknown; turnId: unknown; text: unknown; now: unknown }): void {
  checkLearningScope(operation, scope);
  if (!str(t.sessionId, 200)) throw invalidArgument(operation, 'sessionId must be a non-empty string of at most 200 characters');
  if (!str(t.turnId, 200)) throw invalidArgument(operation, 'turnId must be a non-empty string of at most 200 characters');
  if (!str(t.text, MAX_EXTRACTION_TEXT)) throw invalidArgument(operation, `text must be a non-empty string of at most ${MAX_EXTRACTION_TEXT} characters`);
  if (typeof t.now !== 'string' || Number.isNaN(Date.parse(t.now))) throw invalidArgument(operation, 'now must be an ISO date');
}

/** Check an extraction claim; returns the limit. Throws INVALID_ARGUMENT naming the field. */
export function checkExtractionClaim(operation: string, scope: LearningScopeLike, c: { owner: unknown; now: unknown; leaseUntil: unknown; limit: unknown }): number {
  checkLearningScope(operation, scope);
  if (!str(c.owner, 200)) throw invalidArgument(operation, 'owner must be a non-empty string');
  if (typeof c.now !== 'string' || Number.isNaN(Date.parse(c.now))) throw invalidArgument(operation, 'now must be an ISO date');
  if (typeof c.leaseUntil !== 'string' || Number.isNaN(Date.parse(c.leaseUntil))) throw invalidArgument(operation, 'leaseUntil must be an ISO date');
  if (!Number.isSafeInteger(c.limit) || (c.limit as number) < 1 || (c.limit as number) > 1000) throw invalidArgument(operation, `limit must be an integer from 1 to 1000, got ${String(c.limit)}`);
  return c.limit as number;
}

/** Check a list of row ids; throws INVALID_ARGUMENT naming the field. */
export function checkRowIds(operation: string, field: string, list: unknown): number[] {
  if (!Array.isArray(list)) throw invalidArgument(operation, `${field} must be an array of positive integers`);
  return list.map((id, i) => checkRowId(operation, `${field}[${i}]`, id));
}
