/**
 * The gateway example runs offline: the demo model answers, the page is served, and a swap goes through
 * the approval flow over HTTP.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedGateway } from '@minara/agent/gateway';
import { startServer } from './server';

let served: ServedGateway & { readonly loginUrl: string | undefined };
beforeAll(async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-gw-example-'));
  served = await startServer({ port: 0, env: { MINARA_DB: path.join(dir, 'minara.db'), MINARA_WORKSPACE: path.join(dir, 'ws') } });
});
afterAll(async () => {
  await served?.close();
});

const frames = (text: string) => text.split('\n\n').filter((f) => f.startsWith('data: ')).map((f) => f.slice(6));

describe('examples/gateway', () => {
  it('serves the web app (built by npm run build, which npm install runs) and the healthz route', async () => {
    const built = existsSync(path.join(import.meta.dirname, '..', '..', 'dist', 'web', 'index.html'));
    const page = await fetch(`${served.url}/`);
    if (built) {
      expect(page.headers.get('content-type')).toContain('text/html');
      expect(await page.text()).toContain('<div id="root">');
    } else expect(page.status).toBe(404);
    expect((await fetch(`${served.url}/healthz`)).status).toBe(200);
  });

  it('chats with the demo model and approves a swap', async () => {
    // Without a token, answering an approval (in the chat body too) needs the cookie the one-time login URL sets and
    // the proof its redirect hands the page in the URL's fragment (sent as x-minara-proof).
    const login = await fetch(served.loginUrl!, { redirect: 'manual' });
    expect(login.status).toBe(303);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const proof = /#minara-proof=(.+)$/.exec(login.headers.get('location') ?? '')?.[1] ?? '';
    const post = (messages: unknown[]) =>
      fetch(`${served.url}/v1/chat`, { method: 'POST', headers: { 'content-type': 'application/json', cookie, 'x-minara-proof': proof }, body: JSON.stringify({ id: 'demo-1', trigger: 'submit-message', messages }) });
    const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'swap 25 USDC to ETH' }] };
    const first = frames(await (await post([user])).text());
    expect(first.at(-1)).toBe('[DONE]');
    const request = first.slice(0, -1).map((f) => JSON.parse(f)).find((c) => c.type === 'tool-approval-request');
    expect(request).toBeTruthy();
    const start = JSON.parse(first[0]!);
    const assistant = {
      id: start.messageId, role: 'assistant',
      parts: [{ type: 'tool-swap_tokens', toolCallId: request.toolCallId, state: 'approval-responded', input: {}, approval: { id: request.approvalId, approved: true } }],
    };
    const second = frames(await (await post([user, assistant])).text()).slice(0, -1).map((f) => JSON.parse(f));
    expect(second.find((c) => c.type === 'tool-output-available')).toMatchObject({ output: { ok: true, data: { filled: true, amountUsd: 25 } } });
    expect(second.filter((c) => c.type === 'text-delta').map((c) => c.delta).join('')).toContain('Here is what happened');
  });
});
