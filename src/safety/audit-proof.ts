/**
 * Inclusion proofs of audit rows, after Certificate Transparency (RFC 6962 §2.1, RFC 9162 §2.1): a Merkle tree
 * over the chained rows in seq order (leaf `SHA-256(0x00 ‖ leaf text)`, node `SHA-256(0x01 ‖ left ‖ right)`), a
 * tree head signed with the audit Ed25519 key, and the audit path of one row. A third party checks a proof
 * offline with {@link verifyAuditProof} and the public key alone: the row's text, its place, the path up to the
 * signed root, the signature. The leaf text is the row's canonical JSON (`{ seq, ...content }`), the same text
 * its chain link covers.
 */
import { createHash, sign, verify, type KeyObject } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import { auditLeafText } from '../storage/audit-chain';
import type { AuditChainRow } from '../storage/audit-types';
import type { Storage } from '../storage/types';
import { canonicalJson } from '../util/canonical-json';
import { auditKeyId, parseAuditPublicKey, type AuditKeys } from './audit-keys';

const TREE_HEAD_CONTEXT = 'minara-audit-tree-head/v1\n';

/** A signed tree head: the Merkle root over the first `treeSize` chained rows, and the chain head it matches. */
export interface SignedAuditTreeHead {
  readonly v: 1;
  readonly type: 'tree-head';
  readonly instance: string;
  /** Rows in the tree (seq 1…treeSize). */
  readonly treeSize: number;
  /** The Merkle tree hash (hex). */
  readonly rootHash: string;
  /** The chain link of row `treeSize` at signing time. */
  readonly chainHead: string;
  readonly at: string;
  readonly keyId: string;
  /** Ed25519 over the context string and the canonical JSON of every other field (base64url). */
  readonly sig: string;
}

/** An inclusion proof of one row (`minara audit prove <seq>` writes it as JSON). */
export interface AuditInclusionProof {
  readonly v: 1;
  readonly type: 'minara-audit-inclusion-proof';
  /** The row's chain position; its leaf index is `seq − 1`. */
  readonly seq: number;
  /** The row's canonical JSON, exactly as hashed into the leaf (parse it to read the row). */
  readonly leaf: string;
  /** Sibling hashes from the leaf up (hex), as RFC 9162 §2.1.3.1 defines the path. */
  readonly auditPath: readonly string[];
  readonly treeHead: SignedAuditTreeHead;
}

/** What {@link verifyAuditProof} finds. */
export type AuditProofCheck =
  | { readonly ok: true; readonly seq: number; readonly treeSize: number; readonly row: Record<string, unknown>; readonly treeHead: SignedAuditTreeHead }
  | { readonly ok: false; readonly reason: string };

