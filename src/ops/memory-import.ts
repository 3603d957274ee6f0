/**
 * `importMemory`: bring a memory export tree back (docs/memory.md, "Export and import").
 *
 * Channel A (signed): `signature.txt` lists the file and its HMAC verifies with the export key (derived from the
 * approval key, outside the database) bound to this instance and the importing scope, and the tree's instance
 * id is this instance's: methodologies keep state and scores, preferences their state (a hard
 * constraint still waits for the user), reflected trade cases come back. Channel B (anything else, per file:
 * one tampered file degrades only itself): methodologies land quarantined, preferences proposed, trade
 * cases are not imported, memories are marked `source: import`. Every body passes the prompt-injection and
 * secret scanner; schema version, paths, enums and sizes are checked; a rejected file is named with its
 * reason and nothing else is affected. Without `apply` nothing is written (no audit row either).
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { MinaraError } from '../errors/minara-error';
import { contentHash } from '../memory/text';
import type { MemoryStore } from '../memory/types';
import { scanInput } from '../safety/input-scanner';
import { METHODOLOGY_STATES, normalizeLearningText, PREFERENCE_STATES } from '../storage/learning-logic';
import type { MethodologyOrigin, RoleOutcomeClass } from '../storage/learning-types';
import type { MemoryScope } from '../storage/memory-types';
import type { Storage } from '../storage/types';
import { APPROVAL_KEY_BYTES } from '../safety/approval-key';
import { classifyPath, deriveExportKey, MEMORY_EXPORT_SCHEMA_VERSION, parseMarkdown, parseSignatures, sameSignature, signFile, type TreeEntry } from './export-format';

/** Options of {@link importMemory}. */
export interface ImportMemoryOptions {
  readonly storage: Storage;
  /** @default { userId: 'default' } */
  readonly scope?: MemoryScope | undefined;
  /** The scope's memory store: memories are written through it (edges, full-text index, embeddings). */
  readonly memory: MemoryStore;
  /** The export directory. */
  readonly from: string;
  /**
   * The approval key (`resolveApprovalKey({ dataDir }).key`): signatures are checked with the export key derived
   * from it. Without it no file is signed for this import (everything lands for review).
   */
  readonly approvalKey?: Uint8Array | undefined;
  /** Write; without it the import only reports what it would do. @default false */
  readonly apply?: boolean | undefined;
  /**
   * Import hard-constraint preferences (as `proposed`: they still need the user's approval to take effect).
   * Rejected otherwise. The CLI sets it only for `--approve-hard-constraints` in an interactive terminal.
   * @default false
   */
  readonly approveHardConstraints?: boolean | undefined;
  /** Largest file read. @default 1048576 */
  readonly maxFileBytes?: number | undefined;
  readonly now?: (() => Date) | undefined;
}

/** What happened to one file. */
export interface ImportFileResult {
  /** Relative path in the tree. */
  readonly path: string;
  readonly kind: string;
  /** `signed` only when the file's signature verified for this instance and this scope. */
  readonly channel: 'signed' | 'unsigned';
  /** `create` (new row), `exists` (a matching row was kept), `reject` (see `reason`), `skip` (derived or informational). */
  readonly action: 'create' | 'exists' | 'reject' | 'skip';
  readonly reason?: string | undefined;
  /** The row id written or matched (methodologies, preferences, cases, memories). */
  readonly id?: number | undefined;
}

/** What {@link importMemory} did (or would do, without `apply`). */
export interface ImportMemoryResult {
  readonly applied: boolean;
  /** Whether the tree carried a signature of this instance for this scope (files can still degrade one by one). */
  readonly signedByThisInstance: boolean;
  readonly files: readonly ImportFileResult[];
  readonly counts: Readonly<Record<ImportFileResult['action'], number>>;
}

const ORIGINS: readonly MethodologyOrigin[] = ['seed', 'lesson', 'synthesis', 'memory_learn', 'api', 'import'];
const CLASSES: readonly RoleOutcomeClass[] = ['logic_error', 'missing_data', 'exogenous', 'variance'];
const HARD_PREFIX = 'hard_constraint.';
const MAX_FILES = 100_000;
const MAX_DEPTH = 4;

