/**
 * The doctor: a read-only health report of one tenant's memory and learning state (`runDoctor`), and an
 * idempotent, non-destructive maintenance pipeline (`runDoctorFixes`). See docs/memory.md, "Doctor".
 *
 * The fixes' safety envelope is enforced here, not promised in a prompt: they never delete a row, never
 * graduate a methodology, never activate a preference, never rewrite a reflection and never touch the
 * audit log except to append one `doctor.fix.<name>` row per action that changed something. The
 * `permissions` fix only removes group and other bits from paths under `privatePaths`. Without `apply` they
 * only count what they would do.
 */
import { MinaraError } from '../errors/minara-error';
import type { LearningStore } from '../learning/types';
import type { ModelConfigStatus } from '../llm/resolve-model';
import { extractMemoryEdges } from '../memory/edges';
import type { MemoryStore } from '../memory/types';
import { DEFAULT_METHODOLOGY_POLICY, wilsonLowerBound } from '../storage/learning-logic';
import type { LearningStats, MethodologyPolicy } from '../storage/learning-types';
import type { EmbeddingState, MemoryEdgeInput, MemoryScope, MemoryStats } from '../storage/memory-types';
import type { AuditVerifyReport } from '../storage/audit-types';
import type { Storage } from '../storage/types';
import { findLoosePaths, type LoosePath, tightenPaths } from '../util/private-fs';
import { WORKSPACE_FILE_NAMES } from '../workspace/files';
import type { Workspace } from '../workspace/workspace';

/** A count, or its bucket (`0`, `1–9`, `10–99`, …) in an anonymous report. */
export type DoctorCount = number | string;

/** Options of {@link runDoctor}. */
export interface DoctorOptions {
  readonly storage: Storage;
  /** The tenant. @default { userId: 'default' } */
  readonly scope?: MemoryScope | undefined;
  /** The tenant's memory store (for the snapshot figures); without it those are left out. */
  readonly memory?: MemoryStore | undefined;
  readonly workspace?: Workspace | undefined;
  /** The model configuration (`app.modelStatus`); only the provider, model id and host are reported. */
  readonly modelStatus?: ModelConfigStatus | undefined;
  /** Whether an embedder is configured (reported as is). */
  readonly embedder?: boolean | undefined;
  /** Features the configuration turned on that started disabled (`app.disabledFeatures`); each is reported. */
  readonly disabledFeatures?: ReadonlyArray<{ readonly feature: string; readonly setting: string; readonly missing: string; readonly message: string }> | undefined;
  /** Bucket every count (`100–999`) and leave out entity names, file names' sizes and the model id, for sharing. */
  readonly anonymous?: boolean | undefined;
  /** Pending role-memory cases closed longer ago than this are reported as overdue. @default 72 h */
  readonly overdueAfterMs?: number | undefined;
  /**
   * Directories whose whole tree must be private to the owner (the data directory, the workspace): every
   * directory 0700, every file 0600. Anything looser is reported (`permissions`). `minara doctor` passes the
   * data directory and the workspace. @default none (no permissions section)
   */
  readonly privatePaths?: readonly string[] | undefined;
  /**
   * Walk the audit log's hash chain (`storage.audit.verify()`, what `minara audit verify` does) and report an
   * edited, deleted, reordered or inserted row as a warning. It reads every chained row, so a very long log makes the
   * report slower; turn it off there and run `minara audit verify` on its own. @default true
   */
  readonly verifyAuditChain?: boolean | undefined;
  /**
   * Verify with the audit key and against the newest signed checkpoint instead of the storage's plain walk
   * (`app.auditIntegrity`, as `minara doctor` passes it): a truncated tail with its head rolled back, a history
   * recomputed without the key, or a tampered checkpoint line is then reported too.
   */
  readonly auditIntegrity?: { verify(): Promise<AuditVerifyReport> } | undefined;
  readonly now?: (() => Date) | undefined;
}

/** Writes a running session does not see: they reach the prompt when a new session freezes its snapshot. */
export interface SnapshotDirtyCounters {
  /** The newest session of the scope (left out when anonymous). */
  readonly sessionId?: string | undefined;
  /** When that session started, which is when its snapshot froze. */
  readonly since: string;
  /** Memory rows written or changed since (soft-deleted and trade-case rows left out; counted up to 1,000). */
  readonly memoryWrites: DoctorCount;
  /** Profile keys set since. */
  readonly profileWrites: DoctorCount;
}

const DIRTY_SCAN_LIMIT = 1000;

