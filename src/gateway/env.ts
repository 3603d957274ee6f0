import { MinaraError } from '../errors/minara-error';

/** Gateway settings read from the environment. */
export interface GatewayEnv {
  /** `GATEWAY_PORT`. @default 8080 */
  readonly port: number;
  /** `GATEWAY_HOST`. @default '127.0.0.1' */
  readonly host: string;
  /** `GATEWAY_AUTH_TOKEN`, when set and non-empty. */
  readonly authToken?: string | undefined;
}

/**
 * Read `GATEWAY_PORT` (default 8080), `GATEWAY_HOST` (default 127.0.0.1) and `GATEWAY_AUTH_TOKEN`.
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
  return { port, host, ...(token ? { authToken: token } : {}) };
}