class Rejected extends Error {}
const reject = (reason: string): never => {
  throw new Rejected(reason);
};

/** Field readers that reject the file naming the field. */
const f = {
  str(o: Record<string, unknown>, k: string, opts: { optional?: boolean; max?: number } = {}): string | undefined {
    const v = o[k];
    if (v === undefined || v === null) return opts.optional ? undefined : reject(`${k}: required`);
    if (typeof v !== 'string' || v.length === 0 || v.length > (opts.max ?? 4000)) return reject(`${k}: expected a string of 1-${opts.max ?? 4000} characters`);
    return v;
  },
  date(o: Record<string, unknown>, k: string, optional = false): string | undefined {
    const v = o[k];
    if ((v === undefined || v === null) && optional) return undefined;
    if (typeof v !== 'string' || Number.isNaN(Date.parse(v)) || !/^\d{4}-\d\d-\d\dT/u.test(v)) return reject(`${k}: expected an ISO date`);
    return v;
  },
  int(o: Record<string, unknown>, k: string): number {
    const v = o[k];
    return Number.isSafeInteger(v) && (v as number) >= 0 ? (v as number) : reject(`${k}: expected a non-negative integer`);
  },
  num(o: Record<string, unknown>, k: string, optional = false): number | undefined {
    const v = o[k];
    if ((v === undefined || v === null) && optional) return undefined;
    return typeof v === 'number' && Number.isFinite(v) ? v : reject(`${k}: expected a number`);
  },
  oneOf<T extends string>(o: Record<string, unknown>, k: string, allowed: readonly T[], optional = false): T | undefined {
    const v = o[k];
    if ((v === undefined || v === null) && optional) return undefined;
    return (allowed as readonly unknown[]).includes(v) ? (v as T) : reject(`${k}: expected one of ${allowed.join(', ')}, got ${JSON.stringify(v)}`);
  },
};

/** Frontmatter and body, or the file is rejected with the parse error. */
function parseOrReject(bytes: Buffer): { front: Record<string, unknown>; body: string } {
  try {
    return parseMarkdown(bytes.toString('utf8'));
  } catch (error) {
    return reject(error instanceof Error ? error.message : String(error));
  }
}

/** Reject a text the scanner flags (prompt injection or a secret). */
function scan(label: string, text: string | undefined): void {
  if (text === undefined || text === '') return;
  const found = scanInput(text, { maxFindings: 1 })[0];
  if (found) reject(`${label}: ${found.kind === 'secret' ? `contains a secret (${found.pattern})` : `prompt injection (${found.pattern})`}`);
}

/** Every string inside a value (for scanning frontmatter objects). */
function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) strings(x, out);
  return out;
}

interface FileOnDisk {
  readonly rel: string;
  readonly entry: TreeEntry;
  readonly problem?: string | undefined;
  readonly bytes?: Buffer | undefined;
}

/** Walk the tree without following links; oversized files are not read. */
async function walk(root: string, maxFileBytes: number): Promise<FileOnDisk[]> {
  const out: FileOnDisk[] = [];
  async function visit(dir: string, rel: string, depth: number): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (error) {
      out.push({ rel: rel || '.', entry: { kind: 'unknown', reason: 'unreadable' }, problem: `unreadable directory: ${(error as NodeJS.ErrnoException).code ?? String(error)}` });
      return;
    }
    for (const d of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
      if (out.length >= MAX_FILES) return;
      const childRel = rel === '' ? d.name : `${rel}/${d.name}`;
      const full = path.join(dir, d.name);
      const st = await lstat(full);
      if (st.isSymbolicLink()) {
        out.push({ rel: childRel, entry: { kind: 'unknown', reason: 'symlink' }, problem: 'a symbolic link: links are never followed' });
      } else if (st.isDirectory()) {
        if (depth >= MAX_DEPTH) out.push({ rel: childRel, entry: { kind: 'unknown', reason: 'too deep' }, problem: `nested deeper than ${MAX_DEPTH} levels` });
        else await visit(full, childRel, depth + 1);
      } else if (!st.isFile()) {
        out.push({ rel: childRel, entry: { kind: 'unknown', reason: 'not a file' }, problem: 'not a regular file' });
      } else {
        const entry = classifyPath(childRel);
        if (entry.kind === 'unknown') out.push({ rel: childRel, entry, problem: entry.reason });
        else if (st.size > maxFileBytes) out.push({ rel: childRel, entry, problem: `${st.size} bytes, over the ${maxFileBytes}-byte limit` });
        else if (st.size === 0) out.push({ rel: childRel, entry, problem: 'empty file' });
        else out.push({ rel: childRel, entry, bytes: await readFile(full) });
      }
    }
  }
  await visit(root, '', 0);
  return out;
}