/** The dirty counters of a scope: writes after its newest session started. */
async function snapshotDirty(storage: Storage, scope: MemoryScope, c: (n: number) => DoctorCount, anonymous: boolean): Promise<SnapshotDirtyCounters | undefined> {
  const [session] = await storage.conversations.listSessions({ userId: scope.userId, limit: 1 });
  if (!session) return undefined;
  const since = session.createdAt;
  const rows = await storage.memory.list(scope, { limit: DIRTY_SCAN_LIMIT, excludeSources: ['trade_case'] });
  const memoryWrites = rows.filter((r) => r.updatedAt > since).length;
  const profileWrites = (await storage.memory.profileList(scope)).filter((p) => p.updatedAt > since).length;
  return { ...(anonymous ? {} : { sessionId: session.id }), since, memoryWrites: c(memoryWrites), profileWrites: c(profileWrites) };
}

/** What {@link runDoctor} reports. Counts are numbers, or bucket strings when `anonymous`. */
export interface DoctorReport {
  readonly generatedAt: string;
  readonly anonymous: boolean;
  readonly storage: {
    readonly engine: string;
    readonly schemaVersions: Readonly<Record<string, number>>;
    readonly fullText: boolean;
    readonly vector: boolean;
    readonly vectorUnavailableReason?: string | undefined;
    readonly multiProcess: boolean;
  };
  readonly memory: {
    readonly byCategory: ReadonlyArray<{ readonly category: string; readonly active: DoctorCount; readonly pending: DoctorCount; readonly retired: DoctorCount }>;
    readonly softDeleted: DoctorCount;
    readonly embedding: Readonly<Record<EmbeddingState, DoctorCount>>;
    readonly vectors: DoctorCount;
    readonly edges: DoctorCount;
    /** Entities most memories point at (left out when anonymous). */
    readonly topEntities: ReadonlyArray<{ readonly kind: string; readonly key: string; readonly memories: DoctorCount }>;
    /**
     * The frozen snapshot a new session would load: memories and profile keys in it, and its dirty counters
     * (memory.md): writes since the newest session of the scope froze its snapshot (at the session's start).
     */
    readonly snapshot?: {
      readonly memories: DoctorCount;
      readonly profileKeys: DoctorCount;
      readonly chars: DoctorCount;
      /** Absent when the scope has no session yet (nothing is frozen). */
      readonly dirty?: SnapshotDirtyCounters | undefined;
    } | undefined;
  };
  readonly learning: {
    readonly methodologies: Readonly<Record<'proposed' | 'candidate' | 'graduated' | 'quarantined' | 'graduationProposed', DoctorCount>>;
    /** Methodologies that meet the demotion rule but are not quarantined (what the `methodology_demotion` fix would quarantine). */
    readonly demotionDue: DoctorCount;
    readonly preferences: Readonly<Record<'proposed' | 'active' | 'rejected', DoctorCount>>;
    readonly hardConstraints: Readonly<Record<'proposed' | 'active' | 'rejected', DoctorCount>>;
    readonly cases: { readonly pending: DoctorCount; readonly overdue: DoctorCount; readonly reflected: DoctorCount };
    readonly trades: { readonly open: DoctorCount; readonly closed: DoctorCount; readonly settled: DoctorCount };
    readonly mirror: { readonly perpsFills: DoctorCount; readonly externalSpot: DoctorCount };
    /** User turns waiting for the memory extraction pass (`MEMORY_EXTRACTION`), and when the oldest was queued (left out when anonymous). */
    readonly extractionQueue: { readonly waiting: DoctorCount; readonly oldestAt?: string | undefined };
  };
  readonly approvals: { readonly pending: DoctorCount; readonly expired: DoctorCount };
  readonly audit: {
    readonly rows: DoctorCount;
    /** The hash chain walked (absent with `verifyAuditChain: false`): whether it adds up, rows checked, problems found. */
    readonly chain?: { readonly ok: boolean; readonly checked: DoctorCount; readonly problems: DoctorCount; readonly firstProblem?: string | undefined } | undefined;
  };
  readonly workspace?: {
    readonly dir?: string | undefined;
    readonly files: ReadonlyArray<{ readonly name: string; readonly exists: boolean; readonly chars: DoctorCount; readonly overCap: boolean }>;
    readonly totalChars: DoctorCount;
    readonly maxFileChars: number;
    readonly maxTotalChars: number;
  } | undefined;
  readonly model: { readonly configured: boolean; readonly provider?: string | undefined; readonly modelId?: string | undefined; readonly host?: string | undefined; readonly embedder?: boolean | undefined };
  /**
   * Paths under `privatePaths` that group or others can read, write or enter (only when `privatePaths` was
   * given; the list is empty in an anonymous report, the count stays).
   */
  readonly permissions?: { readonly tooOpen: DoctorCount; readonly loose: readonly LoosePath[] } | undefined;
  /** Features turned on but started disabled, and what each is missing (from `disabledFeatures`). */
  readonly disabledFeatures: ReadonlyArray<{ readonly feature: string; readonly setting: string; readonly missing: string }>;
  /** Things worth a look, one sentence each. */
  readonly warnings: readonly string[];
}

