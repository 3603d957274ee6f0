/**
 * The audit chain, shared by every engine so they agree on every hash: the stored content of a row, its link
 * (`sha256(prevHash + "\n" + canonical JSON of the content with its seq)`), the row as the API returns it, and
 * the verifier that walks a whole log page by page. Engine-neutral: no driver is imported here.
 */
import { MinaraError } from '../errors/minara-error';
import { createHmac, createSecretKey, hash, type KeyObject } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json';
import type {
  AuditChainHead, AuditChainProblem, AuditChainRow, AuditKind, AuditOutcome, AuditVerifyOptions, AuditVerifyReport,
} from './audit-types';
import type { AuditEntry, AuditEntryInput } from './types';

/** The `prevHash` of the first chained row. */
export const AUDIT_GENESIS_HASH = '0'.repeat(64);

/** Every kind a row may record. */
export const AUDIT_KINDS: readonly AuditKind[] = ['tool_call', 'signal', 'skill_activation', 'turn', 'job_run', 'breaker', 'grant', 'stop', 'input_flag'];
const KINDS: ReadonlySet<string> = new Set(AUDIT_KINDS);

/** Stored columns (beyond id and the chain link) and their keys in the hashed content, in table order. */
export const AUDIT_CONTENT_COLUMNS = [
  ['at', 'at'], ['tool_name', 'toolName'], ['tier', 'tier'], ['source', 'source'], ['session_id', 'sessionId'], ['trace_id', 'traceId'],
  ['tool_call_id', 'toolCallId'], ['approval_id', 'approvalId'], ['decision', 'decision'], ['code', 'code'], ['reason', 'reason'],
  ['duration_ms', 'durationMs'], ['args_json', 'argsJson'], ['mode', 'mode'], ['user_id', 'userId'], ['kind', 'kind'],
  ['outcome_json', 'outcomeJson'], ['detail_json', 'detailJson'],
] as const;

/** A content key. */
export type AuditContentKey = (typeof AUDIT_CONTENT_COLUMNS)[number][1];
const NUMERIC: ReadonlySet<string> = new Set(['tier', 'durationMs']);

/** The content a row stores (and the chain hashes), from what the writer appended. Checks the new optional fields. */
export function auditContentOf(entry: AuditEntryInput, operation = 'audit.append'): Record<AuditContentKey, string | number | undefined> {
  const kind = entry.kind ?? 'tool_call';
  if (!KINDS.has(kind)) throw new MinaraError('INVALID_ARGUMENT', `${operation}: entry.kind must be one of ${AUDIT_KINDS.join(', ')}, got ${JSON.stringify(kind)}`);
  if (entry.userId !== undefined && typeof entry.userId !== 'string') throw new MinaraError('INVALID_ARGUMENT', `${operation}: entry.userId must be a string when given`);
  for (const field of ['outcome', 'detail'] as const) {
    const v = entry[field];
    if (v !== undefined && (typeof v !== 'object' || v === null || Array.isArray(v))) {
      throw new MinaraError('INVALID_ARGUMENT', `${operation}: entry.${field} must be an object when given`);
    }
  }
  return {
    at: entry.at, toolName: entry.toolName, tier: entry.tier, source: entry.source, sessionId: entry.sessionId, traceId: entry.traceId,
    toolCallId: entry.toolCallId, approvalId: entry.approvalId, decision: entry.decision, code: entry.code, reason: entry.reason,
    durationMs: entry.durationMs, argsJson: entry.argsJson, mode: entry.mode, userId: entry.userId, kind,
    outcomeJson: entry.outcome === undefined ? undefined : canonicalJson(entry.outcome),
    detailJson: entry.detail === undefined ? undefined : canonicalJson(entry.detail),
  };
}

/**
 * The canonical text of one row as its link and its Merkle leaf cover it: the canonical JSON of
 * `{ seq, ...present content }` (keys sorted, absent ones left out), written directly: the same text
 * `canonicalJson` gives, without building and sorting an object on every append.
 */
