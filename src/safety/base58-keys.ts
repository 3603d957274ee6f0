/**
 * Bitcoin private keys in base58check form, validated with `@scure/base` (audited, maintained) rather than a
 * regex alone: a string only counts when its 4-byte double-SHA-256 checksum holds and its payload has the
 * shape of a private key. Used by the secret patterns (`wif_private_key`, `extended_private_key`).
 */
import { createHash } from 'node:crypto';
import { base58, createBase58check } from '@scure/base';

const sha256 = (data: Uint8Array): Uint8Array => new Uint8Array(createHash('sha256').update(data).digest());
const base58check = createBase58check(sha256);

function decode(text: string): Uint8Array | undefined {
  try {
    return base58check.decode(text);
  } catch {
    return undefined;
  }
}

/**
 * A Wallet Import Format key: version 0x80 (mainnet) or 0xef (testnet), 32 key bytes, and a 0x01 suffix for
 * a compressed key, under a valid checksum.
 */
export function isWifPrivateKey(text: string): boolean {
  const bytes = decode(text);
  if (!bytes || (bytes[0] !== 0x80 && bytes[0] !== 0xef)) return false;
  return bytes.length === 33 || (bytes.length === 34 && bytes[33] === 0x01);
}

/**
 * A BIP-32 extended private key (`xprv`, `tprv`, and the `yprv`/`zprv`/`uprv`/`vprv` variants of BIP-49/84):
 * 78 bytes under a valid checksum whose key field starts with the 0x00 byte that marks a private key.
 */
export function isExtendedPrivateKey(text: string): boolean {
  const bytes = decode(text);
  return bytes !== undefined && bytes.length === 78 && bytes[45] === 0x00;
}

/**
 * A Solana secret key as wallets export it: base58 of 64 bytes (the 32-byte seed and the 32-byte public key).
 * Base58 has no checksum, so the decoded length decides (a 32-byte address is not one).
 */
export function isSolanaSecretKey(text: string): boolean {
  try {
    return base58.decode(text).length === 64;
  } catch {
    return false;
  }
}