/** What one import keeps while it walks the tree: the tenant, the mode, and what earlier files created. */
interface ImportRun {
  storage: Storage;
  memory: MemoryStore;
  L: Storage['learning'];
  scope: MemoryScope;
  apply: boolean;
  now: () => string;
  approveHardConstraints: boolean;
  /** The signature file's content, when the tree has one. */
  sigs: ReturnType<typeof parseSignatures> | undefined;
  /** Whether the tree is this instance's (its verified index names this instance). */
  treeIsOurs: boolean;
  /** Methodology id in the tree → its id here (trade cases point at them). */
  methodologyIds: Map<number, number>;
  /** Memory contents present per category, read once per category. */
  existingMemories: Map<string, Set<string>>;
}

type Base = Pick<ImportFileResult, 'path' | 'kind' | 'channel'>;
type Channel = ImportFileResult['channel'];
type EntryOf<K extends TreeEntry['kind']> = Extract<TreeEntry, { kind: K }>;

/** The options checked, the root a directory; throws a clear error otherwise. */
async function checkOptions(options: ImportMemoryOptions): Promise<{ root: string; maxFileBytes: number; scope: MemoryScope }> {
  const op = 'importMemory';
  if (typeof options !== 'object' || options === null || typeof options.storage?.learning?.upsertMethodology !== 'function') throw new MinaraError('CONFIG_INVALID', `${op}: storage is required`);
  if (typeof options.memory?.write !== 'function') throw new MinaraError('CONFIG_INVALID', `${op}: memory (the scope's MemoryStore) is required`);
  if (typeof options.from !== 'string' || options.from.trim() === '') throw new MinaraError('CONFIG_INVALID', `${op}: from must be the export directory`);
  if (options.approvalKey !== undefined && !(options.approvalKey instanceof Uint8Array && options.approvalKey.length >= APPROVAL_KEY_BYTES)) {
    throw new MinaraError('CONFIG_INVALID', `${op}: approvalKey must be the approval key, a Uint8Array of at least ${APPROVAL_KEY_BYTES} bytes (resolveApprovalKey({ dataDir }).key)`);
  }
  const maxFileBytes = options.maxFileBytes ?? 1_048_576;
  if (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1024) throw new MinaraError('CONFIG_INVALID', `${op}: maxFileBytes must be an integer of at least 1024, got ${String(options.maxFileBytes)}`);
  const root = path.resolve(options.from);
  const rootStat = await lstat(root).catch(() => undefined);
  if (!rootStat?.isDirectory()) throw new MinaraError('CONFIG_INVALID', `${op}: ${root} is not a directory${rootStat?.isSymbolicLink() ? ' (a symbolic link: give the real path)' : ''}`);
  const { memory } = options;
  const scope = options.scope ?? memory.scope;
  if (scope.userId !== memory.scope.userId || (scope.agentId ?? undefined) !== (memory.scope.agentId ?? undefined)) throw new MinaraError('CONFIG_INVALID', `${op}: memory belongs to another scope than scope`);
  return { root, maxFileBytes, scope };
}

/**
 * The tree's trust: its signatures, whether it is this instance's, and each file's channel. Signatures verify
 * against this instance and the scope importing, never against what the tree claims.
 */
