/**
 * `minara serve`: the HTTP gateway over the same app the REPL uses. Refuses a non-loopback host without
 * `GATEWAY_AUTH_TOKEN`; Ctrl-C (or SIGTERM) lets running turns finish, then closes.
 */
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

export async function runServe(cli: CliOptions, options: ServeOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  const [{ buildApp }, { createGateway, createJwtAuthenticator, gatewayEnv, serveGateway }] = await Promise.all([import('./app'), import('@minara/agent/gateway')]);
  const app = await buildApp(cli, { surface: 'gateway' });
  try {
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
    });
    const served = await serveGateway({ gateway, port: options.port ?? env.port, host: options.host ?? env.host });
    const auth = env.jwt ? ' (per-user tokens required)' : env.authToken ? ' (bearer token required)' : '';
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
