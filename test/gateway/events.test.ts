/**
 * `GET /v1/events`: the post-turn fan-out's cache invalidation reaches the caller's browser (agent-loop §5), only the
 * caller's, bounded per user, ended when the gateway closes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { APP_VIEWS, createEventBus } from '@minara/agent';
import { MAX_EVENT_STREAMS_PER_USER } from '@minara/agent/gateway';
import { chatBody, type Harness, postJson, startGateway } from './helpers';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** An SSE reader over fetch (the web app reads it the same way, so it can send its auth headers). */
async function openEvents(url: string, user: string) {
  const response = await fetch(`${url}/v1/events`, { headers: { 'x-minara-user': user } });
  const events: Array<{ event: string; data: { views: string[] } }> = [];
  let ended = false;
  const waiters: Array<() => void> = [];
  if (response.ok && response.body) {
    void (async () => {
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true as const }));
        if (done) break;
        buffer += value;
        let i: number;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const event = /^event: (.+)$/m.exec(frame)?.[1];
          const data = /^data: (.+)$/m.exec(frame)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) as { views: string[] } });
          for (const w of waiters.splice(0)) w();
        }
      }
      ended = true;
      for (const w of waiters.splice(0)) w();
    })();
  }
  const until = async (test: () => boolean, ms = 3000) => {
    const deadline = Date.now() + ms;
    while (!test()) {
      if (Date.now() > deadline) throw new Error(`timed out; events so far: ${JSON.stringify(events)}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
  };
  const invalidated = () => new Set(events.filter((e) => e.event === 'invalidate').flatMap((e) => e.data.views));
  return { response, events, invalidated, until, ended: () => ended };
}

describe('GET /v1/events', () => {
  const swap = { toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } };

  it("a turn's pending approval, then its fill, invalidate the caller's approvals and portfolio views; another tenant hears nothing", async () => {
    const bus = createEventBus();
    h = await startGateway([{ toolCalls: [swap] }, { text: 'Swapped 50 USDC to ETH.' }], { gateway: { bus } });
    const alice = await openEvents(h.url, 'alice');
    const bob = await openEvents(h.url, 'bob');
    expect(alice.response.status).toBe(200);
    expect(alice.response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    await alice.until(() => alice.events.some((e) => e.event === 'ready'));
    expect(alice.events[0]).toEqual({ event: 'ready', data: { views: [...APP_VIEWS] } });

    await (await postJson(`${h.url}/v1/chat`, chatBody('trade-1', 'swap 50 USDC to ETH'), { 'x-minara-user': 'alice' })).text();
    await alice.until(() => alice.invalidated().has('approvals'));
    expect(alice.invalidated().has('portfolio')).toBe(false);

    const [approval] = ((await (await fetch(`${h.url}/v1/approvals?status=pending`, { headers: { 'x-minara-user': 'alice' } })).json()) as { approvals: Array<{ id: string }> }).approvals;
    expect((await postJson(`${h.url}/v1/approvals/${approval!.id}`, { approved: true }, { 'x-minara-user': 'alice' })).status).toBe(200);
    await alice.until(() => alice.invalidated().has('portfolio'));
    expect([...alice.invalidated()].sort()).toEqual(['approvals', 'audit', 'portfolio']);

    // A memory written for alice (any source) refreshes her memory view.
    await h.memoryFor('alice').write({ category: 'preference', content: 'Prefers limit orders.' });
    await alice.until(() => alice.invalidated().has('memory'));
    // Bob saw none of it.
    await new Promise((r) => setTimeout(r, 300));
    expect(bob.events.map((e) => e.event)).toEqual(['ready']);
  });

  it(`at most ${MAX_EVENT_STREAMS_PER_USER} streams per user (429 past it, others unaffected); closing the gateway ends them`, async () => {
    h = await startGateway([], { gateway: { bus: createEventBus() } });
    const streams: Array<Awaited<ReturnType<typeof openEvents>>> = [];
    for (let i = 0; i < MAX_EVENT_STREAMS_PER_USER; i++) streams.push(await openEvents(h.url, 'carol'));
    expect(streams.every((s) => s.response.status === 200)).toBe(true);
    const over = await fetch(`${h.url}/v1/events`, { headers: { 'x-minara-user': 'carol' } });
    expect(over.status).toBe(429);
    expect((await openEvents(h.url, 'dave')).response.status).toBe(200);
    await h.close();
    h = undefined;
    await streams[0]!.until(() => streams[0]!.ended());
  });

  it('404 when the gateway has no bus', async () => {
    h = await startGateway();
    expect((await fetch(`${h.url}/v1/events`)).status).toBe(404);
  });
});