function trustOf(files: readonly FileOnDisk[], approvalKey: Uint8Array | undefined, instanceId: string, scope: MemoryScope) {
  const sigFile = files.find((x) => x.entry.kind === 'signature' && x.bytes);
  const sigs = sigFile?.bytes ? parseSignatures(sigFile.bytes.toString('utf8')) : undefined;
  const exportKey = approvalKey === undefined ? undefined : deriveExportKey(approvalKey);
  const binding = { instanceId, userId: scope.userId, ...(scope.agentId ? { agentId: scope.agentId } : {}) };
  const verified = (x: FileOnDisk) =>
    exportKey !== undefined && sigs !== undefined && sigs.instanceId === instanceId && x.bytes !== undefined && sigs.byPath.has(x.rel)
    && sameSignature(sigs.byPath.get(x.rel)!, signFile(exportKey, binding, x.rel, x.bytes));
  // The tree is this instance's only when its (verified) index names this instance.
  const indexFile = files.find((x) => x.entry.kind === 'index' && x.bytes);
  let treeIsOurs = false;
  if (indexFile && verified(indexFile)) {
    try {
      const { front } = parseMarkdown(indexFile.bytes!.toString('utf8'));
      treeIsOurs = front.instance_id === instanceId && front.schema_version === MEMORY_EXPORT_SCHEMA_VERSION;
    } catch {
      treeIsOurs = false;
    }
  }
  const channelOf = (x: FileOnDisk): Channel => (treeIsOurs && verified(x) ? 'signed' : 'unsigned');
  return { sigs, treeIsOurs, channelOf };
}

/** Record an applied file's outcome in the audit log (a dry run and skips record nothing). */
async function auditResult(x: ImportRun, r: ImportFileResult): Promise<void> {
  if (!x.apply || r.action === 'skip') return;
  const { scope } = x;
  await x.storage.audit.append({
    at: x.now(), toolName: `memory_import.${r.channel}`, tier: 0, source: 'memory_import', decision: r.action === 'reject' ? 'blocked' : 'allowed',
    ...(r.action === 'reject' ? { code: 'MEMORY_IMPORT_REJECTED', reason: r.reason } : {}), durationMs: 0,
    argsJson: JSON.stringify({ userId: scope.userId, ...(scope.agentId ? { agentId: scope.agentId } : {}), path: r.path, kind: r.kind, action: r.action, ...(r.id !== undefined ? { id: r.id } : {}) }),
  });
}

/** The memory contents present in `category` (read once per import). */
async function memoriesOf(x: ImportRun, category: string): Promise<Set<string>> {
  let set = x.existingMemories.get(category);
  if (!set) {
    set = new Set((await x.storage.memory.list(x.scope, { categories: [category], statuses: ['active', 'pending'], limit: 1_000_000 })).map((m) => m.content));
    x.existingMemories.set(category, set);
  }
  return set;
}

