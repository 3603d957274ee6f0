/**
 * The audit trail's integrity, wired in one place: keyed links (the storage's `useChainKey`), signed checkpoints
 * written outside the database every N rows, every T seconds and at close, verification against the newest
 * checkpoint, and inclusion proofs. `createApp` makes one from the approval key; a host that assembles its own
 * parts calls {@link createAuditIntegrity} with the same secret.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MinaraError } from '../errors/minara-error';
import { assertAuditKeyId, auditChainKeyId, auditChainKeyObject } from '../storage/audit-chain';
import type { AuditVerifyReport } from '../storage/audit-types';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';
import { createAuditCheckpointer, createFileCheckpointSink, defaultAuditInstance, type AuditCheckpointSink, type SignedAuditCheckpoint } from './audit-checkpoint';
import { deriveAuditKeys } from './audit-keys';
import { proveAuditRow, type AuditInclusionProof } from './audit-proof';
import { verifyAuditTrail } from './audit-verify';

/** The default checkpoint file in a data directory. */
export const AUDIT_CHECKPOINT_FILE = 'audit-checkpoints.jsonl';
/** The public key file written beside it (copy it off the machine). */
export const AUDIT_PUBLIC_KEY_FILE = 'audit-checkpoint.pub.pem';

/** Options of {@link createAuditIntegrity}. */
export interface AuditIntegrityOptions {
  readonly storage: Pick<Storage, 'audit'>;
  /** The secret kept outside the database (the approval key, or `MINARA_AUDIT_KEY`), 32+ bytes. */
  readonly secret: Uint8Array;
  /** The data directory: the default checkpoint file and the public key file go there. Without it, only `sinks`. */
  readonly dataDir?: string | undefined;
  /** More sinks (an HTTP collector, a host's object-storage writer); the data-dir file is always first. */
  readonly sinks?: readonly AuditCheckpointSink[] | undefined;
  /** @default 1000 */
  readonly checkpointEveryRows?: number | undefined;
  /** @default 60 */
  readonly checkpointEverySeconds?: number | undefined;
  /** @default MINARA_INSTANCE_ID, else the host name */
  readonly instance?: string | undefined;
  readonly logger?: Logger | undefined;
  readonly now?: (() => Date) | undefined;
}

/** What {@link createAuditIntegrity} returns (`app.auditIntegrity`). */
export interface AuditIntegrity {
  /** The Ed25519 public key (SPKI PEM) auditors verify checkpoints and proofs with. */
  readonly publicKeyPem: string;
  readonly keyId: string;
  /**
   * The id of the key the storage's links are keyed with (an HMAC of a fixed text under it, never the key): what
   * `storage.audit.head().keyId` records once an instance with this key started (`checkAuditChainKey`) or appended.
   * `createApp` refuses to start (`CONFIG_INVALID`) when the log records another one: an instance sharing the
   * database with a different key.
   */
  readonly chainKeyId: string;
  readonly instance: string;
  /** Where checkpoints go, in order. */
  readonly sinks: readonly AuditCheckpointSink[];
  /** The data-dir checkpoint file (undefined without `dataDir`). */
  readonly checkpointFile: string | undefined;
  /** Take a signed checkpoint now and write it to every sink. */
  checkpoint(): Promise<SignedAuditCheckpoint>;
  /** Verify the chain with the key against the newest valid checkpoint of every readable sink (and `checkpoints`, lines kept elsewhere). */
  verify(options?: { readonly anchor?: string | undefined; readonly checkpoints?: readonly string[] | undefined }): Promise<AuditVerifyReport>;
  /** An inclusion proof of the row at `seq`, over a freshly signed tree head. */
  prove(seq: number): Promise<AuditInclusionProof>;
  /** Stop the timer and take the closing checkpoint. */
  close(): Promise<void>;
}

/**
 * Key the storage's links with a key derived from `secret`, and start the checkpointer.
 * @throws MinaraError `CONFIG_INVALID` for a short secret or bad checkpoint settings.
 */
export function createAuditIntegrity(options: AuditIntegrityOptions): AuditIntegrity {
  const { storage, dataDir, logger, now = () => new Date() } = options;
  const keys = deriveAuditKeys(options.secret);
  const instance = options.instance ?? defaultAuditInstance();
  const checkpointFile = dataDir === undefined ? undefined : path.join(dataDir, AUDIT_CHECKPOINT_FILE);
  const sinks = [...(checkpointFile ? [createFileCheckpointSink({ path: checkpointFile })] : []), ...(options.sinks ?? [])];
  if (sinks.length === 0) throw new MinaraError('CONFIG_INVALID', 'createAuditIntegrity: give dataDir (the default checkpoint file) or at least one sink');
  if (dataDir !== undefined) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const pub = path.join(dataDir, AUDIT_PUBLIC_KEY_FILE);
    if (!existsSync(pub) || readFileSync(pub, 'utf8') !== keys.publicKeyPem) writeFileSync(pub, keys.publicKeyPem, { mode: 0o600 }); // public, but the data directory is the owner's alone
  }
  const checkpointer = createAuditCheckpointer({
    storage, keys, sinks, instance, now, logger, everyRows: options.checkpointEveryRows, everySeconds: options.checkpointEverySeconds,
  });
  if (typeof storage.audit.useChainKey === 'function') storage.audit.useChainKey({ key: keys.chainKey, onAppend: (seq) => checkpointer.noteAppend(seq) });
  else logger?.warn('audit: this storage cannot key its links (no useChainKey); checkpoints are still signed');
  const readAll = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const s of sinks) if (s.read) out.push(...(await s.read()));
    return out;
  };
  return {
    publicKeyPem: keys.publicKeyPem,
    keyId: keys.keyId,
    chainKeyId: auditChainKeyId(auditChainKeyObject(keys.chainKey)),
    instance,
    sinks,
    checkpointFile,
    checkpoint: () => checkpointer.checkpoint(),
    async verify(o = {}) {
      return verifyAuditTrail({ storage, publicKey: keys.publicKey, checkpoints: [...(await readAll()), ...(o.checkpoints ?? [])], anchor: o.anchor });
    },
    prove: (seq) => proveAuditRow({ storage, keys, seq, instance, now }),
    close: () => checkpointer.close(),
  };
}

/**
 * Refuse a storage whose audit links are keyed with another key than `integrity`'s (an instance sharing the
 * database with a different `MINARA_APPROVAL_KEY` or `MINARA_AUDIT_KEY`). On a log that records no key yet, this
 * instance's key is recorded first (`storage.audit.claimChainKey`, one conditional update), so of two instances with
 * different keys starting together the second one is refused here too. `createApp` runs it before anything can
 * append; an append with the wrong key is refused as well.
 * @throws MinaraError `CONFIG_INVALID` naming both key ids.
 */
export async function checkAuditChainKey(storage: Storage, integrity: Pick<AuditIntegrity, 'chainKeyId'>): Promise<void> {
  const keyId = typeof storage.audit.claimChainKey === 'function' ? await storage.audit.claimChainKey() : (await storage.audit.head()).keyId;
  assertAuditKeyId(keyId, integrity.chainKeyId);
}
