/**
 * The Minara HTTP gateway as a Node server, with the web app (examples/web, built into dist/web by `npm run build`).
 *
 *   npx tsx examples/gateway/server.ts            # then open http://127.0.0.1:8080/
 *
 * Environment: GATEWAY_PORT (8080), GATEWAY_HOST (127.0.0.1), GATEWAY_AUTH_TOKEN (required off loopback),
 * MINARA_MODEL + a provider key for a real model (without one a scripted demo model answers),
 * MINARA_DB (SQLite file), MINARA_WORKSPACE (workspace directory).
 *
 * Only the public API is used: `@minara/agent`, `@minara/agent/sqlite`, `@minara/agent/gateway`, and
 * `@minara/agent/testing` for the offline demo model.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { LanguageModel } from 'ai';
import { z } from 'zod';
import {
  createAgentRuntime,
  createConsoleLogger,
  createMemoryStore,
  createToolRegistry,
  createWorkspace,
  defineTool,
  type MemoryStore,
  modelConfigStatus,
  PermissionTier,
  resolveModel,
  type Storage,
} from '@minara/agent';
import { createGateway, gatewayEnv, serveGateway, type ServedGateway } from '@minara/agent/gateway';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createScriptedModel, type ScriptedCall, type ScriptedStep } from '@minara/agent/testing';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Two demo tools: a read-only quote and a swap that needs the user's approval. */
function demoTools(storage: Storage) {
  return createToolRegistry({
    storage,
    tools: [
      defineTool({
        name: 'get_price', toolSet: 'read', description: 'Spot price of a token in USD', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({ symbol: z.string() }),
        execute: ({ symbol }) => ({ symbol: symbol.toUpperCase(), priceUsd: symbol.toUpperCase() === 'BTC' ? 97_000 : 3_400 }),
      }),
      defineTool({
        name: 'swap_tokens', toolSet: 'trade', description: 'Swap tokens (paper trading)', permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
        inputSchema: z.object({ from: z.string(), to: z.string(), amountUsd: z.number().positive() }),
        orderFacts: ({ to, amountUsd }) => ({ notionalUsd: amountUsd, asset: to, side: 'swap' }),
        preview: ({ from, to, amountUsd }) => ({ preview: true, from, to, amountUsd, feeUsd: 0.5 }),
        execute: ({ from, to, amountUsd }) => ({ filled: true, from, to, amountUsd, paper: true }),
      }),
    ],
  });
}

/**
 * An offline model for the demo: "swap …" asks to swap (an approval), "price …" quotes, anything else is
 * echoed. After a tool result it summarises the result. It never runs out of steps.
 */
export function createDemoModel(options: { chunkDelayMs?: number } = {}): LanguageModel {
  const step = (call: ScriptedCall): ScriptedStep => {
    model.push(step);
    const last = call.prompt.at(-1);
    if (last?.role === 'tool') {
      const result = JSON.stringify(last.content.map((p) => ('output' in p ? p.output : p)));
      return { text: `Here is what happened: ${result.slice(0, 400)}` };
    }
    const userText = [...call.prompt].reverse().find((m) => m.role === 'user');
    const text = userText ? (typeof userText.content === 'string' ? userText.content : userText.content.map((p) => ('text' in p ? p.text : '')).join(' ')) : '';
    if (/\bswap\b/i.test(text)) return { toolCalls: [{ toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: Number(/\d+(?:\.\d+)?/.exec(text)?.[0] ?? 50), confirm: true } }] };
    if (/\bprice\b/i.test(text)) return { toolCalls: [{ toolName: 'get_price', input: { symbol: /\beth\b/i.test(text) ? 'ETH' : 'BTC' } }] };
    return { text: `(demo model) You said: "${text.slice(0, 200)}". Try "price of BTC" or "swap 50 USDC to ETH".` };
  };
  const model = createScriptedModel([step], options);
  return model;
}

/**
 * Build the stack and serve it. Returns the served gateway (call `close()` to stop) and, without a token, the
 * one-time login URL: opening it sets the cookie that lets that browser decide approvals (print it only where
 * the person who started the server sees it).
 */
export async function startServer(options: { port?: number; host?: string; env?: NodeJS.ProcessEnv; model?: LanguageModel } = {}): Promise<ServedGateway & { readonly loginUrl: string | undefined }> {
  const env = options.env ?? process.env;
  const settings = gatewayEnv(env);
  const logger = createConsoleLogger({ level: 'info' });
  const storage = createSqliteStorage({ path: env['MINARA_DB'] ?? path.join(tmpdir(), 'minara-gateway-example', 'minara.db') });
  const tools = demoTools(storage);
  const workspace = createWorkspace({ dir: env['MINARA_WORKSPACE'] ?? path.join(tmpdir(), 'minara-gateway-example', 'workspace') });
  await workspace.seed();
  const stores = new Map<string, MemoryStore>();
  const memoryFor = (userId: string): MemoryStore => {
    let store = stores.get(userId);
    if (!store) stores.set(userId, (store = createMemoryStore({ storage, scope: { userId } })));
    return store;
  };
  const model = options.model ?? (modelConfigStatus({ env }).configured ? await resolveModel({ env }) : createDemoModel({ chunkDelayMs: 15 }));
  const runtime = createAgentRuntime({ model, tools, storage, workspace, memory: (scope) => memoryFor(scope.userId), surface: 'gateway', logger });
  // The web app (React on useChat) is served from the same origin when it is built.
  const webDir = path.join(here, '..', '..', 'dist', 'web');
  const web = existsSync(path.join(webDir, 'index.html')) ? { dir: webDir } : undefined;
  if (!web) logger.warn('examples/gateway: no web app at dist/web; run `npm run build` to build it');
  const gateway = createGateway({ runtime, storage, tools, memoryFor, workspace, authToken: settings.authToken, logger, web });

  const served = await serveGateway({ gateway, port: options.port ?? settings.port, host: options.host ?? settings.host });
  return {
    ...served,
    // Without a token, deciding approvals needs the cookie this one-time link sets and the proof it hands the page.
    loginUrl: ((login) => (login === undefined ? undefined : `${served.url}${login}`))(gateway.localLoginPath()),
    async close() {
      await served.close();
      for (const s of stores.values()) await s.close();
      workspace.close();
      await storage.close();
    },
  };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const served = await startServer();
  console.log(`Minara gateway on ${served.url}  (open ${served.loginUrl ?? `${served.url}/`} for the chat page${served.loginUrl ? '; the link works once' : ''})`);
  const stop = () => void served.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
