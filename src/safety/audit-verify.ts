/**
 * Verify the audit trail as an auditor would: read the signed checkpoints kept outside the database, refuse any
 * line whose Ed25519 signature does not hold, and walk the chain against the newest valid one (keyed links
 * recomputed with the key the storage holds). A truncated tail with the head rolled back, a history recomputed
 * with plain SHA-256, a downgrade of the keyed links, reordered or inserted rows: each is a problem naming rows.
 */
import type { KeyObject } from 'node:crypto';
import type { AuditChainProblem, AuditVerifyReport } from '../storage/audit-types';
import type { Storage } from '../storage/types';
import { verifyAuditCheckpoint, type SignedAuditCheckpoint } from './audit-checkpoint';
import { parseAuditPublicKey } from './audit-keys';

/** Options of {@link verifyAuditTrail}. */
export interface VerifyAuditTrailOptions {
  readonly storage: Pick<Storage, 'audit'>;
  /** The Ed25519 public key checkpoints are signed with (PEM or raw base64url/hex; `AuditKeys.publicKey`). */
  readonly publicKey: string | KeyObject;
  /** Checkpoint lines (JSONL), from every sink or copy at hand (`sink.read()`, a file kept off the machine). */
  readonly checkpoints?: readonly string[] | undefined;
  /** A head kept elsewhere, `seq:hash` (see `AuditVerifyOptions.anchor`). */
  readonly anchor?: string | undefined;
}

/**
 * Check every checkpoint line, then the chain against the newest valid checkpoint. `ok` is false when the chain
 * breaks, when it disagrees with the checkpoint, or when a checkpoint line fails its signature.
 *
 * @example
 * ```ts
 * const report = await verifyAuditTrail({ storage, publicKey: keys.publicKey, checkpoints: await createFileCheckpointSink({ path }).read!() });
 * if (!report.ok) for (const p of report.problems) console.log(p.kind, p.seq, p.message);
 * ```
 */
export async function verifyAuditTrail(options: VerifyAuditTrailOptions): Promise<AuditVerifyReport> {
  const key = parseAuditPublicKey(options.publicKey);
  const lines = options.checkpoints ?? [];
  const invalid: AuditChainProblem[] = [];
  let newest: SignedAuditCheckpoint | undefined;
  let valid = 0;
  lines.forEach((line, i) => {
    const check = verifyAuditCheckpoint(line, key);
    if (!check.ok) {
      invalid.push({ kind: 'checkpoint_invalid', message: `checkpoint line ${i + 1}: ${check.reason}` });
      return;
    }
    valid++;
    if (newest === undefined || check.checkpoint.seq > newest.seq) newest = check.checkpoint;
  });
  const report = await options.storage.audit.verify({
    ...(options.anchor !== undefined ? { anchor: options.anchor } : {}),
    ...(newest !== undefined && newest.seq > 0 ? { checkpoint: { seq: newest.seq, hash: newest.head, keyedFrom: newest.keyedFrom } } : {}),
  });
  const problems = [...invalid, ...report.problems];
  return {
    ...report, ok: problems.length === 0, problems,
    checkpoints: { read: lines.length, valid, ...(newest ? { newest: { seq: newest.seq, at: newest.at, instance: newest.instance } } : {}) },
  };
}