/** The fixes, in the order they run. `reflect_pending` (the only one that calls a model) runs only when named. */
export const DOCTOR_FIXES = ['permissions', 'embeddings', 'edges', 'methodology_demotion', 'reflect_pending'] as const;
/** A fix's name. */
export type DoctorFixName = (typeof DOCTOR_FIXES)[number];
/** The fixes `--fix` runs when none are named. */
export const DEFAULT_DOCTOR_FIXES: readonly DoctorFixName[] = ['permissions', 'embeddings', 'edges', 'methodology_demotion'];

/** Options of {@link runDoctorFixes}. */
export interface DoctorFixOptions {
  readonly storage: Storage;
  /** @default { userId: 'default' } */
  readonly scope?: MemoryScope | undefined;
  /** The tenant's memory store: `embeddings` backfills through it (it needs an embedder). */
  readonly memory?: MemoryStore | undefined;
  /** The tenant's learning store: `reflect_pending` reflects through it (it needs a model). */
  readonly learning?: LearningStore | undefined;
  /** Write; without it every fix only counts what it would do and nothing is written. @default false */
  readonly apply?: boolean | undefined;
  /** The fixes to run. @default DEFAULT_DOCTOR_FIXES */
  readonly only?: readonly DoctorFixName[] | undefined;
  /** The demotion rule. @default DEFAULT_METHODOLOGY_POLICY */
  readonly policy?: Partial<MethodologyPolicy> | undefined;
  /** `reflect_pending` reflects cases closed longer ago than this. @default 72 h */
  readonly overdueAfterMs?: number | undefined;
  /** `permissions` tightens every directory to 0700 and file to 0600 under these (see `DoctorOptions.privatePaths`). */
  readonly privatePaths?: readonly string[] | undefined;
  readonly now?: (() => Date) | undefined;
}

/** What one fix found and did. */
export interface DoctorFixResult {
  readonly name: DoctorFixName;
  /** Rows the fix would change (dry run) or tried to change (apply). */
  readonly candidates: number;
  /** Rows changed (0 in a dry run). */
  readonly applied: number;
  /** Why it did not run (no embedder, no model, …). */
  readonly skipped?: string | undefined;
  readonly details?: Readonly<Record<string, number>> | undefined;
}

/** What {@link runDoctorFixes} did. */
export interface DoctorFixReport {
  readonly apply: boolean;
  readonly fixes: readonly DoctorFixResult[];
}

const DAY = 86_400_000;

/** `0`, `1–9`, `10–99`, `100–999`, … */
export function bucketCount(n: number): string {
  if (!Number.isFinite(n) || n <= 0) return '0';
  const lo = 10 ** Math.floor(Math.log10(n));
  return lo === 1 ? '1–9' : `${lo}–${lo * 10 - 1}`;
}

function checkScope(op: string, scope: MemoryScope): MemoryScope {
  if (typeof scope !== 'object' || scope === null || typeof scope.userId !== 'string' || scope.userId === '') throw new MinaraError('CONFIG_INVALID', `${op}: scope.userId must be a non-empty string`);
  if (scope.agentId !== undefined && (typeof scope.agentId !== 'string' || scope.agentId === '')) throw new MinaraError('CONFIG_INVALID', `${op}: scope.agentId must be a non-empty string when given`);
  return scope.agentId === undefined ? { userId: scope.userId } : { userId: scope.userId, agentId: scope.agentId };
}

function checkStorage(op: string, storage: Storage | undefined): Storage {
  if (typeof storage !== 'object' || storage === null || typeof storage.memory?.stats !== 'function' || typeof storage.learning?.stats !== 'function') {
    throw new MinaraError('CONFIG_INVALID', `${op}: storage must be a Storage (createSqliteStorage, createInMemoryStorage, …)`);
  }
  return storage;
}

function overdueMs(op: string, v: number | undefined): number {
  const ms = v ?? 3 * DAY;
  if (!Number.isFinite(ms) || ms < 0) throw new MinaraError('CONFIG_INVALID', `${op}: overdueAfterMs must be a non-negative number of milliseconds, got ${String(v)}`);
  return ms;
}

/** Methodologies meeting the demotion rule that are not quarantined yet. */
async function demotionDue(storage: Storage, scope: MemoryScope, policy: MethodologyPolicy) {
  const out = [];
  for (const state of ['candidate', 'graduated'] as const) {
    for (const m of await storage.learning.listMethodologies(scope, { states: [state], limit: 10_000 })) {
      if (m.uses >= policy.demotionMinUses && wilsonLowerBound(m.wins, m.uses) < policy.demotionMaxConfidence) out.push(m);
    }
  }
  return out;
}