async function importMethodology(x: ImportRun, file: FileOnDisk, e: EntryOf<'methodology'>, front: Record<string, unknown>, body: string, base: Base, channel: Channel): Promise<ImportFileResult> {
  const { L, scope, apply, now, methodologyIds } = x;
  if (front.id !== e.id) reject(`id: expected ${e.id} (the file name), got ${JSON.stringify(front.id)}`);
  if (front.asset_class !== e.assetClass) reject(`asset_class: expected ${e.assetClass} (the directory), got ${JSON.stringify(front.asset_class)}`);
  const text = body.trim();
  if (text === '' || text.length > 4000) reject('body: expected the methodology text (1-4000 characters)');
  const state = f.oneOf(front, 'state', METHODOLOGY_STATES)!;
  const uses = f.int(front, 'uses');
  const wins = f.int(front, 'wins');
  if (wins > uses) reject('wins: more than uses');
  const confidence = f.num(front, 'confidence')!;
  if (confidence < 0 || confidence > 1) reject('confidence: expected a number from 0 to 1');
  const origin = f.oneOf(front, 'origin', ORIGINS)!;
  const sourceRef = f.str(front, 'source_ref', { optional: true, max: 500 });
  const createdAt = f.date(front, 'created_at')!;
  const restore = {
    id: e.id, state, uses, wins, confidence, createdAt,
    graduationProposedAt: f.date(front, 'graduation_proposed_at', true), graduatedAt: f.date(front, 'graduated_at', true),
    quarantinedAt: f.date(front, 'quarantined_at', true), stateReason: f.str(front, 'state_reason', { optional: true, max: 2000 }),
  };
  const normalizedText = normalizeLearningText(text);
  const known = (await L.listMethodologies(scope, { assetClasses: [e.assetClass], limit: 100_000 })).find((m) => m.normalizedText === normalizedText);
  if (known) {
    methodologyIds.set(e.id, known.id);
    return { ...base, action: 'exists', id: known.id };
  }
  if (!apply) return { ...base, action: 'create', reason: channel === 'signed' ? `restored as ${state}` : 'lands quarantined for review' };
  const signed = channel === 'signed';
  const r = await L.upsertMethodology(scope, {
    assetClass: e.assetClass, text, normalizedText, origin: signed ? origin : 'import', ...(signed ? (sourceRef !== undefined ? { sourceRef } : {}) : { sourceRef: `import:${file.rel}` }),
    now: now(), ...(signed ? { restore } : {}),
  });
  let id = r.methodology.id;
  if (!signed && r.created) {
    const q = await L.transitionMethodology(scope, id, { from: ['candidate'], to: 'quarantined', now: now(), reason: 'imported without a signature of this instance: review it, then reinstate' });
    id = q?.id ?? id;
  }
  methodologyIds.set(e.id, id);
  return { ...base, action: r.created ? 'create' : 'exists', id };
}

async function importPreference(x: ImportRun, e: EntryOf<'preference'>, front: Record<string, unknown>, body: string, base: Base, channel: Channel): Promise<ImportFileResult> {
  const { L, scope, apply, now, memory } = x;
  const options = { approveHardConstraints: x.approveHardConstraints };
  if (front.dimension !== e.dimension) reject(`dimension: expected ${e.dimension} (the directory), got ${JSON.stringify(front.dimension)}`);
  const text = body.trim();
  if (text === '' || text.length > 2000) reject('body: expected the preference text (1-2000 characters)');
  const prefKind = f.oneOf(front, 'preference_kind', ['behavioural', 'hard_constraint'] as const)!;
  const state = f.oneOf(front, 'state', PREFERENCE_STATES)!;
  const value = f.str(front, 'value', { optional: true, max: 2000 });
  const evidence = f.int(front, 'evidence');
  const contradictions = f.int(front, 'contradictions');
  const lastEvidenceAt = f.date(front, 'last_evidence_at')!;
  const createdAt = f.date(front, 'created_at')!;
  const activatedAt = f.date(front, 'activated_at', true);
  const source = f.oneOf(front, 'source', ['mined', 'memory_learn', 'api', 'import'] as const)!;
  const decidedAt = f.date(front, 'decided_at', true);
  if (prefKind === 'hard_constraint' && options.approveHardConstraints !== true) {
    reject('a hard constraint: imported only with approveHardConstraints (the CLI: --approve-hard-constraints in an interactive terminal), and even then only as proposed');
  }
  const normalizedText = normalizeLearningText(text);
  const known = (await L.listPreferences(scope, { dimension: e.dimension, limit: 100_000 })).find((p) => p.kind === prefKind && p.normalizedText === normalizedText);
  if (known) return { ...base, action: 'exists', id: known.id };
  // A hard constraint never arrives active; an unsigned preference arrives proposed.
  const keep = channel === 'signed' && prefKind === 'behavioural';
  if (!apply) return { ...base, action: 'create', reason: keep ? `restored as ${state}` : 'lands proposed' };
  let memoryId: number | undefined;
  if (keep && state === 'active') memoryId = (await memory.write({ category: 'preference', content: text, source: 'learned_preference', metadata: { dimension: e.dimension, kind: prefKind } })).id;
  const r = await L.upsertPreference(scope, {
    dimension: e.dimension, kind: prefKind, text, normalizedText, source: keep ? source : 'import', ...(value !== undefined ? { value } : {}), now: now(),
    ...(keep ? { restore: { id: e.id, state, evidence, contradictions, lastEvidenceAt, createdAt, ...(activatedAt ? { activatedAt } : {}), ...(decidedAt ? { decidedAt } : {}), ...(memoryId !== undefined ? { memoryId } : {}) } } : {}),
  });
  // Another import restored it first (two at once): the memory this one wrote for it goes again.
  if (!r.created && memoryId !== undefined) await memory.hardDelete(memoryId);
  return { ...base, action: r.created ? 'create' : 'exists', id: r.preference.id };
}