export function auditLeafText(seq: number, content: Readonly<Record<string, string | number | null | undefined>>): string {
  let json = '{';
  for (const key of HASHED_KEYS) {
    const v = key === 'seq' ? seq : content[key];
    if (v === undefined || v === null) continue;
    json += `${json.length > 1 ? ',' : ''}"${key}":${JSON.stringify(v)}`;
  }
  return `${json}}`;
}

/**
 * The hash of one row: its place (`seq`), the previous hash and its content (absent fields left out). With a
 * key, HMAC-SHA256 under it (a keyed link: recomputing it needs the key kept outside the database); without,
 * plain SHA-256 (a legacy link, written before keyed links began). Pass the key as a `KeyObject`
 * ({@link auditChainKeyObject}) on a hot path: building one from raw bytes on every call costs several times the HMAC.
 */
export function auditRowHash(prevHash: string, seq: number, content: Readonly<Record<string, string | number | null | undefined>>, key?: KeyObject | Uint8Array): string {
  const text = `${prevHash}\n${auditLeafText(seq, content)}`;
  return key === undefined ? hash('sha256', text, 'hex') : createHmac('sha256', key).update(text).digest('hex');
}

/**
 * The id a log's head records for the key its links are keyed with: an HMAC of a fixed text under the key (16 hex
 * digits), never the key. An instance holding another key is refused before it appends ({@link auditKeyMismatch}).
 */
export function auditChainKeyId(key: KeyObject): string {
  return createHmac('sha256', key).update('minara audit chain key id').digest('hex').slice(0, 16);
}

/**
 * Throw {@link auditKeyMismatch} when the head records a key id (`recorded`) and this instance holds a key (`ours`)
 * whose id differs; a log that records none, or an instance without a key, passes.
 */
export function assertAuditKeyId(recorded: string | undefined, ours: string | undefined): void {
  if (recorded !== undefined && ours !== undefined && recorded !== ours) throw auditKeyMismatch(recorded, ours);
}

/** The error an append (or `createApp`) gets when the log's links are keyed with another key than this instance's. */
export function auditKeyMismatch(recorded: string, ours: string): MinaraError {
  return new MinaraError(
    'CONFIG_INVALID',
    `audit: this log's links are keyed with another key (key id ${recorded}; this instance's is ${ours}): every instance sharing a database needs the same MINARA_APPROVAL_KEY or MINARA_AUDIT_KEY (to change the approval key, keep the old one as MINARA_AUDIT_KEY). Appending with this key would write links the others report as edited`,
  );
}

/** The chain key as a `KeyObject`, made once (what the engines keep after `useChainKey`). */
export function auditChainKeyObject(key: Uint8Array): KeyObject {
  return createSecretKey(key);
}

/** The hashed keys in canonical (sorted) order. */
const HASHED_KEYS: readonly string[] = ['seq', ...AUDIT_CONTENT_COLUMNS.map(([, key]) => key)].sort();

/** A driver row (snake_case columns) as a chain row: numbers normalised, NULLs left out. */
export function auditChainRowOf(row: Readonly<Record<string, unknown>>): AuditChainRow {
  const content: Record<string, string | number> = {};
  for (const [column, key] of AUDIT_CONTENT_COLUMNS) {
    const v = row[column];
    if (v === null || v === undefined) continue;
    content[key] = NUMERIC.has(key) ? Number(v) : String(v);
  }
  const seq = row.seq === null || row.seq === undefined ? null : Number(row.seq);
  return { id: Number(row.id), seq, prevHash: row.prev_hash == null ? null : String(row.prev_hash), hash: row.hash == null ? null : String(row.hash), content };
}

