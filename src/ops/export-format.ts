/**
 * The markdown tree of a memory export (docs/memory.md, "Export and import"): file kinds, frontmatter
 * rendering and parsing, paths, and the per-file signature. Shared by `exportMemory` and `importMemory`.
 */
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import { yaml } from '../util/lazy-yaml';

/** The format version every file carries (`schema_version`); an importer refuses any other. */
export const MEMORY_EXPORT_SCHEMA_VERSION = 1;
/** The first line of `signature.txt`. */
export const SIGNATURE_HEADER = 'minara-memory-export-signature v2';
/** Frontmatter fields that record when this copy was made; they change on a round trip and nothing else does. */
export const VOLATILE_FIELDS = ['exported_at', 'updated_at'] as const;

/** A markdown file: YAML frontmatter (keys sorted, no line folding) and a body. */
export function renderMarkdown(front: Readonly<Record<string, unknown>>, body: string): string {
  const text = yaml().stringify(dropUndefined(front), { sortMapEntries: true, lineWidth: 0 });
  return `---\n${text}---\n\n${body.replace(/\s+$/u, '')}\n`;
}

function dropUndefined(o: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

/** Split a markdown file into frontmatter (an object) and body; throws with the reason when malformed. */
export function parseMarkdown(text: string): { front: Record<string, unknown>; body: string } {
  if (!text.startsWith('---\n')) throw new Error('no frontmatter: the file must start with "---"');
  const end = text.indexOf('\n---\n', 3);
  if (end < 0) throw new Error('the frontmatter is not closed by a "---" line');
  let front: unknown;
  try {
    front = yaml().parse(text.slice(4, end + 1), { schema: 'core', maxAliasCount: 0, uniqueKeys: true });
  } catch (error) {
    throw new Error(`invalid frontmatter: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  if (typeof front !== 'object' || front === null || Array.isArray(front)) throw new Error('invalid frontmatter: expected a mapping of fields');
  return { front: front as Record<string, unknown>, body: text.slice(end + 5).replace(/^\n/u, '').replace(/\n$/u, '') };
}

/** HKDF `info` of the export signing key: its own label, so it never signs anything an approval key signs. */
export const EXPORT_KEY_INFO = 'minara memory export signing v2';
/** The first element of every signed message (a domain tag; v1 signed `<path>\0<bytes>` with the database key). */
const SIGNED_TAG = 'minara-memory-export v2';

/**
 * The key that signs memory exports, derived from the approval key (which lives outside the database) with
 * HKDF-SHA256 and its own label. Someone who can read the database file cannot compute it.
 */
export function deriveExportKey(approvalKey: Uint8Array): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', approvalKey, new Uint8Array(0), EXPORT_KEY_INFO, 32));
}

/** What a signature binds besides the file: the instance that exported it and the user (scope) it belongs to. */
export interface ExportBinding {
  readonly instanceId: string;
  readonly userId: string;
  readonly agentId?: string | undefined;
}

/**
 * HMAC-SHA256 of a file bound to the instance, the scope and its path: moving a signed file to another path,
 * another user or another instance breaks its signature. The message is the JSON array
 * `["minara-memory-export v2", instanceId, userId, agentId or "", path]`, a NUL byte, then the file bytes
 * (JSON keeps the fields unambiguous whatever characters an id holds).
 */
export function signFile(exportKey: Uint8Array, binding: ExportBinding, relativePath: string, bytes: Uint8Array): string {
  const head = JSON.stringify([SIGNED_TAG, binding.instanceId, binding.userId, binding.agentId ?? '', relativePath]);
  return createHmac('sha256', exportKey).update(head).update('\0').update(bytes).digest('hex');
}

/** Constant-time comparison of two hex signatures. */
export function sameSignature(a: string, b: string): boolean {
  if (!/^[0-9a-f]{64}$/u.test(a) || !/^[0-9a-f]{64}$/u.test(b)) return false;
  return timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));
}

/**
 * `signature.txt`: header, the instance id, the scope (informational: an importer checks the signatures
 * against its own scope, not against these lines), the algorithm, then `<hmac>  <path>` per file, sorted by path.
 */
export function renderSignatures(binding: ExportBinding, entries: ReadonlyArray<readonly [path: string, hmac: string]>): string {
  const lines = [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([p, h]) => `${h}  ${p}`);
  return [
    SIGNATURE_HEADER,
    `instance_id: ${binding.instanceId}`,
    `user_id: ${JSON.stringify(binding.userId)}`,
    ...(binding.agentId ? [`agent_id: ${JSON.stringify(binding.agentId)}`] : []),
    `algorithm: HMAC-SHA256 over JSON ["${SIGNED_TAG}", instance_id, user_id, agent_id or "", path] + "\\0" + file bytes, with the key HKDF-SHA256(approval key, info "${EXPORT_KEY_INFO}")`,
    ...lines,
  ].join('\n') + '\n';
}

/** Parse `signature.txt`; undefined when it is not one of this version (a v1 file, signed with the database key, is not). */
export function parseSignatures(text: string): { instanceId: string; byPath: Map<string, string> } | undefined {
  const lines = text.split('\n');
  if (lines[0] !== SIGNATURE_HEADER) return undefined;
  const id = /^instance_id: ([0-9a-f]{16})$/u.exec(lines[1] ?? '');
  if (!id) return undefined;
  const byPath = new Map<string, string>();
  for (const line of lines.slice(2)) {
    const m = /^([0-9a-f]{64}) {2}(\S.*)$/u.exec(line);
    if (m) byPath.set(m[2]!, m[1]!);
  }
  return { instanceId: id[1]!, byPath };
}

/** One safe path segment: letters, digits, `_`, `-`, `.` (not leading), at most 64 characters. */
export const SAFE_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$/u;
/** Lower snake case (asset classes, dimensions, categories). */
export const SNAKE = /^[a-z][a-z0-9_]{0,39}$/u;

/** What a path in the tree is, or why it is not one the importer reads. */
export type TreeEntry =
  | { readonly kind: 'index' | 'signature' | 'readme' | 'profile' }
  | { readonly kind: 'methodology'; readonly assetClass: string; readonly id: number }
  | { readonly kind: 'preference'; readonly dimension: string; readonly id: number }
  | { readonly kind: 'trade_case'; readonly id: number }
  | { readonly kind: 'asset'; readonly ticker: string }
  | { readonly kind: 'memory'; readonly category: string; readonly name: string }
  | { readonly kind: 'unknown'; readonly reason: string };

/** Classify a relative path (`/`-separated) of the tree. */
export function classifyPath(rel: string): TreeEntry {
  const parts = rel.split('/');
  if (parts.some((p) => p === '' || p === '.' || p === '..' || !SAFE_SEGMENT.test(p))) return { kind: 'unknown', reason: 'unsafe path segment' };
  const id = (name: string) => (/^[1-9]\d{0,14}\.md$/u.test(name) ? Number(name.slice(0, -3)) : undefined);
  if (parts.length === 1) {
    if (rel === 'index.md') return { kind: 'index' };
    if (rel === 'signature.txt') return { kind: 'signature' };
    if (rel === 'profile.md') return { kind: 'profile' };
    return { kind: 'unknown', reason: 'unexpected file at the top of the tree' };
  }
  const [top, a, b] = parts;
  if (parts.length === 2 && top === 'preferences' && a === 'README.md') return { kind: 'readme' };
  if (parts.length === 2 && top === 'trade-cases' && id(a!) !== undefined) return { kind: 'trade_case', id: id(a!)! };
  if (parts.length === 2 && top === 'assets' && /^[A-Z0-9]{1,20}\.md$/u.test(a!)) return { kind: 'asset', ticker: a!.slice(0, -3) };
  if (parts.length === 3 && top === 'methodologies' && SNAKE.test(a!) && id(b!) !== undefined) return { kind: 'methodology', assetClass: a!, id: id(b!)! };
  if (parts.length === 3 && top === 'preferences' && SNAKE.test(a!) && id(b!) !== undefined) return { kind: 'preference', dimension: a!, id: id(b!)! };
  if (parts.length === 3 && top === 'memories' && SNAKE.test(a!) && /^[0-9a-f]{16}\.md$/u.test(b!)) return { kind: 'memory', category: a!, name: b!.slice(0, -3) };
  return { kind: 'unknown', reason: 'not a path of the export format' };
}
