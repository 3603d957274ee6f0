import type { createRemoteJWKSet } from 'jose';
import { MinaraError } from '../errors/minara-error';
import { createHash, timingSafeEqual } from 'node:crypto';
import { isLoopbackHost } from './serve';

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

/**
 * The scope a credential needs to decide approvals (`POST /v1/approvals/:id`). Requesting an approval (calling a
 * tool that needs one) needs no scope; deciding it does, so a credential handed to an MCP host or any automated
 * caller (which lacks it) can never approve its own call. Give it only to credentials a person holds.
 */
export const DECIDE_SCOPE = 'approvals:decide';

/** Who a request is, as an authenticator says. */
export interface GatewayIdentity {
  /** The tenant: memory, sessions, approvals and files are scoped to it. */
  readonly userId: string;
  /** Roles; `operator` may write the shared workspace files. @default [] */
  readonly roles?: readonly string[] | undefined;
  /**
   * What the credential may do beyond requesting: {@link DECIDE_SCOPE} lets it decide approvals. A person's
   * credential carries it; one handed to an MCP host or a script does not. @default [] (request only)
   */
  readonly scopes?: readonly string[] | undefined;
  /**
   * The user's quota as the identity provider states it (a JWT's `minara_quota` claim: `{ "rpm": 20,
   * "usdPerDay": 5 }`); a stored per-user setting wins over it, and it wins over the gateway's defaults.
   */
  readonly quota?: GatewayQuota | undefined;
}

/** Per-user limits on user turns: requests per minute and USD of model spend per UTC day. */
export interface GatewayQuota {
  readonly requestsPerMinute?: number | undefined;
  readonly usdPerDay?: number | undefined;
}

