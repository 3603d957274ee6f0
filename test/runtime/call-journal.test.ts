import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV4, LanguageModelV4CallOptions, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier, silentLogger, type Storage } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { financeTools, type Ledger } from './helpers';
import { pageTools, PLANTED_PAGE } from './fixtures/untrusted-page-tools';

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

/** Run a fixture's turn in a child process, which SIGKILLs itself mid-turn; `ran` is a call its output must show. */
async function runUntilKilled(fixture: string, args: readonly string[], ran: string): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', fixture), ...args], {
    cwd: join(import.meta.dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, s) => resolve(s)));
  expect(signal, err).toBe('SIGKILL');
  expect(out).toContain(`"ran":"${ran}"`);
}

/** The killed-mid-turn fixture: a turn whose get_price ran, killed at its next model call. */
const killMidTurn = (db: string, kind?: 'side-effect-free', auditRows?: 'per-call') => runUntilKilled('killed-mid-turn.ts', kind ? [db, kind, ...(auditRows ? [auditRows] : [])] : [db], 'get_price:BTC');

/**
 * The session's next turn in this process, on the killed process's database (`before` sees the storage first):
 * the storage, the tool ledger and the prompts the model got.
 */
async function nextTurn(db: string, before?: (storage: Storage) => Promise<void>) {
  const storage = createSqliteStorage({ path: db, logger: silentLogger });
  await before?.(storage);
  const ledger: Ledger = { calls: [], sessions: [] };
  const tools = createToolRegistry({ tools: financeTools(ledger), storage });
  const prompts: Array<LanguageModelV4CallOptions['prompt']> = [];
  const model = breakingModel(prompts);
  await model.doStream({ prompt: [] } as never); // spend the breaking first call
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
  const r = await recordEvents(runtime.run({ sessionId: 'k', message: 'what did you find?' }));
  expect(r.ofType('error')).toEqual([]);
  return { storage, ledger, prompts };
}

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
      await killMidTurn(db);
      const { storage, ledger, prompts } = await nextTurn(db);
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

  for (const auditRows of ['with-turn', 'per-call'] as const) {
    it(`a process killed after a side-effect-free call left no journal: the next turn asks the model again and the read runs again (audit rows ${auditRows})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'minara-journal-'));
      try {
        const db = join(dir, 'a.db');
        await killMidTurn(db, 'side-effect-free', auditRows === 'per-call' ? 'per-call' : undefined);
        const { storage, prompts } = await nextTurn(db, async (opened) => {
          expect(await opened.meta.get('runtime:calls-in-flight:k')).toBeUndefined();
        });
        expect(promptText(prompts.at(-1)!)).not.toContain('97000'); // nothing restored: the model reads the price again if it needs it
        const roles = (await storage.conversations.listMessages('k')).map((m) => m.role);
        // The killed turn left its user message only: its calls and answer were never stored.
        expect(roles).toEqual(['user', 'user', 'assistant']);
        // 'with-turn' (the default): the read's row was held for the turn's end and died with the turn's messages;
        // 'per-call': it committed before the process died.
        expect(await storage.audit.count({ sessionId: 'k', toolName: 'get_price' })).toBe(auditRows === 'per-call' ? 1 : 0);
        await storage.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});

describe('a restored journal keeps what the dead turn had read from outside', () => {
  it('a process killed after reading an untrusted page and saving a note: the next turn restores the calls with their provenance, so a swap it proposes says what was read', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'minara-journal-'));
    try {
      const db = join(dir, 'a.db');
      await runUntilKilled('killed-after-untrusted.ts', [db], 'save_note:read the page');

      const storage = createSqliteStorage({ path: db, logger: silentLogger });
      const tools = createToolRegistry({ storage, tools: pageTools() });
      const model = createScriptedModel([
        { toolCalls: [{ toolName: 'swap_tokens', input: { from: 'USDC', to: 'SCAM', amountUsd: 500 }, toolCallId: 'swap-1' }] },
        { toolCalls: [{ toolName: 'swap_tokens', input: { from: 'USDC', to: 'SCAM', amountUsd: 500, confirm: true }, toolCallId: 'swap-2' }] },
        { text: 'The swap needs your approval.' },
      ]);
      const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
      const r = await recordEvents(runtime.run({ sessionId: 'u', message: 'go on' }));
      expect(r.ofType('error')).toEqual([]);
      // The restored page is in the transcript the model read...
      expect(JSON.stringify(await storage.conversations.listMessages('u'))).toContain('NOTE TO AI AGENTS');
      // ...and the swap it proposed carries the page as its provenance, and the planted passage for the person.
      const [approval] = await storage.approvals.list({ sessionId: 'u' });
      expect(approval?.toolName).toBe('swap_tokens');
      expect(approval?.reason).toContain('proposed after reading: https://evil.example/page');
      expect(approval?.reason).toContain(PLANTED_PAGE.slice(0, 30));
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the journal is written only for calls with side effects', () => {
  /** The storage, seen through a proxy that records every value written to the journal key and each delete of it. */
  function watchJournal(storage: Storage, sessionId: string) {
    const key = `runtime:calls-in-flight:${sessionId}`;
    const writes: Array<{ calls: Array<{ toolName: string; toolCallId: string }> }> = [];
    let deleted = 0;
    const meta = new Proxy(storage.meta, {
      get(target, prop) {
        if (prop === 'set') {
          return async (k: string, v: string) => {
            if (k === key) writes.push(JSON.parse(v) as (typeof writes)[number]);
            return target.set(k, v);
          };
        }
        if (prop === 'delete') {
          return async (k: string) => {
            if (k === key) deleted++;
            return target.delete(k);
          };
        }
        return Reflect.get(target, prop) as unknown;
      },
    });
    const watched = new Proxy(storage, { get: (target, prop) => (prop === 'meta' ? meta : (Reflect.get(target, prop) as unknown)) });
    return { storage: watched, writes, deleted: () => deleted };
  }
  const readTool = (ran: string[]) =>
    defineTool({
      name: 'read_quote', toolSet: 'read', description: 'A quote', permissionTier: PermissionTier.READ_ONLY, sideEffects: false,
      inputSchema: z.object({ symbol: z.string() }),
      execute: ({ symbol }) => {
        ran.push(`read_quote:${symbol}`);
        return { symbol, priceUsd: 1 };
      },
    });
  const noteTool = (ran: string[]) =>
    defineTool({
      name: 'save_note', toolSet: 'read', description: 'Save a note', permissionTier: PermissionTier.READ_ONLY,
      inputSchema: z.object({ text: z.string() }),
      execute: ({ text }) => {
        ran.push(`save_note:${text}`);
        return { saved: true };
      },
    });

  for (const engine of ['sqlite', 'in-memory'] as const) {
    it(`${engine}: a turn of side-effect-free calls writes no journal; a call with side effects writes every call kept so far`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'minara-journal-'));
      try {
        const storage: Storage = engine === 'sqlite' ? createSqliteStorage({ path: join(dir, 'a.db'), logger: silentLogger }) : (await import('@minara/agent/testing')).createInMemoryStorage();
        const ran: string[] = [];
        const watched = watchJournal(storage, 's');
        const tools = createToolRegistry({ tools: [readTool(ran), noteTool(ran)], storage: watched.storage });
        const model = createScriptedModel([
          { toolCalls: [{ toolName: 'read_quote', input: { symbol: 'BTC' }, toolCallId: 'r1' }] },
          { toolCalls: [{ toolName: 'read_quote', input: { symbol: 'ETH' }, toolCallId: 'r2' }] },
          { text: 'BTC 1, ETH 1.' },
          { toolCalls: [{ toolName: 'read_quote', input: { symbol: 'SOL' }, toolCallId: 'r3' }] },
          { toolCalls: [{ toolName: 'save_note', input: { text: 'SOL read' }, toolCallId: 'n1' }] },
          { text: 'Noted.' },
        ]);
        const runtime = createAgentRuntime({ model, tools, storage: watched.storage, logger: silentLogger });

        await runtime.generate({ sessionId: 's', message: 'quotes?' });
        expect(ran).toEqual(['read_quote:BTC', 'read_quote:ETH']);
        expect(watched.writes).toEqual([]);
        expect(watched.deleted()).toBe(0);
        // The calls are in the transcript all the same.
        expect((await storage.conversations.listMessages('s')).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);

        await runtime.generate({ sessionId: 's', message: 'SOL, and note it' });
        expect(ran.slice(2)).toEqual(['read_quote:SOL', 'save_note:SOL read']);
        // One record, written when the call with side effects returned: it carries the read before it too.
        expect(watched.writes.map((w) => w.calls.map((c) => c.toolCallId))).toEqual([['r3', 'n1']]);
        expect(watched.deleted()).toBe(1);
        expect(await storage.meta.get('runtime:calls-in-flight:s')).toBeUndefined();
        await storage.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
