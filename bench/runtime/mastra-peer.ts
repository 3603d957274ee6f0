/**
 * Mastra's `Agent.stream` as the peer the runtime bench compares against, loaded from bench/peers (its own
 * package.json and node_modules, installed with `npm install --legacy-peer-deps`). It gets the same scripted
 * model, the same tool (same zod schema and handler), the same system blocks and the same 3-step script as our
 * runtime and the plain `streamText`, so the three turns differ only in what the framework adds.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { SystemModelMessage } from 'ai';
import type { z } from 'zod';
import type { ScriptedModel } from '../../src/testing/index';

const MASTRA = join(import.meta.dirname, '..', 'peers', 'node_modules', '@mastra');
const CORE = join(MASTRA, 'core');

/** One Mastra agent wired like our runtime's turn; `turn()` runs one `Agent.stream` and drains it. */
export interface MastraPeer {
  readonly version: string;
  /** One turn; with storage, on its own thread `thread` (each bench turn starts a new one, as ours starts a new session). */
  turn(message: string, thread?: string): Promise<void>;
}

interface MastraStream {
  readonly fullStream: AsyncIterable<unknown>;
}
interface MastraAgent {
  stream(message: string, options: { maxSteps: number; memory?: { thread: string; resource: string } }): Promise<MastraStream>;
}

/**
 * Mastra's own persistence, as its docs set it up: `Memory` (message history, the last 10 messages) on `LibSQLStore`
 * (its SQLite storage, a local file). The agent then stores each turn's messages on its thread and reads the history
 * back, the work our SQLite turn's transcript does (ours also writes audit rows, the call journal and usage).
 */
async function mastraMemory(url: string): Promise<unknown> {
  const memoryEntry = join(MASTRA, 'memory', 'dist', 'index.js');
  const libsqlEntry = join(MASTRA, 'libsql', 'dist', 'index.js');
  for (const entry of [memoryEntry, libsqlEntry]) if (!existsSync(entry)) throw new Error(`${entry} missing (run \`npm install --legacy-peer-deps --no-audit --no-fund\` in bench/peers)`);
  const { Memory } = (await import(pathToFileURL(memoryEntry).href)) as { Memory: new (config: unknown) => unknown };
  const { LibSQLStore } = (await import(pathToFileURL(libsqlEntry).href)) as { LibSQLStore: new (config: unknown) => unknown };
  return new Memory({ storage: new LibSQLStore({ id: 'bench', url }), options: { lastMessages: 10 } });
}

/**
 * Load Mastra from bench/peers; returns the reason instead when it is not installed or does not start. With
 * `storageUrl` (a `file:` URL), the agent has Mastra's own memory on LibSQL ({@link mastraMemory}).
 */
export async function loadMastraPeer(options: {
  model: ScriptedModel;
  instructions: readonly SystemModelMessage[];
  tool: { name: string; description: string; inputSchema: z.ZodType; execute: (input: never) => unknown };
  storageUrl?: string;
}): Promise<MastraPeer | string> {
  const agentEntry = join(CORE, 'dist', 'agent', 'index.js');
  if (!existsSync(agentEntry)) return `@mastra/core is not installed (run \`npm install --legacy-peer-deps --no-audit --no-fund\` in bench/peers; ${agentEntry} missing)`;
  try {
    const { Agent } = (await import(pathToFileURL(agentEntry).href)) as { Agent: new (config: unknown) => MastraAgent };
    const { createTool } = (await import(pathToFileURL(join(CORE, 'dist', 'tools', 'index.js')).href)) as { createTool: (config: unknown) => unknown };
    const { version } = JSON.parse(readFileSync(join(CORE, 'package.json'), 'utf8')) as { version: string };
    const t = options.tool;
    const memory = options.storageUrl === undefined ? undefined : await mastraMemory(options.storageUrl);
    const agent = new Agent({
      id: 'bench',
      name: 'bench',
      instructions: [...options.instructions],
      model: options.model,
      tools: { [t.name]: createTool({ id: t.name, description: t.description, inputSchema: t.inputSchema, execute: async (input: never) => t.execute(input) }) },
      ...(memory === undefined ? {} : { memory }),
    });
    return {
      version,
      async turn(message, thread) {
        const out = await agent.stream(message, { maxSteps: 12, ...(memory === undefined ? {} : { memory: { thread: thread ?? 'bench', resource: 'bench' } }) });
        for await (const _ of out.fullStream) {
          // drain
        }
      },
    };
  } catch (error) {
    return `@mastra/${options.storageUrl === undefined ? 'core' : 'core with @mastra/memory on @mastra/libsql'} did not start: ${error instanceof Error ? error.message : String(error)}`;
  }
}
