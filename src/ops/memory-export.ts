/**
 * `exportMemory`: one tenant's learned memory as a markdown tree a person can read, review and edit
 * (docs/memory.md, "Export and import"). Hard constraints stay out unless asked for; with `sign`, every file
 * gets an HMAC-SHA256 with a key derived from the approval key (which lives outside the database), bound to
 * the instance and the scope; only the instance id and the scope are written, never a key.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MinaraError } from '../errors/minara-error';
import { assetClassOf, normalizeAsset } from '../learning/assets';
import { compilePage } from '../learning/compiled-pages';
import type { MethodologyRecord, PreferenceRecord, RoleCaseRecord, TradeRecord } from '../storage/learning-types';
import type { MemoryRecord, MemoryScope } from '../storage/memory-types';
import type { Storage } from '../storage/types';
import { APPROVAL_KEY_BYTES } from '../safety/approval-key';
import { deriveExportKey, MEMORY_EXPORT_SCHEMA_VERSION, renderMarkdown, renderSignatures, signFile, VOLATILE_FIELDS } from './export-format';

/** Options of {@link exportMemory}. */
export interface ExportMemoryOptions {
  readonly storage: Storage;
  /** @default { userId: 'default' } */
  readonly scope?: MemoryScope | undefined;
  /** The directory to write; it must not exist or be empty. */
  readonly out: string;
  /**
   * Sign every file (`signature.txt`) with a key derived from `approvalKey`, bound to this instance and `scope`.
   * @default false
   */
  readonly sign?: boolean | undefined;
  /**
   * The approval key (`resolveApprovalKey({ dataDir }).key`, kept outside the database); required with `sign`.
   * The export key is derived from it with its own HKDF label, so a person who can read the database file
   * cannot re-sign a tampered export, and an export signed for one user or instance does not verify for another.
   */
  readonly approvalKey?: Uint8Array | undefined;
  /** Include hard-constraint preferences, `hard_constraint.*` profile entries and constraints on asset pages. @default false */
  readonly includeConstraints?: boolean | undefined;
  /**
   * Directories the export must not be written into (the agent's sandbox: a prompt-injected memory must not
   * be able to read the export back through a file tool). `minara memory export` passes `<dataDir>/sandbox`.
   */
  readonly forbiddenRoots?: readonly string[] | undefined;
  readonly now?: (() => Date) | undefined;
}

/** What {@link exportMemory} wrote. */
export interface ExportMemoryResult {
  readonly dir: string;
  /** Relative paths written, sorted. */
  readonly files: readonly string[];
  readonly signed: boolean;
  readonly instanceId: string;
  readonly counts: { readonly methodologies: number; readonly preferences: number; readonly tradeCases: number; readonly assets: number; readonly memories: number; readonly profileKeys: number };
}

const HARD_PREFIX = 'hard_constraint.';
/** Rows read per table: an export is the whole scope. */
const ALL = 1_000_000;