function parseObject(text: string | number | undefined): Record<string, unknown> | undefined {
  if (typeof text !== 'string') return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A chain row as the API returns it. */
export function auditEntryOf(row: AuditChainRow): AuditEntry {
  const c = row.content;
  const s = (key: AuditContentKey): string | undefined => (typeof c[key] === 'string' ? (c[key] as string) : undefined);
  const outcome = parseObject(c.outcomeJson) as AuditOutcome | undefined;
  const detail = parseObject(c.detailJson);
  const entry: Record<string, unknown> = {
    id: row.id, at: s('at') ?? '', toolName: s('toolName') ?? '', tier: Number(c.tier ?? 0), source: s('source') ?? '',
    sessionId: s('sessionId'), traceId: s('traceId'), toolCallId: s('toolCallId'), approvalId: s('approvalId'),
    decision: s('decision') ?? 'allowed', code: s('code'), reason: s('reason'), durationMs: Number(c.durationMs ?? 0), argsJson: s('argsJson') ?? 'null',
    mode: s('mode'), userId: s('userId'), kind: s('kind') ?? 'tool_call', outcome, detail,
    chain: row.seq !== null && row.prevHash !== null && row.hash !== null ? { seq: row.seq, prevHash: row.prevHash, hash: row.hash } : undefined,
  };
  for (const key of Object.keys(entry)) if (entry[key] === undefined) delete entry[key];
  return entry as unknown as AuditEntry;
}

/** Parse `seq:hash` (a head kept outside the database). */
function parseAnchor(anchor: string): { seq: number; hash: string } {
  const m = /^(\d{1,15}):([0-9a-f]{64})$/u.exec(anchor.trim());
  if (!m) throw new MinaraError('INVALID_ARGUMENT', `audit.verify: anchor must be "<seq>:<64 hex hash>" as \`minara audit verify\` prints it, got ${JSON.stringify(anchor)}`);
  return { seq: Number(m[1]), hash: m[2]! };
}

/** Rows in id order, one page after another (the engine's read). */
export type AuditChainPager = (afterId: number, limit: number) => Promise<readonly AuditChainRow[]>;

const MAX_PROBLEMS = 100;

/**
 * Walk every row in id order and check the chain: each chained row's hash recomputed from its content, its
 * `prevHash` equal to the previous row's hash, `seq` contiguous and in id order, no unchained row after the chain
 * began, the newest row equal to the head row, the unchained prefix of the size the migration recorded, and
 * (given an anchor kept elsewhere) the anchored position still carrying its hash.
 */
export async function verifyAuditChain(head: AuditChainHead, page: AuditChainPager, options: AuditVerifyOptions = {}, chainKey?: KeyObject | Uint8Array): Promise<AuditVerifyReport> {
  const key = chainKey instanceof Uint8Array ? createSecretKey(chainKey) : chainKey;
  const anchor = options.anchor === undefined ? undefined : parseAnchor(options.anchor);
  const checkpoint = options.checkpoint;
  const keyedFrom = head.keyedFrom;
  let legacyLinks = 0;
  let checkpointSeen = false;
  const problems: AuditChainProblem[] = [];
  const add = (p: AuditChainProblem) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const verifierKeyId = key === undefined ? undefined : auditChainKeyId(key);
  if (verifierKeyId !== undefined && head.keyId !== undefined && verifierKeyId !== head.keyId) {
    add({
      kind: 'key_mismatch',
      message: `the log's links are keyed with key id ${head.keyId}, and this verifier holds key id ${verifierKeyId}: verify with the key of the instances that wrote it (their MINARA_APPROVAL_KEY or MINARA_AUDIT_KEY); keyed rows are still judged with this key below`,
    });
  }
  let expectedSeq = 1;
  let prev = AUDIT_GENESIS_HASH;
  let prevSeq = 0;
  let legacy = 0;
  let checked = 0;
  let anchorSeen = false;
  let afterId = 0;
  // Positions skipped so far (a later row may still carry them: then rows were reordered, not deleted).
  const gaps: Array<{ from: number; to: number; id: number }> = [];
  const fillGap = (seq: number): boolean => {
    const i = gaps.findIndex((g) => seq >= g.from && seq <= g.to);
    if (i < 0) return false;
    const g = gaps[i]!;
    gaps.splice(i, 1, ...[{ from: g.from, to: seq - 1, id: g.id }, { from: seq + 1, to: g.to, id: g.id }].filter((x) => x.from <= x.to));
    return true;
  };
  for (;;) {
    const rows = await page(afterId, 1000);
    for (const row of rows) {
      afterId = row.id;
      options.onRow?.(row);
      if (row.seq === null || row.hash === null || row.prevHash === null) {
        if (row.seq === null && row.hash === null && row.prevHash === null && row.id <= head.legacyMaxId) legacy++;
        else add({ kind: 'inserted', id: row.id, message: `row ${row.id} has no valid chain link but was written after the chain began (inserted or altered outside the audit writer)` });
        continue;
      }
      checked++;
      const inOrder = row.seq === expectedSeq;
      if (row.seq > expectedSeq) gaps.push({ from: expectedSeq, to: row.seq - 1, id: row.id });
      else if (row.seq < expectedSeq) {
        add(fillGap(row.seq)
          ? { kind: 'reordered', seq: row.seq, id: row.id, message: `row ${row.id} has seq ${row.seq} but comes after seq ${expectedSeq - 1} in the table: rows were reordered or renumbered` }
          : { kind: 'inserted', seq: row.seq, id: row.id, message: `row ${row.id} repeats seq ${row.seq}: a copy was inserted or a row renumbered` });
      }
      const keyedRow = keyedFrom !== undefined && row.seq >= keyedFrom;
      if (!keyedRow) legacyLinks++;
      // A keyed link is recomputed with the key; without the key it is only checked for order and linkage.
      const recompute = !keyedRow || key !== undefined;
      if (recompute && auditRowHash(row.prevHash, row.seq, row.content, keyedRow ? key : undefined) !== row.hash) {
        add({
          kind: 'edited', seq: row.seq, id: row.id,
          message: keyedRow
            ? `row ${row.id} (seq ${row.seq}) does not match its keyed link: its content was edited, or the link was recomputed without the audit key (or written by an instance holding another key: every instance sharing a database needs the same MINARA_APPROVAL_KEY or MINARA_AUDIT_KEY)`
            : `row ${row.id} (seq ${row.seq}) does not match its hash: its content was edited`,
        });
      } else if (inOrder && row.prevHash !== prev) {
        add({ kind: 'edited', seq: prevSeq, id: row.id, message: `seq ${row.seq} (row ${row.id}) does not follow seq ${prevSeq}: the row before it was replaced or rehashed` });
      }
      if (anchor && row.seq === anchor.seq) {
        anchorSeen = true;
        if (row.hash !== anchor.hash) add({ kind: 'anchor_mismatch', seq: row.seq, id: row.id, message: `seq ${row.seq} carries hash ${row.hash.slice(0, 16)}…, not the anchored ${anchor.hash.slice(0, 16)}…: the chain was rewritten` });
      }
      if (checkpoint && row.seq === checkpoint.seq) {
        checkpointSeen = true;
        if (row.hash !== checkpoint.hash) add({ kind: 'checkpoint_mismatch', seq: row.seq, id: row.id, message: `seq ${row.seq} (row ${row.id}) carries hash ${row.hash.slice(0, 16)}…, not the ${checkpoint.hash.slice(0, 16)}… the signed checkpoint recorded: history up to it was rewritten` });
      }
      if (row.seq >= expectedSeq) {
        prev = row.hash;
        prevSeq = row.seq;
        expectedSeq = row.seq + 1;
      }
    }
    if (rows.length < 1000) break;
  }
  for (const g of gaps) {
    add({ kind: 'deleted', seq: g.from, id: g.id, message: g.from === g.to ? `seq ${g.from} is missing (deleted)` : `seq ${g.from}–${g.to} are missing (${g.to - g.from + 1} rows deleted)` });
  }
  const last = expectedSeq - 1;
  if (head.seq > last) add({ kind: 'deleted', seq: last + 1, message: `the newest ${head.seq - last} row(s) are missing: the head says seq ${head.seq}, the log ends at seq ${last}` });
  else if (head.seq < last) add({ kind: 'head_mismatch', seq: last, message: `the log reaches seq ${last} but the head says seq ${head.seq} (rows added outside the audit writer, or the head was rolled back)` });
  else if (head.hash !== prev) add({ kind: 'head_mismatch', seq: last, message: `the newest row's hash differs from the head's (the newest row or the head was edited)` });
  if (legacy !== head.legacyRows) add({ kind: 'legacy_changed', message: `the unchained prefix had ${head.legacyRows} row(s) when the chain began; ${legacy} remain` });
  if (checkpoint) {
    if (!checkpointSeen && checkpoint.seq > last) {
      add({ kind: 'truncated', seq: last + 1, message: `the log ends at seq ${last}, but a signed checkpoint recorded seq ${checkpoint.seq}: rows seq ${last + 1}–${checkpoint.seq} were deleted and the head rolled back` });
    } else if (!checkpointSeen && checkpoint.seq > 0) {
      add({ kind: 'checkpoint_mismatch', seq: checkpoint.seq, message: `seq ${checkpoint.seq}, which a signed checkpoint recorded, is not in the log` });
    }
    if (checkpoint.keyedFrom !== undefined && checkpoint.keyedFrom !== keyedFrom) {
      add({ kind: 'key_downgrade', seq: checkpoint.keyedFrom, message: `keyed links began at seq ${checkpoint.keyedFrom} when checkpointed, the log now says ${keyedFrom === undefined ? 'none are keyed' : `seq ${keyedFrom}`}: the links were downgraded and recomputed` });
    }
  }
  if (anchor && !anchorSeen) add({ kind: 'anchor_mismatch', seq: anchor.seq, message: `the anchored seq ${anchor.seq} is not in the log (deleted, or the chain is shorter than when anchored)` });
  // By position; a key mismatch first (it explains the rows judged edited after it).
  const place = (p: AuditChainProblem) => (p.kind === 'key_mismatch' ? -1 : (p.seq ?? Number.MAX_SAFE_INTEGER));
  problems.sort((a, b) => place(a) - place(b));
  return {
    ok: problems.length === 0, checked, unchainedPrefix: legacy, head, problems,
    keyed: { from: keyedFrom, legacyLinks, keyChecked: key !== undefined || keyedFrom === undefined },
    ...(checkpoint ? { checkpoint: { seq: checkpoint.seq, hash: checkpoint.hash } } : {}),
  };
}

/** The head row as stored (columns `seq`, `hash`, `legacy_rows`, `legacy_max_id`, `keyed_from`, `key_id`). */
export function auditHeadOf(row: Readonly<Record<string, unknown>> | undefined): AuditChainHead {
  if (!row) return { seq: 0, hash: AUDIT_GENESIS_HASH, legacyRows: 0, legacyMaxId: 0 };
  const keyedFrom = row.keyed_from == null ? undefined : Number(row.keyed_from);
  const keyId = row.key_id == null ? undefined : String(row.key_id);
  return {
    seq: Number(row.seq), hash: String(row.hash), legacyRows: Number(row.legacy_rows), legacyMaxId: Number(row.legacy_max_id),
    ...(keyedFrom !== undefined ? { keyedFrom } : {}), ...(keyId !== undefined ? { keyId } : {}),
  };
}

/** The error an append without the key gets once keyed links began. */
export function auditKeyRequired(keyedFrom: number): MinaraError {
  return new MinaraError('CONFIG_INVALID', `audit.append: this log's links are keyed since seq ${keyedFrom}; open the storage with its audit chain key (storage.audit.useChainKey, as createApp does) before appending`);
}