/** Read a `minara_quota` claim (`{ rpm | requestsPerMinute, usdPerDay }`); anything malformed is ignored. */
export function quotaFromClaim(raw: unknown): GatewayQuota | undefined {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return undefined;
  const r = raw as Record<string, unknown>;
  const rpm = r['rpm'] ?? r['requestsPerMinute'];
  const usd = r['usdPerDay'];
  const out = {
    ...(typeof rpm === 'number' && Number.isSafeInteger(rpm) && rpm >= 0 ? { requestsPerMinute: rpm } : {}),
    ...(typeof usd === 'number' && Number.isFinite(usd) && usd >= 0 ? { usdPerDay: usd } : {}),
  };
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Decide who a request is, or `null` to answer 401. Throwing also answers 401 (the message is not sent). */
export type GatewayAuthenticate = (request: Request) => GatewayIdentity | null | Promise<GatewayIdentity | null>;

/** Options of {@link createJwtAuthenticator}. Give exactly one of `secret` and `jwksUrl`. */
export interface JwtAuthenticatorOptions {
  /** Shared secret for HS256/HS384/HS512 tokens (at least 32 bytes). */
  readonly secret?: string | Uint8Array | undefined;
  /**
   * URL of a JSON Web Key Set (RS256, ES256, EdDSA, …); keys are cached and refreshed by `jose`. Must be `https:`;
   * plain `http:` is refused except on a loopback host (127.0.0.0/8, `::1`, `localhost`).
   */
  readonly jwksUrl?: string | URL | undefined;
  /** Required `iss`. */
  readonly issuer?: string | undefined;
  /**
   * Required `aud` (one value or any of several). A token minted for another service of the same issuer must not
   * open this gateway, so this is required: `createJwtAuthenticator` refuses to start without it unless you opt
   * out explicitly with `false` (`GATEWAY_JWT_ANY_AUDIENCE=1`).
   */
  readonly audience?: string | readonly string[] | false | undefined;
  /** Claim holding the user id. @default 'sub' */
  readonly userClaim?: string | undefined;
  /** Claim holding the roles (an array of strings, or one space-separated string). @default 'roles' */
  readonly rolesClaim?: string | undefined;
  /**
   * Claim holding the scopes (OAuth `scope`: one space-separated string, or an array). `scp` is read when it is
   * absent. {@link DECIDE_SCOPE} lets the token decide approvals. @default 'scope'
   */
  readonly scopeClaim?: string | undefined;
  /** Allowed clock skew in seconds, 0–60 (an expired token passes for this long). @default 5 */
  readonly clockToleranceSeconds?: number | undefined;
}

const USER_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/**
 * A built-in {@link GatewayAuthenticate} for signed bearer tokens (JWT), on `jose` (maintained, dependency-
 * free, audited for the algorithm-confusion and `alg: none` classes of bug): signature, expiry, not-before,
 * and the issuer and audience when configured are all checked. The user id comes from `sub` (or
 * `userClaim`), the roles from `roles`.
 *
 * @example
 * ```ts
 * const gateway = createGateway({ runtime, storage, tools, authenticate: createJwtAuthenticator({ jwksUrl: 'https://id.example.com/.well-known/jwks.json', audience: 'minara' }) });
 * ```
 */
export function createJwtAuthenticator(options: JwtAuthenticatorOptions): GatewayAuthenticate {
  const { secret, jwksUrl, issuer, audience, userClaim = 'sub', rolesClaim = 'roles', scopeClaim = 'scope', clockToleranceSeconds = 5 } = options;
  if ((secret === undefined) === (jwksUrl === undefined)) {
    throw new MinaraError('CONFIG_INVALID', 'createJwtAuthenticator: give exactly one of "secret" (HS256) and "jwksUrl".');
  }
  // jose loads with the first token checked, not with the gateway (~60 ms of `minara serve`'s start).
  let key: Uint8Array | URL;
  let remote: ReturnType<typeof createRemoteJWKSet> | undefined;
  let algorithms: string[] | undefined;
  if (secret !== undefined) {
    const bytes = typeof secret === 'string' ? new TextEncoder().encode(secret) : secret;
    if (bytes.length < 32) throw new MinaraError('CONFIG_INVALID', 'createJwtAuthenticator: "secret" must be at least 32 bytes.');
    key = bytes;
    algorithms = ['HS256', 'HS384', 'HS512'];
  } else {
    let url: URL;
    try {
      url = new URL(String(jwksUrl));
    } catch {
      throw new MinaraError('CONFIG_INVALID', 'createJwtAuthenticator: "jwksUrl" must be an absolute URL.');
    }
    // The keys decide who every token is: fetched over plain http, anyone on the path could swap them and mint any
    // user. Only a loopback host (a sidecar on this machine, a test) may serve them without TLS.
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname))) {
      throw new MinaraError('CONFIG_INVALID', `createJwtAuthenticator: "jwksUrl" must use https: (plain http only on a loopback host such as 127.0.0.1 or localhost), got ${url.protocol}//${url.host}.`);
    }
    key = url;
  }
  if (audience === undefined) {
    throw new MinaraError(
      'CONFIG_INVALID',
      'createJwtAuthenticator: "audience" is required (the aud your identity provider puts in tokens for this gateway, e.g. "minara"; GATEWAY_JWT_AUDIENCE), so a token minted for another service cannot open it. To accept any audience, pass audience: false (GATEWAY_JWT_ANY_AUDIENCE=1).',
    );
  }
  if (audience !== false && (typeof audience === 'string' ? audience.trim() === '' : !Array.isArray(audience) || audience.length === 0 || audience.some((a) => typeof a !== 'string' || a.trim() === ''))) {
    throw new MinaraError('CONFIG_INVALID', 'createJwtAuthenticator: "audience" must be a non-empty string, a non-empty list of them, or false.');
  }
  if (typeof clockToleranceSeconds !== 'number' || !Number.isInteger(clockToleranceSeconds) || clockToleranceSeconds < 0 || clockToleranceSeconds > 60) {
    throw new MinaraError('CONFIG_INVALID', `createJwtAuthenticator: "clockToleranceSeconds" must be an integer from 0 to 60 (an expired token passes for that long), got ${String(clockToleranceSeconds)}.`);
  }
  return async (request) => {
    const token = parseBearer(request.headers.get('authorization'));
    if (token === undefined) return null;
    const verifyOptions = {
      ...(issuer ? { issuer } : {}),
      ...(audience !== false ? { audience: typeof audience === 'string' ? audience : [...audience] } : {}),
      ...(algorithms ? { algorithms } : {}),
      clockTolerance: clockToleranceSeconds,
    };
    const jose = await import('jose');
    const { payload } = key instanceof Uint8Array ? await jose.jwtVerify(token, key, verifyOptions) : await jose.jwtVerify(token, (remote ??= jose.createRemoteJWKSet(key)), verifyOptions);
    const userId = payload[userClaim];
    if (typeof userId !== 'string' || !USER_ID.test(userId)) return null;
    const raw = payload[rolesClaim];
    const quota = quotaFromClaim(payload['minara_quota']);
    return { userId, roles: stringList(raw), scopes: stringList(payload[scopeClaim] ?? (scopeClaim === 'scope' ? payload['scp'] : undefined)), ...(quota ? { quota } : {}) };
  };
}

/** A claim that is an array of strings or one space-separated string, as a list. */
function stringList(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw.filter((r): r is string => typeof r === 'string');
  return typeof raw === 'string' ? raw.split(/\s+/).filter(Boolean) : [];
}