function within(child: string, root: string): boolean {
  const rel = path.relative(path.resolve(root), path.resolve(child));
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Parse a stored reflection: the reflector's JSON object, else the text as is. */
function reflectionValue(raw: string | undefined): unknown {
  if (raw === undefined) return undefined;
  try {
    const v = JSON.parse(raw) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? v : raw;
  } catch {
    return raw;
  }
}

/** A memory's file name: the first 16 hex of sha256 of category and content (stable across stores). */
export function memoryFileName(category: string, content: string): string {
  return createHash('sha256').update(category).update('\0').update(content).digest('hex').slice(0, 16);
}

/**
 * Export one tenant's methodologies, preferences, reflected trade cases, compiled asset pages, memories and
 * profile as a markdown tree under `out`.
 *
 * @example
 * ```ts
 * const { key } = resolveApprovalKey({ dataDir });
 * const r = await exportMemory({ storage: app.storage, out: path.join(dataDir, 'exports', stamp), sign: true, approvalKey: key });
 * // r.files: ['assets/BTC.md', 'index.md', 'memories/preference/1f2e….md', 'methodologies/crypto_major/1.md', …, 'signature.txt']
 * ```
 */
export async function exportMemory(options: ExportMemoryOptions): Promise<ExportMemoryResult> {
  const op = 'exportMemory';
  if (typeof options !== 'object' || options === null || typeof options.storage?.learning?.listMethodologies !== 'function') throw new MinaraError('CONFIG_INVALID', `${op}: storage is required`);
  if (typeof options.out !== 'string' || options.out.trim() === '' || options.out.includes('\0')) throw new MinaraError('CONFIG_INVALID', `${op}: out must be a directory path`);
  const scope = options.scope ?? { userId: 'default' };
  if (typeof scope.userId !== 'string' || scope.userId === '') throw new MinaraError('CONFIG_INVALID', `${op}: scope.userId must be a non-empty string`);
  if (options.sign === true && !(options.approvalKey instanceof Uint8Array && options.approvalKey.length >= APPROVAL_KEY_BYTES)) {
    throw new MinaraError('CONFIG_INVALID', `${op}: sign needs approvalKey, the approval key kept outside the database (a Uint8Array of at least ${APPROVAL_KEY_BYTES} bytes: resolveApprovalKey({ dataDir }).key)`);
  }
  const out = path.resolve(options.out);
  for (const root of options.forbiddenRoots ?? []) {
    if (within(out, root)) throw new MinaraError('CONFIG_INVALID', `${op}: out (${out}) is inside ${path.resolve(root)}, which the agent's file tools can read; export somewhere else`);
  }
  const existing = await readdir(out).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' ? [] : Promise.reject(e)));
  if (existing.length > 0) throw new MinaraError('CONFIG_INVALID', `${op}: out (${out}) is not empty; choose a new directory`);
  const { storage } = options;
  const includeConstraints = options.includeConstraints === true;
  const now = (options.now ?? (() => new Date()))();
  const instance = await storage.meta.getInstance();
  const L = storage.learning;

  const files = new Map<string, string>();
  // Methodologies: every state (a quarantined one says why).
  const methodologies = (await L.listMethodologies(scope, { limit: ALL })).sort((a, b) => a.id - b.id);
  for (const m of methodologies) files.set(`methodologies/${m.assetClass}/${m.id}.md`, methodologyFile(m));
  // Preferences: active ones; hard constraints only when asked.
  const preferences = (await L.listPreferences(scope, { states: ['active'], limit: ALL }))
    .filter((p) => includeConstraints || p.kind !== 'hard_constraint').sort((a, b) => a.id - b.id);
  for (const p of preferences) files.set(`preferences/${p.dimension}/${p.id}.md`, preferenceFile(p));
  files.set('preferences/README.md', includeConstraints
    ? '# Preferences\n\nThis export includes hard constraints (user-specific risk caps). Share it only with the user it belongs to.\nImported hard constraints never take effect until the user approves them (`/preferences`).\n'
    : '# Preferences\n\nHard constraints (user-specific risk caps) are excluded from this export; pass --include-constraints to include them.\nImported hard constraints never take effect until the user approves them (`/preferences`).\n');
  // Reflected trade cases with the facts of their opening trade.
  const cases = (await L.listCases(scope, { status: 'reflected', limit: ALL })).sort((a, b) => a.id - b.id);
  for (const c of cases) files.set(`trade-cases/${c.id}.md`, tradeCaseFile(c, await L.getTrade(scope, c.tradeId)));
  // Compiled pages of the assets the cases are about (no trade list: the export carries no trade history).
  const assets = [...new Set(cases.map((c) => normalizeAsset(c.asset)))].filter((a) => /^[A-Z0-9]{1,20}$/u.test(a) && assetClassOf(a) !== undefined).sort();
  for (const a of assets) {
    const page = await compilePage(L, scope, a, { includeHardConstraints: includeConstraints, includeTrades: false, timelineLimit: 10 });
    files.set(`assets/${a}.md`, renderMarkdown({ schema_version: MEMORY_EXPORT_SCHEMA_VERSION, kind: 'asset_page', asset: a, derived: true }, page));
  }
  // Memories (not the learned_preference rows an active preference writes: the preference carries them) and the profile.
  const memories = (await storage.memory.list(scope, { statuses: ['active', 'pending'], limit: ALL, order: 'created_asc' })).filter((m) => m.source !== 'learned_preference' && m.source !== 'trade_case'); // derived rows: rebuilt from their records
  let memoryCount = 0;
  for (const m of memories) {
    const p = `memories/${m.category}/${memoryFileName(m.category, m.content)}.md`;
    if (files.has(p)) continue;
    files.set(p, memoryFile(m));
    memoryCount++;
  }
  const profile = (await storage.memory.profileList(scope)).filter((e) => includeConstraints || !e.key.startsWith(HARD_PREFIX)).sort((a, b) => (a.key < b.key ? -1 : 1));
  files.set('profile.md', renderMarkdown(
    { schema_version: MEMORY_EXPORT_SCHEMA_VERSION, kind: 'profile', entries: Object.fromEntries(profile.map((e) => [e.key, e.value])) },
    ['# Profile', '', ...(profile.length === 0 ? ['(empty)'] : profile.map((e) => `- **${e.key}**: ${e.value}`))].join('\n'),
  ));
  const counts = { methodologies: methodologies.length, preferences: preferences.length, tradeCases: cases.length, assets: assets.length, memories: memoryCount, profileKeys: profile.length };
  files.set('index.md', renderMarkdown(
    {
      schema_version: MEMORY_EXPORT_SCHEMA_VERSION, kind: 'index', format: 'minara-memory-export', instance_id: instance.instanceId, exported_at: now.toISOString(),
      scope: { user_id: scope.userId, ...(scope.agentId ? { agent_id: scope.agentId } : {}) }, include_constraints: includeConstraints, signed: options.sign === true, counts,
    },
    [
      '# Memory export', '',
      'What this agent learned, as files a person can read and edit. `minara memory import` brings a tree back: a tree signed by this',
      'instance for this user keeps states and scores (channel A); anything else lands for review (methodologies quarantined, preferences proposed).',
      `Fields that record when this copy was made change on every export: ${VOLATILE_FIELDS.join(', ')}.`, '',
      '## Contents', '',
      `- methodologies/<asset_class>/<id>.md: ${counts.methodologies}`,
      `- preferences/<dimension>/<id>.md: ${counts.preferences} active${includeConstraints ? ' (hard constraints included)' : ' (hard constraints excluded)'}`,
      `- trade-cases/<id>.md: ${counts.tradeCases} reflected trade cases`,
      `- assets/<TICKER>.md: ${counts.assets} compiled pages (derived; not imported)`,
      `- memories/<category>/<hash>.md: ${counts.memories}`,
      `- profile.md: ${counts.profileKeys} entries`,
    ].join('\n'),
  ));

  await mkdir(out, { recursive: true, mode: 0o700 });
  const signatures: Array<[string, string]> = [];
  const binding = { instanceId: instance.instanceId, userId: scope.userId, ...(scope.agentId ? { agentId: scope.agentId } : {}) };
  const exportKey = options.sign === true ? deriveExportKey(options.approvalKey!) : undefined;
  for (const rel of [...files.keys()].sort()) {
    const bytes = Buffer.from(files.get(rel)!, 'utf8');
    await mkdir(path.join(out, path.dirname(rel)), { recursive: true, mode: 0o700 });
    await writeFile(path.join(out, rel), bytes, { mode: 0o600, flag: 'wx' });
    if (exportKey) signatures.push([rel, signFile(exportKey, binding, rel, bytes)]);
  }
  if (options.sign === true) {
    await writeFile(path.join(out, 'signature.txt'), renderSignatures(binding, signatures), { mode: 0o600, flag: 'wx' });
    files.set('signature.txt', '');
  }
  return { dir: out, files: [...files.keys()].sort(), signed: options.sign === true, instanceId: instance.instanceId, counts };
}

function methodologyFile(m: MethodologyRecord): string {
  return renderMarkdown({
    schema_version: MEMORY_EXPORT_SCHEMA_VERSION, kind: 'methodology', id: m.id, asset_class: m.assetClass, state: m.state, uses: m.uses, wins: m.wins,
    confidence: m.confidence, origin: m.origin, source_ref: m.sourceRef, graduation_proposed_at: m.graduationProposedAt, graduated_at: m.graduatedAt,
    quarantined_at: m.quarantinedAt, state_reason: m.stateReason, created_at: m.createdAt, updated_at: m.updatedAt,
  }, m.text);
}

function preferenceFile(p: PreferenceRecord): string {
  return renderMarkdown({
    schema_version: MEMORY_EXPORT_SCHEMA_VERSION, kind: 'preference', id: p.id, preference_kind: p.kind, dimension: p.dimension, state: p.state, value: p.value,
    source: p.source, evidence: p.evidence, contradictions: p.contradictions, last_evidence_at: p.lastEvidenceAt, activated_at: p.activatedAt, decided_at: p.decidedAt,
    created_at: p.createdAt, updated_at: p.updatedAt,
  }, p.text);
}

function tradeCaseFile(c: RoleCaseRecord, t: TradeRecord | undefined): string {
  return renderMarkdown({
    schema_version: MEMORY_EXPORT_SCHEMA_VERSION, kind: 'trade_case', id: c.id, role: c.role, asset: c.asset, asset_class: c.assetClass, trade_kind: c.kind,
    direction: c.direction, side: t?.side ?? (c.direction === 'short' ? 'sell' : 'buy'), quantity: t?.quantity ?? 0, entry_price: t?.price ?? 0, exit_price: t?.exitPrice,
    notional_usd: t?.notionalUsd ?? 0, simulated: t?.simulated ?? true, outcome: c.outcome, realized_pnl_usd: c.realizedPnlUsd, holding_ms: c.holdingMs,
    methodology_ids: [...c.methodologyIds], opened_at: c.openedAt, closed_at: c.closedAt, reflected_at: c.reflectedAt, classification: c.classification,
    reflection: reflectionValue(c.reflection),
  }, c.summary);
}

function memoryFile(m: MemoryRecord): string {
  return renderMarkdown({
    schema_version: MEMORY_EXPORT_SCHEMA_VERSION, kind: 'memory', category: m.category, source: m.source, status: m.status,
    metadata: m.metadata === undefined ? undefined : m.metadata, updated_at: m.updatedAt,
  }, m.content);
}