async function importTradeCase(x: ImportRun, e: EntryOf<'trade_case'>, front: Record<string, unknown>, body: string, base: Base, channel: Channel): Promise<ImportFileResult> {
  const { L, scope, apply, now, methodologyIds, sigs } = x;
  if (front.id !== e.id) reject(`id: expected ${e.id} (the file name), got ${JSON.stringify(front.id)}`);
  const input = {
    id: e.id, orderId: `import:${sigs?.instanceId ?? 'unsigned'}:${e.id}`, role: f.str(front, 'role', { max: 256 })!, asset: f.str(front, 'asset', { max: 64 })!,
    assetClass: f.str(front, 'asset_class', { optional: true, max: 64 }), kind: f.oneOf(front, 'trade_kind', ['spot', 'perp', 'transfer'] as const)!,
    direction: f.oneOf(front, 'direction', ['long', 'short'] as const, true), side: f.str(front, 'side', { max: 32 })!, quantity: f.num(front, 'quantity')!,
    entryPrice: f.num(front, 'entry_price')!, exitPrice: f.num(front, 'exit_price', true), notionalUsd: f.num(front, 'notional_usd')!,
    summary: body.trim() || reject('body: expected the case summary'), outcome: f.oneOf(front, 'outcome', ['win', 'loss'] as const)!,
    realizedPnlUsd: f.num(front, 'realized_pnl_usd')!, holdingMs: f.int(front, 'holding_ms'), openedAt: f.date(front, 'opened_at')!, closedAt: f.date(front, 'closed_at')!,
    reflectedAt: f.date(front, 'reflected_at', true), classification: f.oneOf(front, 'classification', CLASSES, true),
    simulated: typeof front.simulated === 'boolean' ? front.simulated : reject('simulated: expected true or false'),
    methodologyIds: Array.isArray(front.methodology_ids) && front.methodology_ids.every((x) => Number.isSafeInteger(x) && (x as number) > 0) ? (front.methodology_ids as number[]) : reject('methodology_ids: expected a list of positive integers'),
    reflection: front.reflection === undefined || front.reflection === null ? undefined
      : typeof front.reflection === 'string' ? front.reflection
        : typeof front.reflection === 'object' && !Array.isArray(front.reflection) ? JSON.stringify(front.reflection) : reject('reflection: expected text or a mapping'),
    now: now(),
  };
  if (channel !== 'signed') return { ...base, action: 'reject', reason: 'unsigned trade cases are not imported: a case is evidence, and evidence comes only from a signed export of this instance' };
  if (!apply) return { ...base, action: 'create' };
  const ids = input.methodologyIds.map((id) => methodologyIds.get(id)).filter((id): id is number => id !== undefined);
  const r = await L.importTradeCase(scope, { ...input, methodologyIds: ids });
  return { ...base, action: r.created ? 'create' : 'exists', id: r.case.id };
}

