import { randomBytes } from 'node:crypto';

/** A function that makes a unique id with the given prefix, e.g. `apr_k3x9...`. Injected as `generateId`. */
export type IdGenerator = (prefix: string) => string;

/** Default {@link IdGenerator}: prefix + 16 random bytes in base32-ish lowercase (26 chars). */
export const generateId: IdGenerator = (prefix) => `${prefix}_${randomBytes(16).toString('base64url').toLowerCase().replace(/[-_]/g, 'x')}`;
