import { randomBytes } from 'node:crypto';

/** A function that makes a unique id with the given prefix, e.g. `apr_k3x9...`. Injected as `generateId`. */
export type IdGenerator = (prefix: string) => string;

/**
 * Random bytes for ids, drawn from one 4 KiB block of the CSPRNG at a time (256 ids per `randomBytes` call, the
 * way `crypto.randomUUID` batches its entropy): a call of the CSPRNG per id cost a turn more than everything else
 * its ids did. Every id still gets 16 bytes nobody else got.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = POOL_BYTES;

function next16(): Buffer {
  if (offset + 16 > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const bytes = pool.subarray(offset, offset + 16);
  offset += 16;
  return bytes;
}

/** Default {@link IdGenerator}: prefix + 16 random bytes in base32-ish lowercase (22 chars). */
export const generateId: IdGenerator = (prefix) => `${prefix}_${next16().toString('base64url').toLowerCase().replace(/[-_]/g, 'x')}`;
