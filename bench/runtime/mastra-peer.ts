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

const CORE = join(import.meta.dirname, '..', 'peers', 'node_modules', '@mastra', 'core');

/** One Mastra agent wired like our runtime's turn; `turn()` runs one `Agent.stream` and drains it. */
export interface MastraPeer {
  readonly version: string;
  turn(message: string): Promise<void>;
}

interface MastraStream {
  readonly fullStream: AsyncIterable<unknown>;
}
interface MastraAgent {
  stream(message: string, options: { maxSteps: number }): Promise<MastraStream>;
}

/** Load Mastra from bench/peers; returns the reason instead when it is not installed or does not start. */
export async function loadMastraPeer(options: {
  model: ScriptedModel;
  instructions: readonly SystemModelMessage[];
  tool: { name: string; description: string; inputSchema: z.ZodType; execute: (input: never) => unknown };
}): Promise<MastraPeer | string> {
  const agentEntry = join(CORE, 'dist', 'agent', 'index.js');
  if (!existsSync(agentEntry)) return `@mastra/core is not installed (run \`npm install --legacy-peer-deps --no-audit --no-fund\` in bench/peers; ${agentEntry} missing)`;
  try {
    const { Agent } = (await import(pathToFileURL(agentEntry).href)) as { Agent: new (config: unknown) => MastraAgent };
    const { createTool } = (await import(pathToFileURL(join(CORE, 'dist', 'tools', 'index.js')).href)) as { createTool: (config: unknown) => unknown };
    const { version } = JSON.parse(readFileSync(join(CORE, 'package.json'), 'utf8')) as { version: string };
    const t = options.tool;
    const agent = new Agent({
      id: 'bench',
      name: 'bench',
      instructions: [...options.instructions],
      model: options.model,
      tools: { [t.name]: createTool({ id: t.name, description: t.description, inputSchema: t.inputSchema, execute: async (input: never) => t.execute(input) }) },
    });
    return {
      version,
      async turn(message) {
        const out = await agent.stream(message, { maxSteps: 12 });
        for await (const _ of out.fullStream) {
          // drain
        }
      },
    };
  } catch (error) {
    return `@mastra/core did not start: ${error instanceof Error ? error.message : String(error)}`;
  }
}
