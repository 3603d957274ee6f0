import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createAgentRuntime, createToolRegistry, silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';
import { financeTools, type Ledger } from './helpers';

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 5, text: 5, reasoning: 0 } };

/**
 * A model whose first stream sends two get_price calls and then breaks (a connection reset before the step
 * finishes); later calls answer in text and record the prompt they got.
 */
function breakingModel(prompts: Array<LanguageModelV4CallOptions['prompt']>): LanguageModelV4 {
  let calls = 0;
  return {
    specificationVersion: 'v4',
    provider: 'test',
    modelId: 'breaking',
    supportedUrls: {},
    async doGenerate() {
      throw new Error('streaming only');
    },
    async doStream(options) {
      prompts.push(options.prompt);
      const first = calls++ === 0;
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          async start(c) {
            c.enqueue({ type: 'stream-start', warnings: [] });
            if (first) {
              c.enqueue({ type: 'tool-call', toolCallId: 'k1', toolName: 'get_price', input: '{"symbol":"BTC"}' });
              c.enqueue({ type: 'tool-call', toolCallId: 'k2', toolName: 'get_price', input: '{"symbol":"ETH"}' });
              await new Promise((r) => setTimeout(r, 50));
              c.error(new Error('ECONNRESET: the provider closed the stream'));
              return;
            }
            c.enqueue({ type: 'text-start', id: 't' });
            c.enqueue({ type: 'text-delta', id: 't', delta: 'Done.' });
            c.enqueue({ type: 'text-end', id: 't' });
            c.enqueue({ type: 'finish', finishReason: { unified: 'stop', raw: undefined }, usage });
            c.close();
          },
        }),
      };
    },
  };
}

const promptText = (prompt: LanguageModelV4CallOptions['prompt']) => JSON.stringify(prompt);

describe('each executed tool call is persisted as it completes', () => {
  it('a stream that breaks before its step ends runs no tool; turns that end normally store each call once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'minara-journal-'));
    try {
      const storage = createSqliteStorage({ path: join(dir, 'a.db'), logger: silentLogger });
      const ledger: Ledger = { calls: [], sessions: [] };
      const tools = createToolRegistry({ tools: financeTools(ledger), storage });
      const prompts: Array<LanguageModelV4CallOptions['prompt']> = [];
      const runtime = createAgentRuntime({ model: breakingModel(prompts), tools, storage, logger: silentLogger });
      const first = await recordEvents(runtime.run({ sessionId: 's', message: 'prices of BTC and ETH' }));
      expect(first.ofType('error')).toHaveLength(1);
      // The AI SDK runs a step's tools once the step's stream is complete: a broken stream ran none.
      expect(ledger.calls).toEqual([]);
      expect((await storage.conversations.listMessages('s')).map((m) => m.role)).toEqual(['user']);

      // Two normal turns with tool calls: the journal is cleared at each turn end, so nothing is restored twice.
      const scripted = createScriptedModel([
        { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
        { text: 'BTC is 97,000.' },
        { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] },
        { text: 'ETH is 3,400.' },
      ]);
      const again = createAgentRuntime({ model: scripted, tools, storage, logger: silentLogger });
      await recordEvents(again.run({ sessionId: 't', message: 'BTC?' }));
      await recordEvents(again.run({ sessionId: 't', message: 'ETH?' }));
      const roles = (await storage.conversations.listMessages('t')).map((m) => m.role);
      expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'tool', 'assistant']);
      expect(ledger.calls).toEqual(['get_price:BTC', 'get_price:ETH']);
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a process killed mid-turn after a tool ran: the next process restores the executed call before it asks the model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'minara-journal-'));
    try {
      const db = join(dir, 'a.db');
      const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'killed-mid-turn.ts'), db], {
        cwd: join(import.meta.dirname, '..', '..'),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, s) => resolve(s)));
      expect(signal, err).toBe('SIGKILL');
      expect(out).toContain('"ran":"get_price:BTC"');

      const storage = createSqliteStorage({ path: db, logger: silentLogger });
      const ledger: Ledger = { calls: [], sessions: [] };
      const tools = createToolRegistry({ tools: financeTools(ledger), storage });
      const prompts: Array<LanguageModelV4CallOptions['prompt']> = [];
      const model = breakingModel(prompts);
      await model.doStream({ prompt: [] } as never); // spend the breaking first call
      const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
      const r = await recordEvents(runtime.run({ sessionId: 'k', message: 'what did you find?' }));
      expect(r.ofType('error')).toEqual([]);
      const sent = promptText(prompts.at(-1)!);
      expect(sent).toContain('97000'); // the result the killed process got
      expect(sent).not.toContain('interrupted before it returned'); // not papered over as an orphan
      expect(ledger.calls).toEqual([]);
      const roles = (await storage.conversations.listMessages('k')).map((m) => m.role);
      expect(roles).toEqual(['user', 'assistant', 'tool', 'user', 'assistant']);
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