async function importMemoryRow(x: ImportRun, e: EntryOf<'memory'>, front: Record<string, unknown>, body: string, base: Base, channel: Channel): Promise<ImportFileResult> {
  const { storage, scope, apply, memory } = x;
  if (front.category !== e.category) reject(`category: expected ${e.category} (the directory), got ${JSON.stringify(front.category)}`);
  const content = body;
  if (content.trim() === '') reject('body: expected the memory content');
  f.oneOf(front, 'status', ['active', 'pending'] as const);
  const source = f.str(front, 'source', { optional: true, max: 64 });
  const metadata = front.metadata;
  if (metadata !== undefined && (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata))) reject('metadata: expected a mapping');
  if (source === 'learned_preference') reject('source: learned_preference rows come back with their preference, not as memories');
  const existing = await memoriesOf(x, e.category);
  if (existing.has(content)) return { ...base, action: 'exists' };
  if (!apply) return { ...base, action: 'create' };
  const signed = channel === 'signed';
  const { id } = await memory.write({
    category: e.category, content, ...(signed ? (source !== undefined ? { source } : {}) : { source: 'import' }),
    ...(metadata !== undefined ? { metadata: metadata as Record<string, unknown> } : {}),
  });
  existing.add(content);
  // Two imports of one tree at once (two processes) may both have found the memory missing: the identical row
  // with the lowest id stays, and each import removes its own row when an older twin exists. Every interleaving
  // ends with exactly one row.
  const twins = await storage.memory.list(scope, { categories: [e.category], contentHash: contentHash(content), statuses: ['active', 'pending'], limit: 100, order: 'created_asc' });
  if (twins.some((t) => t.id < id && t.content === content)) {
    await memory.hardDelete(id);
    return { ...base, action: 'exists' };
  }
  return { ...base, action: 'create', id };
}

async function importProfile(x: ImportRun, front: Record<string, unknown>, base: Base, channel: Channel): Promise<ImportFileResult> {
  const { apply, memory } = x;
  const entries = front.entries;
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) return reject('entries: expected a mapping of key to value');
  const pairs = Object.entries(entries as Record<string, unknown>);
  for (const [k, v] of pairs) {
    if (!/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/u.test(k)) reject(`entries.${k.slice(0, 64)}: not a profile key`);
    if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') reject(`entries.${k}: expected a text value`);
  }
  const hard = pairs.filter(([k]) => k.startsWith(HARD_PREFIX));
  const rest = pairs.filter(([k]) => !k.startsWith(HARD_PREFIX));
  const current = new Map((await memory.profile.list()).map((x) => [x.key, x.value]));
  // Signed: the file's values win; unsigned: only keys this profile lacks.
  const changes = rest.filter(([k, v]) => (channel === 'signed' ? current.get(k) !== String(v) : !current.has(k)));
  if (apply) for (const [k, v] of changes) await memory.profile.set(k, String(v));
  const note = hard.length > 0 ? `; ${hard.length} hard_constraint.* entries not imported (hard constraints come back only through an approved preference)` : '';
  return { ...base, action: changes.length > 0 ? 'create' : 'exists', reason: `${changes.length} of ${pairs.length} entries ${apply ? 'set' : 'would be set'}${note}` };
}

/** One parsed file of a known kind: check its fields, then create (or count) its row. */
async function importFile(x: ImportRun, file: FileOnDisk, front: Record<string, unknown>, body: string, base: Base, channel: Channel): Promise<ImportFileResult> {
  const e = file.entry;
  if (e.kind === 'methodology') return importMethodology(x, file, e, front, body, base, channel);
  if (e.kind === 'preference') return importPreference(x, e, front, body, base, channel);
  if (e.kind === 'trade_case') return importTradeCase(x, e, front, body, base, channel);
  if (e.kind === 'memory') return importMemoryRow(x, e, front, body, base, channel);
  if (e.kind === 'profile') return importProfile(x, front, base, channel);
  return reject('not importable');
}

