/**
 * `minara serve`: the HTTP gateway over the same app the REPL uses. Refuses a non-loopback host without
 * `GATEWAY_AUTH_TOKEN`; Ctrl-C (or SIGTERM) lets running turns finish, then closes.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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
  /** Serve the web app at `/` when it is built. @default true */
  readonly web?: boolean | undefined;
  /** Start the background runner (heartbeat, schedule, maintenance). @default true */
  readonly background?: boolean | undefined;
  /** `--open`: open the one-time login URL (or the app's URL) in the default browser. @default false */
  readonly open?: boolean | undefined;
  /** How a URL is opened in a browser (tests replace it). @default {@link openInBrowser} */
  readonly openUrl?: ((url: string) => void) | undefined;
}

/**
 * Open a URL in the default browser with the platform's own launcher (`open` on macOS, `xdg-open` elsewhere,
 * `rundll32 url.dll` on Windows, which needs no shell quoting), detached. No dependency: three commands, the URL
 * passed as one argument, never through a shell. A missing launcher is reported, never fatal.
 */
export function openInBrowser(url: string, write: (s: string) => void = (s) => process.stderr.write(s)): void {
  const [command, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['rundll32', ['url.dll,FileProtocolHandler', url]] : ['xdg-open', [url]];
  void import('node:child_process').then(({ spawn }) => {
    const child = spawn(command, args as string[], { stdio: 'ignore', detached: true });
    child.once('error', () => write(`Could not start ${command} to open the browser; open the link above yourself.\n`));
    child.unref();
  });
}

/** The built web app shipped in the package (`dist/web`), when this install has it. */
export function builtWebDir(): string | undefined {
  const dir = fileURLToPath(new URL('../dist/web/', import.meta.url));
  return existsSync(`${dir}index.html`) ? dir : undefined;
}

/**
 * Signed webhooks from the environment: `MINARA_WEBHOOK_SECRET_<NAME>=<secret>` serves `/v1/signals/webhook/<name>`;
 * `MINARA_WEBHOOK_WORKFLOW_<NAME>=<workflow>` makes it run that workflow instead of a model turn.
 */
export function webhooksFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): Record<string, { secret: string; workflow?: string }> {
  const out: Record<string, { secret: string; workflow?: string }> = {};
  for (const [key, value] of Object.entries(env)) {
    const m = /^MINARA_WEBHOOK_SECRET_([A-Z0-9_]+)$/.exec(key);
    if (!m || !value) continue;
    const workflow = env[`MINARA_WEBHOOK_WORKFLOW_${m[1]}`]?.trim();
    out[(m[1] ?? '').toLowerCase().replace(/_/g, '-')] = { secret: value, ...(workflow ? { workflow } : {}) };
  }
  return out;
}

/** The gateway over an app, configured from the environment (token or JWT, trusted user header, webhooks). */
export async function createAppGateway(app: MinaraApp, extra: Pick<GatewayOptions, 'mcp' | 'web'> = {}) {
  const { createGateway, createJwtAuthenticator, gatewayEnv } = await import('@minara/agent/gateway');
  const env = gatewayEnv();
  const gateway = createGateway({
    runtime: app.runtime,
    storage: app.storage,
    tools: app.tools,
    ...(app.auditIntegrity ? { auditIntegrity: app.auditIntegrity } : {}),
    memoryFor: app.memoryFor,
    learningFor: (userId: string) => app.learningFor(userId),
    ...(app.workspace ? { workspace: app.workspace } : {}),
    ...(app.artifacts ? { artifacts: app.artifacts } : {}),
    ...(app.files ? { files: app.files } : {}),
    ...(env.backtestRunsDir ? { backtestRuns: { dir: env.backtestRunsDir } } : {}),
    ...(env.authToken ? { authToken: env.authToken } : {}),
    ...(env.jwt ? { authenticate: createJwtAuthenticator(env.jwt) } : {}),
    trustUserHeader: env.trustUserHeader,
    ...(env.mcpToken ? { mcpToken: env.mcpToken } : {}),
    allowedHosts: env.allowedHosts,
    allowedOrigins: env.allowedOrigins,
    logger: app.logger,
    modelStatus: app.modelStatus,
    bus: app.bus,
    tradingMode: app.finance?.tradingMode ?? null,
    background: app.background,
    workflows: app.workflows,
    webhooks: webhooksFromEnv(),
    admitAutonomousTurn: (context) => app.admitAutonomousTurn(context),
    reserveAutonomousTurn: (context) => app.reserveAutonomousTurn(context),
    quotas: env.quotas,
    ...extra,
  });
  const auth = env.jwt ? ' (per-user tokens required)' : env.authToken ? ` (bearer token required${env.mcpToken ? '; MCP hosts use GATEWAY_MCP_TOKEN' : ''})` : '';
  return { gateway, env, auth };
}

/** The start line naming the resolved trading mode (what the finance pack actually uses, after options and env). */
export function tradingModeLine(app: Pick<MinaraApp, 'finance'>): string {
  const mode = app.finance?.tradingMode;
  if (mode === undefined) return 'Trading: off (no finance pack)';
  return `Trading mode: ${mode}${mode === 'live' ? ' (orders reach the venue)' : mode === 'shadow' ? ' (live market data, orders fill in the shadow book; nothing reaches the venue)' : ' (paper: simulated fills)'}`;
}

export async function runServe(cli: CliOptions, options: ServeOptions = {}): Promise<number> {
  const write = options.write ?? ((s: string) => process.stdout.write(s));
  // Listen for Ctrl-C before anything starts, so a signal during start-up still stops cleanly (exit 0).
  const stop =
    options.until ??
    new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
  const [{ buildApp }, { serveGateway }] = await Promise.all([import('./app'), import('@minara/agent/gateway')]);
  const app = await buildApp(cli, { surface: 'gateway' });
  try {
    const webDir = options.web === false ? undefined : builtWebDir();
    const { gateway, env, auth } = await createAppGateway(app, webDir ? { web: { dir: webDir } } : {});
    const served = await serveGateway({ gateway, port: options.port ?? env.port, host: options.host ?? env.host });
    write(`minara gateway listening on ${served.url}${auth}\n`);
    write(`${tradingModeLine(app)}\n`);
    // Without authentication, deciding (approvals, grants, releasing a stop) needs the cookie this one-time link
    // sets: printed here, to the terminal of whoever started the server, never served by the page.
    const login = gateway.localLoginPath();
    const openUrl = login !== undefined ? `${served.url}${login}` : `${served.url}/`;
    if (login !== undefined) {
      write(`${webDir ? 'Open the web app' : 'Sign this browser in'} (the link works once; it lets that browser approve): ${openUrl}\n`);
    } else if (webDir) write(`Open ${served.url}/ in a browser for the web app.\n`);
    if (options.open) (options.openUrl ?? ((u: string) => openInBrowser(u)))(openUrl);
    if (options.background !== false) {
      // Read HEARTBEAT.md's ## Schedule first, so the start line lists the user's jobs too.
      await app.background.syncSchedule();
      app.background.start();
      write(`${app.background.describe()}\n`);
    }
    if (!app.modelStatus.configured) write('No model is configured: chat turns will answer with how to configure one.\n');
    write('Press Ctrl-C to stop.\n');
    await stop;
    write('Stopping: waiting for running turns…\n');
    await served.close();
    return 0;
  } finally {
    await app.close();
  }
}