const sha = (...parts: Uint8Array[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};
const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/** RFC 6962 leaf hash of a text. */
export function auditMerkleLeafHash(text: string): Buffer {
  return sha(LEAF, Buffer.from(text, 'utf8'));
}

/** The largest power of two smaller than n (n ≥ 2). */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** MTH(D[lo:hi]) per RFC 6962 §2.1. */
function treeHash(leaves: readonly Buffer[], lo: number, hi: number): Buffer {
  const n = hi - lo;
  if (n === 0) return sha();
  if (n === 1) return leaves[lo]!;
  const k = split(n);
  return sha(NODE, treeHash(leaves, lo, lo + k), treeHash(leaves, lo + k, hi));
}

/** PATH(m, D[lo:hi]) per RFC 6962 §2.1.1, leaf first. */
function auditPath(leaves: readonly Buffer[], m: number, lo: number, hi: number): Buffer[] {
  const n = hi - lo;
  if (n <= 1) return [];
  const k = split(n);
  return m < k ? [...auditPath(leaves, m, lo, lo + k), treeHash(leaves, lo + k, hi)] : [...auditPath(leaves, m - k, lo + k, hi), treeHash(leaves, lo, lo + k)];
}

/** The root and the path of leaf `index` over these leaf hashes. */
export function auditMerkleProof(leaves: readonly Buffer[], index: number): { rootHash: string; auditPath: string[] } {
  return { rootHash: treeHash(leaves, 0, leaves.length).toString('hex'), auditPath: auditPath(leaves, index, 0, leaves.length).map((b) => b.toString('hex')) };
}

/** The root an inclusion path leads to (RFC 9162 §2.1.3.2), or undefined when the path does not fit the tree size. */
function rootFromPath(index: number, treeSize: number, leafHash: Buffer, path: readonly Buffer[]): Buffer | undefined {
  if (index >= treeSize) return undefined;
  let fn = index;
  let sn = treeSize - 1;
  let r = leafHash;
  for (const p of path) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = sha(NODE, p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = sha(NODE, r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

function treeHeadMessage(head: Omit<SignedAuditTreeHead, 'sig'>): Buffer {
  return Buffer.from(TREE_HEAD_CONTEXT + canonicalJson(head));
}

/** Options of {@link proveAuditRow}. */
export interface ProveAuditRowOptions {
  readonly storage: Pick<Storage, 'audit'>;
  readonly keys: Pick<AuditKeys, 'signingKey' | 'keyId'>;
  /** The row's chain position (as `minara audit list` shows after the `/`). */
  readonly seq: number;
  readonly instance: string;
  readonly now?: (() => Date) | undefined;
}

/**
 * Build an inclusion proof of one row: walk the chain once (it must verify, or nothing is signed), hash every
 * chained row into a leaf, sign the tree head over all of them, and return the row's path.
 * @throws MinaraError `INVALID_ARGUMENT` for a seq not in the chain; `STORAGE_ERROR` when the chain does not verify.
 */
export async function proveAuditRow(options: ProveAuditRowOptions): Promise<AuditInclusionProof> {
  const { storage, keys, seq, instance, now = () => new Date() } = options;
  if (!Number.isSafeInteger(seq) || seq < 1) throw new MinaraError('INVALID_ARGUMENT', `proveAuditRow: seq must be a positive integer (a row's chain position), got ${JSON.stringify(seq)}`);
  const leaves: Buffer[] = [];
  let leaf: string | undefined;
  const report = await storage.audit.verify({
    onRow: (row: AuditChainRow) => {
      if (row.seq === null || row.hash === null) return;
      const text = auditLeafText(row.seq, row.content);
      if (row.seq === seq) leaf = text;
      leaves.push(auditMerkleLeafHash(text));
    },
  });
  if (!report.ok) throw new MinaraError('STORAGE_ERROR', `proveAuditRow: the audit chain does not verify (${report.problems[0]?.message ?? 'unknown problem'}); nothing is signed over a broken chain`);
  if (leaf === undefined || seq > leaves.length) throw new MinaraError('INVALID_ARGUMENT', `proveAuditRow: seq ${seq} is not in the chain (it holds seq 1–${leaves.length})`);
  const { rootHash, auditPath: path } = auditMerkleProof(leaves, seq - 1);
  const body: Omit<SignedAuditTreeHead, 'sig'> = { v: 1, type: 'tree-head', instance, treeSize: leaves.length, rootHash, chainHead: report.head.hash, at: now().toISOString(), keyId: keys.keyId };
  const treeHead: SignedAuditTreeHead = { ...body, sig: sign(null, treeHeadMessage(body), keys.signingKey).toString('base64url') };
  return { v: 1, type: 'minara-audit-inclusion-proof', seq, leaf, auditPath: path, treeHead };
}

/**
 * Check an inclusion proof offline with the public key alone: the tree head's Ed25519 signature, the leaf's
 * place and text, and the audit path up to the signed root. Never throws on a bad proof; returns why.
 *
 * @example
 * ```ts
 * const check = verifyAuditProof(JSON.parse(readFileSync('row-42.proof.json', 'utf8')), readFileSync('audit.pub.pem', 'utf8'));
 * if (!check.ok) throw new Error(check.reason);
 * console.log(check.row); // the row as it was recorded
 * ```
 */
export function verifyAuditProof(proof: unknown, publicKey: string | KeyObject): AuditProofCheck {
  let key: KeyObject;
  try {
    key = parseAuditPublicKey(publicKey);
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
  const p = proof as Partial<AuditInclusionProof> | null;
  if (!p || typeof p !== 'object' || p.v !== 1 || p.type !== 'minara-audit-inclusion-proof') return { ok: false, reason: 'not an audit inclusion proof (expected type "minara-audit-inclusion-proof", v 1)' };
  const th = p.treeHead as Partial<SignedAuditTreeHead> | undefined;
  if (!Number.isSafeInteger(p.seq) || typeof p.leaf !== 'string' || !Array.isArray(p.auditPath) || !p.auditPath.every((h) => typeof h === 'string' && /^[0-9a-f]{64}$/u.test(h))) {
    return { ok: false, reason: 'malformed proof: seq, leaf and auditPath (64-hex hashes) are required' };
  }
  if (!th || th.type !== 'tree-head' || th.v !== 1 || !Number.isSafeInteger(th.treeSize) || typeof th.rootHash !== 'string' || typeof th.sig !== 'string') {
    return { ok: false, reason: 'malformed proof: treeHead must be a signed tree head (treeSize, rootHash, sig)' };
  }
  if (th.keyId !== auditKeyId(key)) return { ok: false, reason: `the tree head was signed with another key (key id ${String(th.keyId)}, expected ${auditKeyId(key)})` };
  const { sig, ...body } = th as SignedAuditTreeHead;
  if (!verify(null, treeHeadMessage(body), key, Buffer.from(sig, 'base64url'))) return { ok: false, reason: 'the tree head signature does not match (the tree head was edited or forged)' };
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(p.leaf) as Record<string, unknown>;
  } catch {
    return { ok: false, reason: 'the leaf is not JSON' };
  }
  if (row.seq !== p.seq) return { ok: false, reason: `the leaf says seq ${String(row.seq)}, the proof seq ${p.seq}` };
  const root = rootFromPath(p.seq! - 1, th.treeSize!, auditMerkleLeafHash(p.leaf), p.auditPath.map((h) => Buffer.from(h, 'hex')));
  if (!root || root.toString('hex') !== th.rootHash) return { ok: false, reason: 'the audit path does not lead from this row to the signed root: the row was changed, or it is not at this place in the tree' };
  return { ok: true, seq: p.seq!, treeSize: th.treeSize!, row, treeHead: th as SignedAuditTreeHead };
}
