import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * A bearer-token check that compares in constant time. Both sides are hashed to 32 bytes first, so
 * `timingSafeEqual` always sees equal-length buffers and a token of the wrong length is rejected by the
 * same code path, with no early exit that would leak the expected length.
 */
export function createBearerCheck(token: string): (authorization: string | null) => boolean {
  const expected = createHash('sha256').update(token, 'utf8').digest();
  return (authorization) => {
    const presented = parseBearer(authorization) ?? '';
    const actual = createHash('sha256').update(presented, 'utf8').digest();
    // Both buffers are 32 bytes; `ok` is only true for a token that was actually presented.
    const same = timingSafeEqual(expected, actual);
    return same && presented.length > 0;
  };
}

/** The token of an `Authorization: Bearer <token>` header, or `undefined`. */
export function parseBearer(authorization: string | null): string | undefined {
  if (authorization === null) return undefined;
  const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
  return m?.[1];
}
