import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { UIMessageChunk } from 'ai';
import { z } from 'zod';
import {
  createAgentRuntime,
  createMemoryStore,
  createToolRegistry,
  createWorkspace,
  defineTool,
  type MemoryStore,
  PermissionTier,
  silentLogger,
  type Storage,
} from '@minara/agent';
import { createGateway, type GatewayOptions, serveGateway, type ServedGateway } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel, type ScriptEntry, type ScriptedModelOptions } from '@minara/agent/testing';

export const TOKEN = 'test-token-0123456789abcdef';

export interface Harness {
  readonly url: string;
  readonly served: ServedGateway;
  readonly storage: Storage;
  readonly model: ReturnType<typeof createScriptedModel>;
  readonly ledger: string[];
  readonly gateway: ReturnType<typeof createGateway>;
  readonly tools: ReturnType<typeof createToolRegistry>;
  readonly memoryFor: (userId: string) => MemoryStore;
  readonly workspaceDir: string;
  close(): Promise<void>;
}

/** A real gateway on 127.0.0.1 (port 0) over the scripted model, in-memory storage, memory and a temp workspace. */
export async function startGateway(
  script: ScriptEntry[] = [],
  options: { model?: ScriptedModelOptions; gateway?: Partial<GatewayOptions>; withdraw?: boolean; registry?: Partial<Parameters<typeof createToolRegistry>[0]> } = {},
): Promise<Harness> {
  const ledger: string[] = [];
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({
    storage,
    ...options.registry,
    tools: [
      defineTool({
        name: 'get_price', toolSet: 'read', description: 'Spot price', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({ symbol: z.string() }),
        execute: ({ symbol }) => ({ symbol, priceUsd: 97_000 }),
      }),
      defineTool({
        name: 'swap_tokens', toolSet: 'trade', description: 'Swap tokens', permissionTier: PermissionTier.CONFIRM_ONCE, isFundMoving: true,
        inputSchema: z.object({ from: z.string(), to: z.string(), amountUsd: z.number().positive() }),
        orderFacts: ({ to, amountUsd }) => ({ notionalUsd: amountUsd, asset: to, side: 'swap' }),
        preview: ({ from, to, amountUsd }) => ({ preview: true, from, to, amountUsd }),
        execute: ({ from, to, amountUsd }) => {
          ledger.push(`swap:${from}->${to}:${amountUsd}`);
          return { filled: true, from, to, amountUsd };
        },
      }),
      // A MANUAL_ONLY withdrawal (only when asked: most tests list the registry's tools).
      ...(options.withdraw !== true ? [] : [defineTool({
        name: 'withdraw_funds', toolSet: 'transfer', description: 'Withdraw to an external address', permissionTier: PermissionTier.MANUAL_ONLY, isFundMoving: true,
        inputSchema: z.object({ asset: z.string(), amountUsd: z.number().positive(), address: z.string() }),
        orderFacts: ({ asset, amountUsd }) => ({ notionalUsd: amountUsd, asset, side: 'withdraw' }),
        preview: ({ asset, amountUsd, address }) => ({ preview: true, asset, amountUsd, address }),
        execute: ({ asset, amountUsd, address }) => {
          ledger.push(`withdraw:${asset}:${amountUsd}:${address}`);
          return { sent: true, asset, amountUsd, address };
        },
      })]),
    ],
  });
  const stores = new Map<string, MemoryStore>();
  const memoryFor = (userId: string) => {
    let s = stores.get(userId);
    if (!s) {
      s = createMemoryStore({ storage, scope: { userId }, ...(options.gateway?.bus ? { bus: options.gateway.bus } : {}) });
      stores.set(userId, s);
    }
    return s;
  };
  const workspaceDir = mkdtempSync(path.join(tmpdir(), 'minara-gw-'));
  const workspace = createWorkspace({ dir: workspaceDir, heartbeat: false });
  const model = createScriptedModel(script, options.model);
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger, memory: (scope) => memoryFor(scope.userId), surface: 'gateway', ...(options.gateway?.bus ? { bus: options.gateway.bus } : {}) });
  // These tests stand for a trusted proxy that names the tenant in x-minara-user (auth.test.ts covers the other modes).
  const gateway = createGateway({ runtime, storage, tools, memoryFor, workspace, logger: silentLogger, trustUserHeader: true, ...options.gateway });
  const served = await serveGateway({ gateway, port: 0 });
  return {
    url: served.url, served, storage, model, ledger, gateway, tools, memoryFor, workspaceDir,
    async close() {
      await served.close();
      for (const s of stores.values()) await s.close();
    },
  };
}

/** A `DefaultChatTransport`-shaped body with one user message. */
export function chatBody(id: string, text: string, extra: Record<string, unknown> = {}) {
  return { id, trigger: 'submit-message', messages: [{ id: `u-${text.length}`, role: 'user', parts: [{ type: 'text', text }] }], ...extra };
}

/** POST JSON as a person behind the harness's trusted proxy (who may answer approvals); pass headers to override. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-minara-scopes': 'approvals:decide', ...headers }, body: JSON.stringify(body) });
}

/** Split an SSE body into its `data:` payloads. */
export function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((f) => f.startsWith('data: '))
    .map((f) => f.slice(6));
}

/** Parse an SSE body into UI chunks; asserts it ends with `[DONE]`. */
export function sseChunks(text: string): UIMessageChunk[] {
  const data = sseData(text);
  if (data.at(-1) !== '[DONE]') throw new Error(`stream did not end with [DONE]: ${text.slice(-200)}`);
  return data.slice(0, -1).map((d) => JSON.parse(d) as UIMessageChunk);
}

export async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!(await check())) {
    if (Date.now() - t0 > timeoutMs) throw new Error('waitFor: timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