/**
 * A read-only health report of one tenant: storage, memory, learning, approvals, audit, workspace, model.
 * It writes nothing.
 *
 * @example
 * ```ts
 * const report = await runDoctor({ storage: app.storage, memory: app.memory, workspace: app.workspace, modelStatus: app.modelStatus });
 * console.log(formatDoctorReport(report));
 * ```
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const op = 'runDoctor';
  if (typeof options !== 'object' || options === null) throw new MinaraError('CONFIG_INVALID', `${op}: options are required ({ storage })`);
  const storage = checkStorage(op, options.storage);
  const scope = checkScope(op, options.scope ?? { userId: 'default' });
  const now = (options.now ?? (() => new Date()))();
  const anonymous = options.anonymous === true;
  const c = (n: number): DoctorCount => (anonymous ? bucketCount(n) : n);
  const policy = DEFAULT_METHODOLOGY_POLICY;
  // Every option is checked before the first query starts (a bad one must not leave queries running).
  const overdueBefore = new Date(now.getTime() - overdueMs(op, options.overdueAfterMs)).toISOString();

  if (options.verifyAuditChain !== undefined && typeof options.verifyAuditChain !== 'boolean') throw new MinaraError('CONFIG_INVALID', `${op}: verifyAuditChain must be a boolean, got ${JSON.stringify(options.verifyAuditChain)}`);

  const [schemaVersions, mem, learning, due, pending, expired, auditRows, top, chain] = await Promise.all([
    storage.schemaVersions(),
    storage.memory.stats(scope),
    storage.learning.stats(scope, { overdueBefore }),
    demotionDue(storage, scope, policy),
    storage.approvals.list({ status: 'pending', limit: 10_000 }),
    storage.approvals.list({ status: 'expired', limit: 10_000 }),
    storage.audit.count(),
    anonymous ? Promise.resolve([]) : storage.memory.topEntities(scope, { limit: 10 }),
    options.verifyAuditChain === false ? Promise.resolve(undefined) : options.auditIntegrity ? options.auditIntegrity.verify() : storage.audit.verify(),
  ]);
  // A pending approval past its expiry is expired in effect (the gate expires it on the next touch).
  const stale = pending.filter((a) => Date.parse(a.expiresAt) <= now.getTime()).length;
  const warnings: string[] = [];
  const byCategory = categories(mem, c);
  if (mem.embedding.failed > 0) warnings.push(`${c(mem.embedding.failed)} memories failed to embed; "doctor --fix --only embeddings --apply" retries them.`);
  if (learning.cases.overdue > 0) warnings.push(`${c(learning.cases.overdue)} trade cases have waited more than ${Math.round(overdueMs(op, options.overdueAfterMs) / 3_600_000)} h for reflection; enable MINARA_ROLE_REFLECTION or run "minara learning reflect".`);
  if (due.length > 0) warnings.push(`${c(due.length)} methodologies meet the demotion rule but are not quarantined; "doctor --fix --only methodology_demotion --apply" quarantines them.`);
  if (learning.graduationProposed > 0) warnings.push(`${c(learning.graduationProposed)} methodologies are proposed for graduation and wait for the operator ("minara learning").`);
  if (learning.methodologies.proposed > 0) warnings.push(`${c(learning.methodologies.proposed)} methodologies proposed from outcomes wait for the operator's review ("minara learning list proposed", then accept or quarantine).`);
  if (learning.hardConstraints.proposed > 0) warnings.push(`${c(learning.hardConstraints.proposed)} hard constraints are proposed and not in force until approved ("minara preferences").`);
  if (stale > 0) warnings.push(`${c(stale)} pending approvals are past their expiry.`);
  const oldestQueued = learning.extractionQueue.oldestAt;
  if (oldestQueued !== undefined && oldestQueued < overdueBefore) {
    warnings.push(`${c(learning.extractionQueue.waiting)} user turns wait for memory extraction, the oldest for more than ${Math.round(overdueMs(op, options.overdueAfterMs) / 3_600_000)} h: the pass needs a model and MEMORY_EXTRACTION on (after_turn or nightly) in a process that runs background jobs.`);
  }
  if (chain && !chain.ok) warnings.push(`The audit log's hash chain does not verify: ${c(chain.problems.length)} problems${anonymous ? '' : ` (first: ${chain.problems[0]?.message ?? 'unknown'})`}; a row was edited, deleted, reordered or inserted outside the audit writer, the tail was cut back behind a signed checkpoint, or a checkpoint line was tampered with. "minara audit verify" lists them.`);
  let permissions: DoctorReport['permissions'];
  if (options.privatePaths !== undefined) {
    const loose = findLoosePaths(checkPaths(op, options.privatePaths));
    permissions = { tooOpen: c(loose.length), loose: anonymous ? [] : loose };
    if (loose.length > 0) warnings.push(`${c(loose.length)} paths are readable or writable by other local users (directories should be 0700, files 0600); "minara doctor --fix --only permissions --apply" tightens them.`);
  }
  if (!storage.capabilities.vector && options.embedder) warnings.push(`An embedder is configured but the vector index is unavailable (${storage.capabilities.vectorUnavailableReason ?? 'unknown reason'}); search runs on full text only.`);

  let snapshot: DoctorReport['memory']['snapshot'];
  if (options.memory) {
    const s = await options.memory.loadSnapshot();
    const dirty = await snapshotDirty(storage, scope, c, anonymous);
    snapshot = { memories: c(s.memoryIds.length), profileKeys: c(s.profileKeys.length), chars: c(s.text.length), ...(dirty ? { dirty } : {}) };
  }

  let workspace: DoctorReport['workspace'];
  if (options.workspace) {
    const ws = options.workspace;
    const { maxFileChars, maxTotalChars } = ws.settings.prompt;
    const files = [];
    let total = 0;
    for (const name of WORKSPACE_FILE_NAMES) {
      const f = await ws.readFile(name);
      total += f.content.length;
      files.push({ name, exists: f.exists, chars: c(f.content.length), overCap: f.content.length > maxFileChars });
      if (f.content.length > maxFileChars) warnings.push(`${name} has ${c(f.content.length)} characters, over the ${maxFileChars}-character cap: the prompt truncates it.`);
    }
    if (total > maxTotalChars) warnings.push(`The workspace files total ${c(total)} characters, over the ${maxTotalChars}-character cap.`);
    workspace = { ...(anonymous ? {} : { dir: ws.dir }), files, totalChars: c(total), maxFileChars, maxTotalChars };
  }

  const status = options.modelStatus;
  const model: DoctorReport['model'] = status === undefined
    ? { configured: false, ...(options.embedder !== undefined ? { embedder: options.embedder } : {}) }
    : status.configured
      ? {
        configured: true, provider: status.provider, ...(anonymous ? {} : { modelId: status.modelId }),
        ...(status.baseUrl && !anonymous ? { host: hostOf(status.baseUrl) } : {}), ...(options.embedder !== undefined ? { embedder: options.embedder } : {}),
      }
      : { configured: false, ...(options.embedder !== undefined ? { embedder: options.embedder } : {}) };
  if (status !== undefined && !status.configured) warnings.push('No model is configured: turns, reflection and the personalization rebuild cannot run.');
  const disabledFeatures = (options.disabledFeatures ?? []).map(({ feature, setting, missing }) => ({ feature, setting, missing }));

  return {
    generatedAt: now.toISOString(),
    anonymous,
    storage: {
      engine: storage.kind, schemaVersions, fullText: storage.capabilities.fullText, vector: storage.capabilities.vector,
      ...(storage.capabilities.vectorUnavailableReason ? { vectorUnavailableReason: storage.capabilities.vectorUnavailableReason } : {}), multiProcess: storage.capabilities.multiProcess,
    },
    memory: {
      byCategory, softDeleted: c(mem.deleted), embedding: mapCounts(mem.embedding, c), vectors: c(mem.vectors), edges: c(mem.edges),
      topEntities: top.map((e) => ({ kind: e.entityKind, key: e.entityKey, memories: c(e.memoryCount) })),
      ...(snapshot ? { snapshot } : {}),
    },
    learning: learningSection(learning, due.length, c, anonymous),
    approvals: { pending: c(pending.length - stale), expired: c(expired.length + stale) },
    audit: {
      rows: c(auditRows),
      ...(chain ? { chain: { ok: chain.ok, checked: c(chain.checked), problems: c(chain.problems.length), ...(!chain.ok && !anonymous && chain.problems[0] ? { firstProblem: chain.problems[0].message } : {}) } } : {}),
    },
    ...(workspace ? { workspace } : {}),
    model,
    ...(permissions ? { permissions } : {}),
    disabledFeatures,
    warnings,
  };
}

function checkPaths(op: string, paths: readonly string[]): readonly string[] {
  if (!Array.isArray(paths) || paths.some((p) => typeof p !== 'string' || p === '')) throw new MinaraError('CONFIG_INVALID', `${op}: privatePaths must be a list of directory paths`);
  return paths;
}

/** The host of a base URL, without credentials, path or query. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(unparseable)';
  }
}

function mapCounts<K extends string>(o: Readonly<Record<K, number>>, c: (n: number) => DoctorCount): Record<K, DoctorCount> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, c(v as number)])) as Record<K, DoctorCount>;
}

function categories(mem: MemoryStats, c: (n: number) => DoctorCount): DoctorReport['memory']['byCategory'] {
  const out = new Map<string, { active: number; pending: number; retired: number }>();
  for (const r of mem.rows) {
    const row = out.get(r.category) ?? { active: 0, pending: 0, retired: 0 };
    row[r.status] += r.count;
    out.set(r.category, row);
  }
  return [...out.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([category, v]) => ({ category, active: c(v.active), pending: c(v.pending), retired: c(v.retired) }));
}

function learningSection(l: LearningStats, due: number, c: (n: number) => DoctorCount, anonymous: boolean): DoctorReport['learning'] {
  return {
    methodologies: { ...mapCounts(l.methodologies, c), graduationProposed: c(l.graduationProposed) },
    demotionDue: c(due),
    preferences: mapCounts(l.preferences, c),
    hardConstraints: mapCounts(l.hardConstraints, c),
    cases: mapCounts(l.cases, c),
    trades: mapCounts(l.trades, c),
    mirror: { perpsFills: c(l.perpsFills), externalSpot: c(l.externalSpot) },
    extractionQueue: { waiting: c(l.extractionQueue.waiting), ...(l.extractionQueue.oldestAt !== undefined && !anonymous ? { oldestAt: l.extractionQueue.oldestAt } : {}) },
  };
}

/** Stored edges and freshly extracted ones, as comparable keys. */
const edgeKey = (e: MemoryEdgeInput) => `${e.entityKind}\u0000${e.entityKey}\u0000${e.edgeType}\u0000${e.weight}`;

