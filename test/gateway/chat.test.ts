import { lastAssistantMessageIsCompleteWithApprovalResponses, UI_MESSAGE_STREAM_HEADERS, type UIMessage } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { TestChat } from './chat-client';
import { chatBody, type Harness, postJson, sseChunks, sseData, startGateway, waitFor } from './helpers';

const swap = { toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } };
const LONG = 'BTC trades at $97,000. '.repeat(30);
/** What the trusted proxy of these tests sets for a person who may decide approvals (answers in a chat body decide too). */
const PERSON = { 'x-minara-scopes': 'approvals:decide' };

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const toolParts = (m: UIMessage | undefined) => (m?.parts ?? []).filter((p) => p.type.startsWith('tool-')) as Array<Record<string, unknown>>;

describe('POST /v1/chat: the AI SDK UI message stream', () => {
  it('answers with the protocol headers, SSE frames, Minara data chunks and [DONE]', async () => {
    h = await startGateway([{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { text: 'BTC is $97,000 right now, says the tool.' }]);
    const res = await postJson(`${h.url}/v1/chat`, chatBody('chat-1', 'price of BTC?'));
    expect(res.status).toBe(200);
    for (const [k, v] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) expect(res.headers.get(k)).toBe(v);
    const text = await res.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(sseData(text).every((d) => d.length > 0)).toBe(true);
    const chunks = sseChunks(text);
    const types = chunks.map((c) => c.type);
    expect(types[0]).toBe('start');
    expect(types.at(-1)).toBe('finish');
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
    expect(types).toEqual(expect.arrayContaining(['data-minara-turn-start', 'start-step', 'tool-input-available', 'tool-output-available', 'finish-step', 'text-start', 'text-delta', 'text-end', 'data-minara-step-end', 'data-minara-turn-end']));
    // Steps are balanced and text runs are closed.
    expect(types.filter((t) => t === 'start-step').length).toBe(types.filter((t) => t === 'finish-step').length);
    expect(types.filter((t) => t === 'text-start').length).toBe(types.filter((t) => t === 'text-end').length);
    const deltas = chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta).join('');
    expect(deltas).toBe('BTC is $97,000 right now, says the tool.');
    expect(chunks.find((c) => c.type === 'tool-output-available')).toMatchObject({ output: { ok: true, data: { symbol: 'BTC', priceUsd: 97_000 } } });
    expect(chunks.find((c) => c.type === 'data-minara-step-end')).toMatchObject({ transient: true });
    expect(chunks.find((c) => c.type === 'data-minara-turn-end')).toMatchObject({ data: { stopReason: 'finished', sessionId: 'chat-1' } });
  });

  it('works with the useChat client core unchanged (AbstractChat + DefaultChatTransport, schema-validated chunks)', async () => {
    h = await startGateway([{ text: 'Hello from Minara.' }, { text: 'Second answer.' }]);
    const chat = new TestChat({ api: `${h.url}/v1/chat`, id: 'chat-ui' });
    let error: Error | undefined;
    const chat2 = new TestChat({ api: `${h.url}/v1/chat`, id: 'chat-ui', onError: (e) => (error = e) });
    await chat.sendMessage({ text: 'hi' });
    expect(chat.status).toBe('ready');
    const reply = chat.messages.at(-1)!;
    expect(reply.role).toBe('assistant');
    expect(reply.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')).toBe('Hello from Minara.');
    // Only the latest turn-end stays in the message; the other Minara events are transient (onData only).
    expect(reply.parts.filter((p) => p.type.startsWith('data-')).map((p) => p.type)).toEqual(['data-minara-turn-end']);
    // The server keeps the transcript: a second client with no history continues the same session.
    await chat2.sendMessage({ text: 'again' });
    expect(error).toBeUndefined();
    const stored = await h.storage.conversations.listMessages('chat-ui');
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(h.model.calls[1]!.prompt.filter((m) => m.role === 'user')).toHaveLength(2);
  });

  it('an approval round trip through the protocol: tool-approval-request, then addToolApprovalResponse executes the tool', async () => {
    h = await startGateway([{ toolCalls: [swap] }, { text: 'Done: swapped 50 USDC to ETH.' }]);
    const chat = new TestChat({ api: `${h.url}/v1/chat`, id: 'trade-1', headers: PERSON, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.sendMessage({ text: 'swap 50 USDC to ETH' });
    const asked = chat.messages.at(-1)!;
    const [part] = toolParts(asked);
    expect(part).toMatchObject({ type: 'tool-swap_tokens', state: 'approval-requested', input: swap.input });
    const approvalId = (part!['approval'] as { id: string }).id;
    expect(h.ledger).toEqual([]);
    const pending = await h.tools.approvals.get(approvalId);
    expect(pending).toMatchObject({ status: 'pending', sessionId: 'trade-1', toolName: 'swap_tokens' });

    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    await waitFor(() => chat.status === 'ready' && h!.ledger.length > 0 && h!.gateway.activeStreams() === 0);
    expect(h.ledger).toEqual(['swap:USDC->ETH:50']);
    // The continuation extended the same assistant message.
    expect(chat.messages).toHaveLength(2);
    const done = chat.messages.at(-1)!;
    expect(toolParts(done)[0]).toMatchObject({ state: 'output-available', output: { ok: true, data: { filled: true } } });
    expect(done.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')).toContain('Done: swapped');
    expect((await h.tools.approvals.get(approvalId))!.status).toBe('executed');
    // The continuation replaced the turn-end part instead of adding a second one.
    expect(done.parts.filter((p) => p.type === 'data-minara-turn-end')).toHaveLength(1);
    expect(done.parts.find((p) => p.type === 'data-minara-turn-end')).toMatchObject({ data: { stopReason: 'finished' } });
  });

  it('GET /v1/chat/:id: the stored chat as UI messages a page can load into useChat after a reload', async () => {
    h = await startGateway([{ toolCalls: [swap] }, { text: 'Done: swapped 50 USDC to ETH.' }]);
    // A chat id the client named but has not used yet: an empty chat, not an error (the page asks on every new chat).
    const fresh = await fetch(`${h.url}/v1/chat/load-1`);
    expect(fresh.status).toBe(200);
    expect(await fresh.json()).toEqual({ id: 'load-1', messages: [], active: false });
    const first = sseChunks(await (await postJson(`${h.url}/v1/chat`, chatBody('load-1', 'swap 50 USDC to ETH'))).text());
    const req = first.find((c) => c.type === 'tool-approval-request') as { approvalId: string; toolCallId: string };
    const waiting = (await (await fetch(`${h.url}/v1/chat/load-1`)).json()) as { id: string; active: boolean; messages: UIMessage[] };
    expect(waiting.id).toBe('load-1');
    expect(waiting.active).toBe(false);
    expect(waiting.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(waiting.messages[0]!.parts).toEqual([{ type: 'text', text: 'swap 50 USDC to ETH' }]);
    expect(toolParts(waiting.messages[1])[0]).toMatchObject({ type: 'tool-swap_tokens', toolCallId: req.toolCallId, state: 'approval-requested', approval: { id: req.approvalId }, input: swap.input });
    // A client that loaded this answers the approval like any useChat client, and the reload shows the result.
    const chat = new TestChat({ api: `${h.url}/v1/chat`, id: 'load-1', headers: PERSON, messages: waiting.messages, sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await chat.addToolApprovalResponse({ id: req.approvalId, approved: true });
    await waitFor(() => chat.status === 'ready' && h!.ledger.length > 0 && h!.gateway.activeStreams() === 0);
    const after = (await (await fetch(`${h.url}/v1/chat/load-1`)).json()) as { messages: UIMessage[] };
    expect(toolParts(after.messages[1])[0]).toMatchObject({ state: 'output-available', output: { ok: true, data: { filled: true } } });
    expect(after.messages[1]!.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('')).toContain('Done: swapped');
    // Another tenant: 404, as if it did not exist.
    expect((await fetch(`${h.url}/v1/chat/load-1`, { headers: { 'x-minara-user': 'mallory' } })).status).toBe(404);
  });

  it('a denied approval comes back as tool-output-denied and nothing runs', async () => {
    h = await startGateway([{ toolCalls: [swap] }, { text: 'OK, I did not swap.' }]);
    const first = sseChunks(await (await postJson(`${h.url}/v1/chat`, chatBody('deny-1', 'swap'))).text());
    const req = first.find((c) => c.type === 'tool-approval-request') as { approvalId: string; toolCallId: string };
    expect(first.find((c) => c.type === 'finish')).toMatchObject({ finishReason: 'tool-calls' });
    const assistant = {
      id: (first[0] as { messageId: string }).messageId,
      role: 'assistant',
      parts: [{ type: 'tool-swap_tokens', toolCallId: req.toolCallId, state: 'approval-responded', input: swap.input, approval: { id: req.approvalId, approved: false, reason: 'no' } }],
    };
    const body = { id: 'deny-1', trigger: 'submit-message', messages: [chatBody('deny-1', 'swap').messages[0], assistant] };
    const second = sseChunks(await (await postJson(`${h.url}/v1/chat`, body, PERSON)).text());
    expect(second[0]).toEqual({ type: 'start', messageId: assistant.id });
    expect(second).toContainEqual({ type: 'tool-output-denied', toolCallId: req.toolCallId });
    expect(h.ledger).toEqual([]);
    // Replaying the same (now stale) client history is refused, not re-dispatched.
    const again = await postJson(`${h.url}/v1/chat`, body, PERSON);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ error: { code: 'HTTP_CONFLICT' } });
  });

  it('a client that disconnects mid-stream loses nothing: the turn finishes server-side and the transcript is stored', async () => {
    h = await startGateway([{ text: LONG }], { model: { chunkDelayMs: 15 } });
    const abort = new AbortController();
    const res = await fetch(`${h.url}/v1/chat`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('drop-1', 'tell me a long story')), signal: abort.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    while (!seen.includes('"text-delta"')) seen += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    await reader.cancel().catch(() => {});
    expect(h.gateway.activeStreams()).toBe(1); // still running without a reader
    await waitFor(() => h!.gateway.activeStreams() === 0);
    const stored = await h.storage.conversations.listMessages('drop-1');
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(JSON.stringify(JSON.parse(stored[1]!.json))).toContain(LONG.trim().slice(0, 60));
    expect(stored[1]!.json).toContain(LONG.slice(-40).trim());
  });

  it('GET /v1/chat/:id/stream: 204 when idle, replays the active turn from its start, 204 again after', async () => {
    h = await startGateway([{ text: LONG }], { model: { chunkDelayMs: 10 } });
    expect((await fetch(`${h.url}/v1/chat/resume-1/stream`)).status).toBe(204);
    const abort = new AbortController();
    const first = await fetch(`${h.url}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('resume-1', 'story')), signal: abort.signal });
    const firstReader = first.body!.getReader();
    const firstChunk = new TextDecoder().decode((await firstReader.read()).value);
    abort.abort();
    await firstReader.cancel().catch(() => {});
    const messageId = (JSON.parse(sseData(firstChunk)[0]!) as { messageId: string }).messageId;

    const resumed = await fetch(`${h.url}/v1/chat/resume-1/stream`);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const chunks = sseChunks(await resumed.text());
    expect(chunks[0]).toEqual({ type: 'start', messageId });
    expect(chunks.filter((c) => c.type === 'text-delta').map((c) => (c as { delta: string }).delta).join('')).toBe(LONG);
    await waitFor(() => h!.gateway.activeStreams() === 0);
    expect((await fetch(`${h.url}/v1/chat/resume-1/stream`)).status).toBe(204);
    // The useChat transport sees "no active stream" as null.
    const chat = new TestChat({ api: `${h.url}/v1/chat`, id: 'resume-1' });
    await chat.resumeStream();
    expect(chat.messages).toHaveLength(0);
  });

  it('one turn per chat at a time (409 while running); another tenant cannot see or continue the chat', async () => {
    h = await startGateway([{ text: LONG }, { text: 'mine' }], { model: { chunkDelayMs: 10 } });
    const running = await postJson(`${h.url}/v1/chat`, chatBody('busy-1', 'a'));
    const busy = await postJson(`${h.url}/v1/chat`, chatBody('busy-1', 'b'));
    expect(busy.status).toBe(409);
    expect(await busy.json()).toMatchObject({ error: { code: 'HTTP_CONFLICT' } });
    expect((await fetch(`${h.url}/v1/chat/busy-1/stream`, { headers: { 'x-minara-user': 'mallory' } })).status).toBe(404);
    await running.text();
    const other = await postJson(`${h.url}/v1/chat`, chatBody('busy-1', 'hijack'), { 'x-minara-user': 'mallory' });
    expect(other.status).toBe(404);
    expect((await fetch(`${h.url}/v1/chat/busy-1/stream`, { headers: { 'x-minara-user': 'mallory' } })).status).toBe(404);
    const own = await postJson(`${h.url}/v1/chat`, chatBody('busy-1', 'again'));
    expect(sseChunks(await own.text()).some((c) => c.type === 'text-delta')).toBe(true);
  });

  it('close() waits for running turns, and refuses new ones with 503', async () => {
    h = await startGateway([{ text: LONG }], { model: { chunkDelayMs: 5 } });
    const res = await postJson(`${h.url}/v1/chat`, chatBody('close-1', 'x'));
    const closing = h.gateway.close();
    const refused = await postJson(`${h.url}/v1/chat`, chatBody('close-2', 'y'));
    expect(refused.status).toBe(503);
    await closing;
    expect(h.gateway.activeStreams()).toBe(0);
    expect(sseChunks(await res.text()).at(-1)).toMatchObject({ type: 'finish' });
    expect((await h.storage.conversations.listMessages('close-1')).map((m) => m.role)).toEqual(['user', 'assistant']);
  });
});
