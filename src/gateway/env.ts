import { MinaraError } from '../errors/minara-error';
import type { GatewayQuota, JwtAuthenticatorOptions } from './auth';
import { checkAllowedHosts, checkAllowedOrigins } from './perimeter';

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
  /** `GATEWAY_MCP_TOKEN`: the bearer token to hand an MCP host (reaches `/mcp` only, never decides approvals). */
  readonly mcpToken?: string | undefined;
  /** `GATEWAY_ALLOWED_HOSTS` (comma-separated): public names the gateway answers to besides loopback and IP addresses. */
  readonly allowedHosts: readonly string[];
  /** `GATEWAY_ALLOWED_ORIGINS` (comma-separated): other origins (your own front end) that may send state-changing requests. */
  readonly allowedOrigins: readonly string[];
  /** `GATEWAY_QUOTA_RPM` and `GATEWAY_QUOTA_USD_PER_DAY`: default per-user limits on user turns (`quotas` of createGateway). */
  readonly quotas: GatewayQuota;
  /** `GATEWAY_BACKTEST_RUNS_DIR`: agent backtest run folders, one sub-folder per user (`backtestRuns.dir` of createGateway). */
  readonly backtestRunsDir?: string | undefined;
}

const list = (raw: string | undefined): string[] => (raw ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');

/**
 * Read `GATEWAY_PORT` (default 8080), `GATEWAY_HOST` (default 127.0.0.1), `GATEWAY_AUTH_TOKEN`, the per-user
 * JWT settings (`GATEWAY_JWT_SECRET` or `GATEWAY_JWKS_URL`, `GATEWAY_JWT_ISSUER`, `GATEWAY_JWT_AUDIENCE`) and
 * `GATEWAY_TRUST_USER_HEADER`, `GATEWAY_MCP_TOKEN`, `GATEWAY_ALLOWED_HOSTS`, `GATEWAY_ALLOWED_ORIGINS` and
 * `GATEWAY_BACKTEST_RUNS_DIR`.
 * A malformed value is a `CONFIG_INVALID` naming the variable; a JWT setup needs `GATEWAY_JWT_AUDIENCE` (or the
 * explicit opt-out `GATEWAY_JWT_ANY_AUDIENCE=1`).
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
  const anyAudience = env['GATEWAY_JWT_ANY_AUDIENCE']?.trim();
  if ((secret || jwksUrl) && !audience && anyAudience !== '1' && anyAudience !== 'true') {
    throw new MinaraError(
      'CONFIG_INVALID',
      'GATEWAY_JWT_AUDIENCE: required with GATEWAY_JWT_SECRET or GATEWAY_JWKS_URL (the aud your identity provider puts in tokens for this gateway), so a token minted for another service cannot open it; set GATEWAY_JWT_ANY_AUDIENCE=1 to accept any audience.',
    );
  }
  const jwt: JwtAuthenticatorOptions | undefined = secret || jwksUrl
    ? { ...(secret ? { secret } : { jwksUrl }), ...(issuer ? { issuer } : {}), audience: audience ? audience : false }
    : undefined;
  const trust = env['GATEWAY_TRUST_USER_HEADER']?.trim();
  const mcpToken = env['GATEWAY_MCP_TOKEN']?.trim();
  if (mcpToken && !token) throw new MinaraError('CONFIG_INVALID', 'GATEWAY_MCP_TOKEN: needs GATEWAY_AUTH_TOKEN too (the person\'s token); with per-user JWTs, mint the MCP host a token without the approvals:decide scope instead.');
  const quota = (name: string, integer: boolean): number | undefined => {
    const raw = env[name]?.trim();
    if (raw === undefined || raw === '') return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0 || (integer && !Number.isSafeInteger(n))) {
      throw new MinaraError('CONFIG_INVALID', `${name}: expected ${integer ? 'an integer' : 'a number of USD'} ≥ 0, got ${JSON.stringify(raw)}.`);
    }
    return n;
  };
  const rpm = quota('GATEWAY_QUOTA_RPM', true);
  const usdPerDay = quota('GATEWAY_QUOTA_USD_PER_DAY', false);
  return {
    quotas: { ...(rpm !== undefined ? { requestsPerMinute: rpm } : {}), ...(usdPerDay !== undefined ? { usdPerDay } : {}) },
    port, host, ...(token ? { authToken: token } : {}), ...(jwt ? { jwt } : {}), trustUserHeader: trust === '1' || trust === 'true',
    ...(mcpToken ? { mcpToken } : {}),
    allowedHosts: checkAllowedHosts(list(env['GATEWAY_ALLOWED_HOSTS']), 'GATEWAY_ALLOWED_HOSTS'),
    allowedOrigins: checkAllowedOrigins(list(env['GATEWAY_ALLOWED_ORIGINS']), 'GATEWAY_ALLOWED_ORIGINS'),
    ...(env['GATEWAY_BACKTEST_RUNS_DIR']?.trim() ? { backtestRunsDir: env['GATEWAY_BACKTEST_RUNS_DIR'].trim() } : {}),
  };
}
