/**
 * The audit trail's keys, kept outside the database: one secret (the approval key, or `MINARA_AUDIT_KEY` when
 * set) gives, through HKDF-SHA256 with a label per use, the HMAC key of the chain links and the Ed25519 key that
 * signs checkpoints and tree heads. A database writer without the secret cannot recompute a keyed link nor sign
 * a checkpoint; an auditor checks checkpoints and proofs with the public key alone. Only `node:crypto`.
 */
import { createHash, createPrivateKey, createPublicKey, hkdfSync, type KeyObject } from 'node:crypto';
import { MinaraError } from '../errors/minara-error';
import { APPROVAL_KEY_BYTES } from './approval-key';

const CHAIN_INFO = 'minara audit chain hmac v1';
const SIGNING_INFO = 'minara audit checkpoint ed25519 v1';
/** The PKCS#8 DER prefix of an Ed25519 private key; the 32-byte seed follows it. */
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The keys {@link deriveAuditKeys} gives. The secret parts never leave the process. */
export interface AuditKeys {
  /** HMAC-SHA256 key of the chain links (`storage.audit.useChainKey({ key })`). */
  readonly chainKey: Uint8Array;
  /** Ed25519 private key that signs checkpoints and tree heads. */
  readonly signingKey: KeyObject;
  /** Its public key: give this (`publicKeyPem`) to auditors and keep a copy off the machine. */
  readonly publicKey: KeyObject;
  /** The public key as SPKI PEM. */
  readonly publicKeyPem: string;
  /** First 16 hex of sha256 over the raw public key: names the key in every signed line. */
  readonly keyId: string;
}

/**
 * Derive the audit keys from a secret kept outside the database (the approval key: `resolveApprovalKey({ dataDir }).key`,
 * or a key of its own from `MINARA_AUDIT_KEY`). Deterministic: the same secret always gives the same keys.
 * @throws MinaraError `CONFIG_INVALID` when the secret is shorter than 32 bytes.
 */
export function deriveAuditKeys(secret: Uint8Array): AuditKeys {
  checkSecret(secret, 'deriveAuditKeys');
  const chainKey = new Uint8Array(hkdfSync('sha256', secret, new Uint8Array(0), CHAIN_INFO, 32));
  const seed = Buffer.from(hkdfSync('sha256', secret, new Uint8Array(0), SIGNING_INFO, 32));
  const signingKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  const publicKey = createPublicKey(signingKey);
  return { chainKey, signingKey, publicKey, publicKeyPem: String(publicKey.export({ format: 'pem', type: 'spki' })), keyId: auditKeyId(publicKey) };
}

/**
 * The chain's HMAC key alone, as {@link deriveAuditKeys} gives it: what the tool registry needs, without making and
 * exporting the Ed25519 key pair (a start derives that once, in the audit part).
 * @throws MinaraError `CONFIG_INVALID` when the secret is shorter than 32 bytes.
 */
export function deriveAuditChainKey(secret: Uint8Array): Uint8Array {
  checkSecret(secret, 'deriveAuditChainKey');
  return new Uint8Array(hkdfSync('sha256', secret, new Uint8Array(0), CHAIN_INFO, 32));
}

function checkSecret(secret: Uint8Array, caller: string): void {
  if (!(secret instanceof Uint8Array) || secret.length < APPROVAL_KEY_BYTES) {
    throw new MinaraError('CONFIG_INVALID', `${caller}: secret must be a Uint8Array of at least ${APPROVAL_KEY_BYTES} bytes (the approval key, or MINARA_AUDIT_KEY)`);
  }
}

/** The key id of an Ed25519 public key: first 16 hex of sha256 over its 32 raw bytes. */
export function auditKeyId(publicKey: KeyObject): string {
  const raw = Buffer.from(String(publicKey.export({ format: 'jwk' }).x), 'base64url');
  return createHash('sha256').update(raw).digest('hex').slice(0, 16);
}

/**
 * Read an Ed25519 public key given as SPKI PEM (what `minara audit public-key` prints) or as its 32 raw bytes in
 * base64url/base64/hex.
 * @throws MinaraError `INVALID_ARGUMENT` naming what was expected.
 */
export function parseAuditPublicKey(key: string | KeyObject): KeyObject {
  if (typeof key !== 'string') {
    if (key.type === 'public' && key.asymmetricKeyType === 'ed25519') return key;
    throw new MinaraError('INVALID_ARGUMENT', 'publicKey: expected an Ed25519 public KeyObject');
  }
  const text = key.trim();
  try {
    if (text.startsWith('-----BEGIN')) {
      const k = createPublicKey(text);
      if (k.asymmetricKeyType === 'ed25519') return k;
    } else {
      const raw = /^[0-9a-f]{64}$/iu.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64url');
      if (raw.length === 32) return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
    }
  } catch {
    // fall through to the one error below
  }
  throw new MinaraError('INVALID_ARGUMENT', 'publicKey: expected an Ed25519 public key as SPKI PEM ("-----BEGIN PUBLIC KEY-----", as `minara audit public-key` prints) or its 32 raw bytes in base64url or hex');
}