/**
 * Run the maintenance fixes (see the module comment for what they never do). Dry run unless `apply`.
 *
 * - `permissions`: every directory under `privatePaths` more open than 0700 and every file more open than 0600
 *   loses its group and other bits (symbolic links are never followed); skipped without `privatePaths`.
 * - `embeddings`: rows whose embedding is `pending` or `failed` are embedded again (needs the memory store's embedder).
 * - `edges`: the deterministic edge extractor is replayed over every row; rows whose stored edges differ get the
 *   extracted ones (their `updatedAt` is kept).
 * - `methodology_demotion`: methodologies meeting the demotion rule are quarantined (never the reverse).
 * - `reflect_pending` (only when named): the role reflector over cases pending longer than `overdueAfterMs`.
 *
 * @example
 * ```ts
 * const dry = await runDoctorFixes({ storage, memory });            // counts only
 * const done = await runDoctorFixes({ storage, memory, apply: true }); // a second run applies 0
 * ```
 */
export async function runDoctorFixes(options: DoctorFixOptions): Promise<DoctorFixReport> {
  const op = 'runDoctorFixes';
  if (typeof options !== 'object' || options === null) throw new MinaraError('CONFIG_INVALID', `${op}: options are required ({ storage })`);
  const storage = checkStorage(op, options.storage);
  const scope = checkScope(op, options.scope ?? { userId: 'default' });
  const apply = options.apply === true;
  const only = options.only ?? DEFAULT_DOCTOR_FIXES;
  if (!Array.isArray(only) || only.length === 0 || only.some((n) => !(DOCTOR_FIXES as readonly string[]).includes(n))) {
    throw new MinaraError('CONFIG_INVALID', `${op}: only must name one or more of ${DOCTOR_FIXES.join(', ')}, got ${JSON.stringify(only)}`);
  }
  const clock = options.now ?? (() => new Date());
  const policy: MethodologyPolicy = { ...DEFAULT_METHODOLOGY_POLICY, ...options.policy };
  const who = { userId: scope.userId, ...(scope.agentId ? { agentId: scope.agentId } : {}) };
  const audit = async (name: DoctorFixName, result: DoctorFixResult) => {
    if (!apply || result.applied === 0) return;
    await storage.audit.append({
      at: clock().toISOString(), toolName: `doctor.fix.${name}`, tier: 0, source: 'doctor', decision: 'allowed', durationMs: 0,
      argsJson: JSON.stringify({ ...who, candidates: result.candidates, applied: result.applied, ...(result.details ?? {}) }),
    });
  };

  const fixes: DoctorFixResult[] = [];
  for (const name of DOCTOR_FIXES.filter((n) => only.includes(n))) {
    let result: DoctorFixResult;
    switch (name) {
      case 'permissions': {
        if (options.privatePaths === undefined) result = { name, candidates: 0, applied: 0, skipped: 'no privatePaths given (minara doctor passes the data directory and the workspace)' };
        else {
          const loose = findLoosePaths(checkPaths(op, options.privatePaths));
          result = { name, candidates: loose.length, applied: apply ? tightenPaths(loose) : 0 };
        }
        break;
      }
      case 'embeddings': {
        const rows = await storage.memory.listByEmbeddingState(scope, ['pending', 'failed'], 100_000);
        if (!options.memory) result = { name, candidates: rows.length, applied: 0, skipped: 'no memory store given' };
        else if (!apply || rows.length === 0) result = { name, candidates: rows.length, applied: 0 };
        else {
          const queued = await options.memory.backfillEmbeddings({ includeFailed: true, limit: Math.min(rows.length, 100_000) });
          await options.memory.flushEmbeddings();
          const left = await storage.memory.listByEmbeddingState(scope, ['pending', 'failed'], 100_000);
          result = queued === 0
            ? { name, candidates: rows.length, applied: 0, skipped: 'no embedder or no vector index: nothing can be embedded' }
            : { name, candidates: rows.length, applied: rows.length - left.length, details: { stillFailing: left.length } };
        }
        break;
      }
      case 'edges': {
        const rows = await storage.memory.list(scope, { statuses: ['active', 'pending'], limit: 1_000_000, order: 'created_asc' });
        let changed = 0;
        let candidates = 0;
        for (let i = 0; i < rows.length; i += 500) {
          const batch = rows.slice(i, i + 500);
          const stored = await storage.memory.edgesForMemories(scope, batch.map((r) => r.id));
          const byRow = new Map<number, string[]>();
          for (const e of stored) byRow.set(e.memoryId, [...(byRow.get(e.memoryId) ?? []), edgeKey(e)]);
          for (const r of batch) {
            const fresh = extractMemoryEdges(r.content, r.metadata);
            const a = fresh.map(edgeKey).sort().join('\n');
            const b = (byRow.get(r.id) ?? []).sort().join('\n');
            if (a === b) continue;
            candidates++;
            if (apply && (await storage.memory.update(scope, r.id, { edges: fresh, now: r.updatedAt }))) changed++;
          }
        }
        result = { name, candidates, applied: changed };
        break;
      }
      case 'methodology_demotion': {
        const due = await demotionDue(storage, scope, policy);
        let changed = 0;
        if (apply) {
          for (const m of due) {
            const bound = wilsonLowerBound(m.wins, m.uses);
            const next = await storage.learning.transitionMethodology(scope, m.id, {
              from: ['candidate', 'graduated'], to: 'quarantined', now: clock().toISOString(),
              reason: `doctor: Wilson lower bound ${bound.toFixed(3)} < ${policy.demotionMaxConfidence} after ${m.uses} uses`,
            });
            if (next) changed++;
          }
        }
        result = { name, candidates: due.length, applied: changed };
        break;
      }
      case 'reflect_pending': {
        const before = new Date(clock().getTime() - overdueMs(op, options.overdueAfterMs)).toISOString();
        const overdue = (await storage.learning.stats(scope, { overdueBefore: before })).cases.overdue;
        if (!options.learning) result = { name, candidates: overdue, applied: 0, skipped: 'no learning store given' };
        else if (!apply || overdue === 0) result = { name, candidates: overdue, applied: 0 };
        else {
          try {
            const r = await options.learning.reflect({ limit: overdue });
            result = { name, candidates: overdue, applied: r.reflected, details: { lessons: r.lessons, failed: r.failed } };
          } catch (error) {
            if (!(MinaraError.isInstance(error) && error.code === 'MODEL_NOT_CONFIGURED')) throw error;
            result = { name, candidates: overdue, applied: 0, skipped: 'no model is configured' };
          }
        }
        break;
      }
    }
    await audit(name, result);
    fixes.push(result);
  }
  return { apply, fixes };
}