/** One file of the tree: skipped, rejected (with the reason), or imported (not yet audited). */
async function importOne(x: ImportRun, file: FileOnDisk, channel: Channel): Promise<ImportFileResult> {
  const kind = file.entry.kind;
  const base = { path: file.rel, kind, channel };
  const treeIsOurs = x.treeIsOurs;
  try {
    if (file.problem !== undefined) reject(file.problem);
    if (kind === 'signature' || kind === 'readme') return { ...base, action: 'skip', reason: 'informational' };
    if (kind === 'asset') return { ...base, action: 'skip', reason: 'derived: compiled pages are rebuilt from what is imported' };
    const { front, body } = parseOrReject(file.bytes!);
    if (front.schema_version !== MEMORY_EXPORT_SCHEMA_VERSION) reject(`schema_version: expected ${MEMORY_EXPORT_SCHEMA_VERSION}, got ${JSON.stringify(front.schema_version)} (written by another version of the format)`);
    const expectedKind = kind === 'trade_case' ? 'trade_case' : kind;
    if (front.kind !== expectedKind) reject(`kind: expected ${expectedKind} for this path, got ${JSON.stringify(front.kind)}`);
    scan('frontmatter', strings(front).join('\n'));
    scan('body', body);
    if (kind === 'index') return { ...base, action: 'skip', reason: treeIsOurs ? 'signed by this instance for this user' : 'not signed by this instance for this user: every file is unsigned' };
    return await importFile(x, file, front, body, base, channel);
  } catch (error) {
    if (!(error instanceof Rejected)) throw error;
    return { ...base, action: 'reject', reason: error.message };
  }
}

// Methodologies first (trade cases point at them), then preferences, cases, memories, the profile.
const ORDER: Record<TreeEntry['kind'], number> = { index: 0, signature: 0, readme: 0, asset: 0, methodology: 1, preference: 2, trade_case: 3, memory: 4, profile: 5, unknown: 6 };

/**
 * Import a memory export tree into one tenant (see the module comment for the channels and checks).
 *
 * @example
 * ```ts
 * const dry = await importMemory({ storage, memory, from: './export' });          // report only
 * const done = await importMemory({ storage, memory, from: './export', apply: true, approvalKey: resolveApprovalKey({ dataDir }).key });
 * for (const f of done.files) if (f.action === 'reject') console.log(f.path, f.reason);
 * ```
 */
export async function importMemory(options: ImportMemoryOptions): Promise<ImportMemoryResult> {
  const { root, maxFileBytes, scope } = await checkOptions(options);
  const { storage, memory } = options;
  const apply = options.apply === true;
  const clock = options.now ?? (() => new Date());
  const instance = await storage.meta.getInstance();
  const files = await walk(root, maxFileBytes);
  const { sigs, treeIsOurs, channelOf } = trustOf(files, options.approvalKey, instance.instanceId, scope);
  const x: ImportRun = {
    storage, memory, L: storage.learning, scope, apply, now: () => clock().toISOString(), approveHardConstraints: options.approveHardConstraints === true,
    sigs, treeIsOurs, methodologyIds: new Map(), existingMemories: new Map(),
  };
  const sorted = [...files].sort((a, b) => ORDER[a.entry.kind] - ORDER[b.entry.kind] || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  const results: ImportFileResult[] = [];
  for (const file of sorted) {
    const result = await importOne(x, file, channelOf(file));
    await auditResult(x, result); // records nothing for a skip
    results.push(result);
  }
  const counts = { create: 0, exists: 0, reject: 0, skip: 0 };
  for (const r of results) counts[r.action]++;
  return { applied: apply, signedByThisInstance: treeIsOurs, files: results, counts };
}

/** The import report as text (what `minara memory import` prints). */
export function formatImportReport(r: ImportMemoryResult): string {
  const lines = [
    `${r.applied ? 'Imported' : 'Dry run (nothing written; add --apply)'}: ${r.counts.create} new, ${r.counts.exists} already present, ${r.counts.reject} rejected, ${r.counts.skip} skipped. ${r.signedByThisInstance ? 'Signed by this instance for this user.' : 'Not signed by this instance for this user: methodologies land quarantined, preferences proposed.'}`,
  ];
  for (const x of r.files) {
    if (x.action === 'skip') continue;
    lines.push(`  ${x.action.padEnd(7)} ${x.channel.padEnd(9)} ${x.path}${x.reason ? `  (${x.reason})` : ''}`);
  }
  return lines.join('\n');
}

