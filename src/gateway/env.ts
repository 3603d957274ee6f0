import { MinaraError } from '../errors/minara-error';
import type { JwtAuthenticatorOptions } from './auth';

/** Gateway settings read from the environment. */
export interface GatewayEnv {
  /** `GATEWAY_PORT`. @default 8080 */
  readonly port: number;
  /** `GATEWAY_HOST`. @default '127.0.0.1' */
  readonly host: string;
  /** `GATEWAY_AUTH_TOKEN`, when set and non-empty. */
  readonly authToken?: string | undefined;
  /**
   * Per-user JWT authentication from `GATEWAY_JWT_SECRET` or `GATEWAY_JWKS_URL` (with optional
   * `GATEWAY_JWT_ISSUER`, `GATEWAY_JWT_AUDIENCE`), ready for `createJwtAuthenticator`.
   */
  readonly jwt?: JwtAuthenticatorOptions | undefined;
  /** `GATEWAY_TRUST_USER_HEADER=1`: a trusted proxy names the user in `x-minara-user`. */
  readonly trustUserHeader: boolean;
}

/**
 * Read `GATEWAY_PORT` (default 8080), `GATEWAY_HOST` (default 127.0.0.1), `GATEWAY_AUTH_TOKEN`, the per-user
 * JWT settings (`GATEWAY_JWT_SECRET` or `GATEWAY_JWKS_URL`, `GATEWAY_JWT_ISSUER`, `GATEWAY_JWT_AUDIENCE`) and
 * `GATEWAY_TRUST_USER_HEADER`.
 * A malformed port is a `CONFIG_INVALID` naming the variable.
 */
export function gatewayEnv(env: Readonly<Record<string, string | undefined>> = process.env): GatewayEnv {
  const rawPort = env['GATEWAY_PORT']?.trim();
  let port = 8080;
  if (rawPort !== undefined && rawPort !== '') {
    if (!/^\d{1,5}$/.test(rawPort) || Number(rawPort) > 65535) {
      throw new MinaraError('CONFIG_INVALID', `GATEWAY_PORT: expected a port number from 0 to 65535, got ${JSON.stringify(rawPort)}.`);
    }
    port = Number(rawPort);
  }
  const host = env['GATEWAY_HOST']?.trim() || '127.0.0.1';
  const token = env['GATEWAY_AUTH_TOKEN']?.trim();
  const secret = env['GATEWAY_JWT_SECRET']?.trim();
  const jwksUrl = env['GATEWAY_JWKS_URL']?.trim();
  if (secret && jwksUrl) throw new MinaraError('CONFIG_INVALID', 'GATEWAY_JWT_SECRET and GATEWAY_JWKS_URL: set one, not both.');
  if ((secret || jwksUrl) && token) throw new MinaraError('CONFIG_INVALID', 'GATEWAY_AUTH_TOKEN and GATEWAY_JWT_SECRET/GATEWAY_JWKS_URL: choose one shared token or per-user tokens, not both.');
  const issuer = env['GATEWAY_JWT_ISSUER']?.trim();
  const audience = env['GATEWAY_JWT_AUDIENCE']?.trim();
  const jwt: JwtAuthenticatorOptions | undefined = secret || jwksUrl
    ? { ...(secret ? { secret } : { jwksUrl }), ...(issuer ? { issuer } : {}), ...(audience ? { audience } : {}) }
    : undefined;
  const trust = env['GATEWAY_TRUST_USER_HEADER']?.trim();
  return { port, host, ...(token ? { authToken: token } : {}), ...(jwt ? { jwt } : {}), trustUserHeader: trust === '1' || trust === 'true' };
}