/** The report as text, one section per block (what `minara doctor` prints). */
export function formatDoctorReport(r: DoctorReport): string {
  const kv = (o: Readonly<Record<string, DoctorCount>>) => Object.entries(o).map(([k, v]) => `${k} ${v}`).join(', ');
  const lines = [
    `minara doctor — ${r.generatedAt}${r.anonymous ? ' (anonymous: counts bucketed)' : ''}`,
    '',
    `Storage: ${r.storage.engine}; schema ${kv(r.storage.schemaVersions)}; full text ${r.storage.fullText ? 'yes' : 'no'}; vectors ${r.storage.vector ? 'yes' : `no${r.storage.vectorUnavailableReason ? ` (${r.storage.vectorUnavailableReason})` : ''}`}; multi-process ${r.storage.multiProcess ? 'yes' : 'no'}`,
    '',
    'Memory',
    ...(r.memory.byCategory.length === 0 ? ['  no memories'] : r.memory.byCategory.map((x) => `  ${x.category.padEnd(18)} active ${String(x.active).padStart(7)}  pending ${String(x.pending).padStart(7)}  retired ${String(x.retired).padStart(7)}`)),
    `  soft-deleted ${r.memory.softDeleted}; embeddings: ${kv(r.memory.embedding)}; vectors ${r.memory.vectors}; edges ${r.memory.edges}`,
    ...(r.memory.topEntities.length > 0 ? [`  top entities: ${r.memory.topEntities.map((e) => `${e.key} (${e.memories})`).join(', ')}`] : []),
    ...(r.memory.snapshot ? [`  snapshot: ${r.memory.snapshot.memories} memories, ${r.memory.snapshot.profileKeys} profile keys, ${r.memory.snapshot.chars} characters`] : []),
    ...(r.memory.snapshot?.dirty
      ? [`  snapshot dirty: ${r.memory.snapshot.dirty.memoryWrites} memory writes, ${r.memory.snapshot.dirty.profileWrites} profile changes since ${r.memory.snapshot.dirty.sessionId ? `session ${r.memory.snapshot.dirty.sessionId}` : 'the newest session'} froze its snapshot (${r.memory.snapshot.dirty.since}); a new session loads them`]
      : []),
    '',
    'Learning',
    `  methodologies: ${kv(r.learning.methodologies)}; demotion due ${r.learning.demotionDue}`,
    `  preferences: ${kv(r.learning.preferences)}; hard constraints: ${kv(r.learning.hardConstraints)}`,
    `  trade cases: ${kv(r.learning.cases)}; trades: ${kv(r.learning.trades)}; mirror: ${kv(r.learning.mirror)}`,
    `  memory extraction queue: ${r.learning.extractionQueue.waiting} turns waiting${r.learning.extractionQueue.oldestAt ? ` (oldest queued ${r.learning.extractionQueue.oldestAt})` : ''}`,
    '',
    `Approvals: pending ${r.approvals.pending}, expired ${r.approvals.expired}. Audit log: ${r.audit.rows} rows${r.audit.chain ? (r.audit.chain.ok ? `; hash chain verified (${r.audit.chain.checked} chained rows)` : `; hash chain BROKEN (${r.audit.chain.problems} problems)`) : ''}.`,
  ];
  if (r.workspace) {
    lines.push('', `Workspace${r.workspace.dir ? ` ${r.workspace.dir}` : ''} (caps: ${r.workspace.maxFileChars} per file, ${r.workspace.maxTotalChars} total; total ${r.workspace.totalChars})`);
    for (const f of r.workspace.files) lines.push(`  ${f.name.padEnd(14)} ${f.exists ? `${f.chars} chars${f.overCap ? '  OVER CAP' : ''}` : '(missing)'}`);
  }
  if (r.permissions) {
    const shown = r.permissions.loose.slice(0, 10).map((l) => `  ${l.mode} → ${l.expected}  ${l.path}`);
    lines.push('', r.permissions.tooOpen === 0 || r.permissions.tooOpen === '0' ? 'Permissions: private (directories 0700, files 0600)' : `Permissions: ${r.permissions.tooOpen} too open`, ...shown, ...(r.permissions.loose.length > 10 ? [`  … and ${r.permissions.loose.length - 10} more`] : []));
  }
  lines.push('', `Model: ${r.model.configured ? `${r.model.provider ?? ''}${r.model.modelId ? `:${r.model.modelId}` : ''}${r.model.host ? ` at ${r.model.host}` : ''}` : 'not configured'}${r.model.embedder !== undefined ? `; embedder ${r.model.embedder ? 'yes' : 'no'}` : ''}`);
  if (r.disabledFeatures.length > 0) lines.push('', 'Disabled (turned on, but missing what they need)', ...r.disabledFeatures.map((d) => `  ${d.feature.padEnd(24)} ${d.setting}: needs ${d.missing}`));
  if (r.warnings.length > 0) lines.push('', 'Warnings', ...r.warnings.map((w) => `  ! ${w}`));
  return lines.join('\n');
}

/** The fix report as text. */
export function formatDoctorFixReport(r: DoctorFixReport): string {
  const lines = [r.apply ? 'doctor --fix --apply:' : 'doctor --fix (dry run: nothing written; add --apply):'];
  for (const f of r.fixes) {
    lines.push(`  ${f.name.padEnd(22)} ${f.skipped ? `skipped: ${f.skipped} (${f.candidates} candidates)` : r.apply ? `${f.applied} of ${f.candidates} changed` : `${f.candidates} would change`}${f.details ? `  ${Object.entries(f.details).map(([k, v]) => `${k} ${v}`).join(', ')}` : ''}`);
  }
  return lines.join('\n');
}
