/**
 * A turn to `useChat` without the gateway: `toUIMessageStreamResponse(runtime.run(…))` read back with the AI
 * SDK's own client code (schema-validated chunks, `readUIMessageStream`), typed as `MinaraUIMessage`.
 */
import { parseJsonEventStream, readUIMessageStream, UI_MESSAGE_STREAM_HEADERS, uiMessageChunkSchema, type UIMessageChunk } from 'ai';
import { z } from 'zod';
import {
  createAgentRuntime,
  createToolRegistry,
  defineTool,
  type MinaraUIMessage,
  PermissionTier,
  silentLogger,
  toUIMessages,
  toUIMessageStream,
  toUIMessageStreamResponse,
} from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';

function setup(script: Parameters<typeof createScriptedModel>[0]) {
  const storage = createInMemoryStorage();
  const ran: string[] = [];
  const tools = createToolRegistry({
    storage,
    tools: [
      defineTool({
        name: 'get_price', toolSet: 'read', description: 'Spot price', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({ symbol: z.string() }),
        execute: ({ symbol }) => ({ symbol, priceUsd: 97_000 }),
      }),
      defineTool({
        name: 'save_note', toolSet: 'notes', description: 'Save a note', permissionTier: PermissionTier.ALWAYS_CONFIRM,
        inputSchema: z.object({ text: z.string() }),
        execute: ({ text }) => {
          ran.push(text);
          return { saved: text };
        },
      }),
    ],
  });
  const runtime = createAgentRuntime({ model: createScriptedModel(script), tools, storage, logger: silentLogger });
  return { storage, tools, runtime, ran };
}

async function readMessage(response: Response, message?: MinaraUIMessage): Promise<MinaraUIMessage> {
  const chunks = parseJsonEventStream({ stream: response.body!, schema: uiMessageChunkSchema }).pipeThrough(
    new TransformStream<{ success: boolean; value?: unknown }, UIMessageChunk>({
      transform(result, controller) {
        if (!result.success) throw new Error('a chunk failed the AI SDK schema');
        controller.enqueue(result.value as UIMessageChunk);
      },
    }),
  );
  let last: MinaraUIMessage | undefined;
  for await (const m of readUIMessageStream<MinaraUIMessage>({ stream: chunks, ...(message ? { message } : {}) })) last = m;
  return last!;
}

describe('toUIMessageStream / toUIMessageStreamResponse / toUIMessages', () => {
  it('streams a turn as the UI message protocol: text, a typed tool part, one persisted turn-end', async () => {
    const { runtime } = setup([{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { text: 'BTC is $97,000.' }]);
    const response = toUIMessageStreamResponse(runtime.run({ sessionId: 's1', message: 'price?' }), { messageId: 'a1' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    // The same headers as the AI SDK's own createUIMessageStreamResponse (this package frames SSE without loading ai).
    expect(Object.fromEntries(response.headers)).toMatchObject(UI_MESSAGE_STREAM_HEADERS);
    const message = await readMessage(response);
    expect(message.id).toBe('a1');
    expect(message.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')).toBe('BTC is $97,000.');
    const tool = message.parts.find((p) => p.type === 'tool-get_price');
    expect(tool).toMatchObject({ state: 'output-available', output: { ok: true, data: { symbol: 'BTC', priceUsd: 97_000 } } });
    const data = message.parts.filter((p) => p.type.startsWith('data-'));
    expect(data.map((p) => p.type)).toEqual(['data-minara-turn-end']);
    const end = message.parts.find((p) => p.type === 'data-minara-turn-end');
    if (end?.type === 'data-minara-turn-end') expectTypeOf(end.data.stopReason).toEqualTypeOf<'finished' | 'approval-required' | 'clarification' | 'max-steps' | 'token-budget' | 'repeated-blocked-call' | 'aborted' | 'error'>();
    expect(end).toMatchObject({ data: { stopReason: 'finished' } });
  });

  it('a continuation (approval answered) extends the same message; turn-end stays one part', async () => {
    const { runtime, ran, tools } = setup([{ toolCalls: [{ toolName: 'save_note', input: { text: 'hi' } }] }, { text: 'Saved.' }]);
    const first = await readMessage(toUIMessageStreamResponse(runtime.run({ sessionId: 's2', message: 'save hi' }), { messageId: 'a2' }));
    const asked = first.parts.find((p) => p.type === 'tool-save_note');
    expect(asked).toMatchObject({ state: 'approval-requested' });
    const approvalId = (asked as { approval: { id: string } }).approval.id;
    await tools.approvals.decide(approvalId, { approved: true });
    const second = await readMessage(toUIMessageStreamResponse(runtime.run({ sessionId: 's2', approvals: [{ approvalId, approved: true }] }), { messageId: 'a2' }), first);
    expect(ran).toEqual(['hi']);
    expect(second.parts.filter((p) => p.type === 'data-minara-turn-end')).toHaveLength(1);
    expect(second.parts.find((p) => p.type === 'data-minara-turn-end')).toMatchObject({ data: { stopReason: 'finished' } });
  });

  it('a runtime that throws ends the stream with an error chunk and finish', async () => {
    async function* broken(): AsyncIterable<never> {
      throw new Error('store offline');
    }
    const chunks: UIMessageChunk[] = [];
    for await (const c of toUIMessageStream(broken(), { messageId: 'x' }) as unknown as AsyncIterable<UIMessageChunk>) chunks.push(c);
    expect(chunks.map((c) => c.type)).toEqual(['start', 'error', 'finish']);
    expect(chunks[1]).toMatchObject({ errorText: 'store offline' });
  });

  it('toUIMessages: a stored transcript as the messages useChat shows (approval waiting, then its result)', async () => {
    const { runtime, storage, tools } = setup([{ toolCalls: [{ toolName: 'save_note', input: { text: 'n' } }] }, { text: 'Done.' }]);
    for await (const _ of runtime.run({ sessionId: 's3', message: 'save n' })) void _;
    const stored = (await storage.conversations.listMessages('s3')).map((m) => JSON.parse(m.json));
    const waiting = toUIMessages(stored);
    expect(waiting.map((m) => m.role)).toEqual(['user', 'assistant']);
    const part = waiting[1]!.parts.find((p) => p.type === 'tool-save_note') as { state: string; approval: { id: string } };
    expect(part.state).toBe('approval-requested');
    await tools.approvals.decide(part.approval.id, { approved: true });
    for await (const _ of runtime.run({ sessionId: 's3', approvals: [{ approvalId: part.approval.id, approved: true }] })) void _;
    const done = toUIMessages((await storage.conversations.listMessages('s3')).map((m) => JSON.parse(m.json)));
    expect(done[1]!.parts.find((p) => p.type === 'tool-save_note')).toMatchObject({ state: 'output-available', output: { ok: true, data: { saved: 'n' } } });
    expect(done[1]!.parts.filter((p) => p.type === 'text').map((p) => p.text).join('')).toBe('Done.');
  });
});
