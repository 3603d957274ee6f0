/**
 * `minara serve`: the HTTP gateway over the same app the REPL uses. Refuses a non-loopback host without
 * `GATEWAY_AUTH_TOKEN`; Ctrl-C (or SIGTERM) lets running turns finish, then closes.
 */
import type { MinaraApp } from '@minara/agent';
import type { GatewayOptions } from '@minara/agent/gateway';
import type { CliOptions } from './app';

export interface ServeOptions {
  /** @default GATEWAY_PORT or 8080 */
  readonly port?: number | undefined;
  /** @default GATEWAY_HOST or 127.0.0.1 */
  readonly host?: string | undefined;
  readonly write?: ((s: string) => void) | undefined;
  /** Resolves when the server should stop. @default the first SIGINT or SIGTERM */
  readonly until?: Promise<unknown> | undefined;
}

/** The gateway over an app, configured from the environment (token or JWT, trusted user header). */
export async function createAppGateway(app: MinaraApp, extra: Pick<GatewayOptions, 'mcp'> = {}) {
  const { createGateway, createJwtAuthenticator, gatewayEnv } = await import('@minara/agent/gateway');
  const env = gatewayEnv();
  const gateway = createGateway({
    runtime: app.runtime,
    storage: app.storage,
    tools: app.tools,
    memoryFor: app.memoryFor,
    ...(app.workspace ? { workspace: app.workspace } : {}),
    ...(env.authToken ? { authToken: env.authToken } : {}),
    ...(env.jwt ? { authenticate: createJwtAuthenticator(env.jwt) } : {}),
    trustUserHeader: env.trustUserHeader,
    logger: app.logger,
    ...extra,
  });
  const auth = env.jwt ? ' (per-user tokens required)' : env.authToken ? ' (bearer token required)' : '';
  return { gateway, env, auth };
}

export async function runServe(cli: CliOptions, options: ServeOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const [{ buildApp }, { serveGateway }] = await Promise.all([import('./app'), import('@minara/agent/gateway')]);
  const app = await buildApp(cli, { surface: 'gateway' });
  try {
    const { gateway, env, auth } = await createAppGateway(app);
    const served = await serveGateway({ gateway, port: options.port ?? env.port, host: options.host ?? env.host });
    write(`minara gateway listening on ${served.url}${auth}\n`);
    if (!app.modelStatus.configured) write('No model is configured: chat turns will answer with how to configure one.\n');
    write('Press Ctrl-C to stop.\n');
    await (options.until ??
      new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      }));
    write('Stopping: waiting for running turns…\n');
    await served.close();
    return 0;
  } finally {
    await app.close();
  }
}
