/**
 * `minara mcp list` and `minara mcp serve`: the configured MCP servers, and the agent's own tools served to an
 * MCP host over stdio (default) or Streamable HTTP at `/mcp` behind the gateway's authentication.
 */
import type { CliOptions } from './app';

export interface McpCommandOptions {
  readonly http?: boolean | undefined;
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  readonly toolSets?: readonly string[] | undefined;
  readonly write?: ((s: string) => void) | undefined;
  readonly writeErr?: ((s: string) => void) | undefined;
  /** Resolves when the server should stop. @default stdin ends (stdio), or the first SIGINT or SIGTERM */
  readonly until?: Promise<unknown> | undefined;
  /** Streams of a stdio session. @default process.stdin / process.stdout */
  readonly stdin?: NodeJS.ReadableStream | undefined;
  readonly stdout?: NodeJS.WritableStream | undefined;
}

const USAGE = 'usage: minara mcp list | minara mcp serve [--tool-sets a,b] [--http [--port N] [--host H]]';

function signalled(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

export async function runMcpCommand(cli: CliOptions, positionals: readonly string[], options: McpCommandOptions = {}): Promise<number> {
  const writeErr = options.writeErr ?? ((s: string) => process.stderr.write(s));
  const [verb, ...rest] = positionals;
  if ((verb !== 'list' && verb !== 'serve') || rest.length > 0) {
    writeErr(`minara: ${USAGE}\n`);
    return 2;
  }
  if (verb === 'list') {
    if (options.http || options.toolSets || options.port !== undefined || options.host !== undefined) {
      writeErr('minara: "mcp list" takes no --http, --tool-sets, --port or --host\n');
      return 2;
    }
    const [{ buildApp }, { formatMcpStatus }] = await Promise.all([import('./app'), import('./slash-commands')]);
    const app = await buildApp(cli);
    try {
      (options.write ?? ((s: string) => process.stdout.write(s)))(`${formatMcpStatus(app)}\n`);
    } finally {
      await app.close();
    }
    return 0;
  }
  if (!options.http && (options.port !== undefined || options.host !== undefined)) {
    writeErr('minara: --port and --host need --http (stdio is the default transport)\n');
    return 2;
  }
  const [{ buildApp }, { createMcpToolServer }] = await Promise.all([import('./app'), import('@minara/agent/mcp')]);
  // Other MCP servers' tools are not re-served, so their processes are not started here.
  const app = await buildApp(cli, { surface: 'mcp', mcp: false });
  try {
    const unknown = (options.toolSets ?? []).filter((s) => !app.tools.toolSets().some((t) => t.name === s));
    if (unknown.length > 0) {
      writeErr(`minara: --tool-sets: unknown tool set(s) ${unknown.join(', ')}; known: ${app.tools.toolSets().map((t) => t.name).join(', ')}\n`);
      return 2;
    }
    const server = createMcpToolServer({ tools: app.tools, toolSets: options.toolSets, logger: app.logger });
    const served = server.listTools().length;
    if (!options.http) {
      // stdout carries the protocol: everything for people goes to stderr.
      const stdin = options.stdin ?? process.stdin;
      await server.connectStdio({ stdin, stdout: options.stdout ?? process.stdout });
      writeErr(`minara: serving ${served} tools over MCP stdio (approve calls with "minara approvals approve <id>")\n`);
      await Promise.race([
        options.until ?? signalled(),
        new Promise<void>((resolve) => {
          stdin.once('end', () => resolve());
          stdin.once('close', () => resolve());
        }),
      ]);
      await server.close();
      return 0;
    }
    const [{ serveGateway }, { createAppGateway }] = await Promise.all([import('@minara/agent/gateway'), import('./serve')]);
    const { gateway, env, auth } = await createAppGateway(app, { mcp: server });
    const listening = await serveGateway({ gateway, port: options.port ?? env.port, host: options.host ?? env.host });
    const write = options.write ?? ((s: string) => process.stdout.write(s));
    write(`minara MCP server: ${served} tools at ${listening.url}/mcp${auth}\nPress Ctrl-C to stop.\n`);
    await (options.until ?? signalled());
    await server.close();
    await listening.close();
    return 0;
  } finally {
    await app.close();
  }
}
