import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, createConsoleLogger, type MinaraApp } from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';

// Plant every kind of credential, run sessions whose tools fail (an upstream that echoes the Authorization
// header in its error body), then search everything the agent keeps or says for them: zero occurrences.

const SECRETS = {
  ANTHROPIC_API_KEY: `sk-ant-api03-${randomBytes(24).toString('hex')}`,
  OPENAI_API_KEY: `sk-proj-${randomBytes(24).toString('hex')}`,
  MINARA_API_KEY: `mnr_live_${randomBytes(20).toString('hex')}`,
  GATEWAY_AUTH_TOKEN: `gw-${randomBytes(20).toString('hex')}`,
  MINARA_APPROVAL_KEY: randomBytes(32).toString('hex'),
};
const planted = Object.values(SECRETS);

let upstream: Server;
let app: MinaraApp;
const logLines: string[] = [];

beforeAll(async () => {
  // A careless upstream: every error body repeats the credentials it was sent.
  upstream = createServer((req, res) => {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`bad request; you sent Authorization: ${req.headers.authorization ?? ''}`);
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', () => r()));
  const port = (upstream.address() as { port: number }).port;
  const model = createScriptedModel([
    { toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] },
    { text: 'The price service failed.' },
    { toolCalls: [{ toolName: 'write_file', input: { path: 'notes.md', content: 'hello' } }] },
    { text: 'Waiting for your approval.' },
    { text: 'Gateway answer.' },
  ]);
  app = await createApp({
    envFileDir: false,
    model,
    logger: createConsoleLogger({ level: 'debug', write: (line) => logLines.push(line) }),
    env: { ...SECRETS, MINARA_DATA_DIR: path.join(mkdtempSync(path.join(tmpdir(), 'minara-secrets-')), 'data'), MINARA_API_BASE_URL: `http://127.0.0.1:${port}` },
  });
});
afterAll(async () => {
  await app?.close();
  await new Promise((r) => upstream.close(r));
});

describe('no secret lands in a log, event, audit row, transcript or gateway response', () => {
  it('after failing tools, approvals and a gateway chat', async () => {
    const seen: string[] = [];
    const r1 = await recordEvents(app.runtime.run({ sessionId: 'sec-1', message: 'price of ETH?' }));
    expect(JSON.stringify(r1.ofType('tool-result'))).toContain('PROVIDER_ERROR'); // the tool really failed
    seen.push(JSON.stringify(r1.events));
    const r2 = await recordEvents(app.runtime.run({ sessionId: 'sec-1', message: 'note hello' }));
    seen.push(JSON.stringify(r2.events));

    const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, memoryFor: app.memoryFor, authToken: SECRETS.GATEWAY_AUTH_TOKEN });
    const auth = { authorization: `Bearer ${SECRETS.GATEWAY_AUTH_TOKEN}` };
    const chat = await gateway.fetch(new Request('http://localhost/v1/chat', {
      method: 'POST', headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'sec-gw', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }] }),
    }));
    seen.push(await chat.text());
    for (const p of ['/v1/approvals?status=pending,approved,denied,executed,expired', '/v1/memory', '/v1/nope']) seen.push(await (await gateway.fetch(new Request(`http://localhost${p}`, { headers: auth }))).text());
    seen.push(await (await gateway.fetch(new Request('http://localhost/v1/memory', { headers: { authorization: 'Bearer wrong-token-000000000000' } }))).text());

    seen.push(JSON.stringify(await app.storage.audit.query({ limit: 1000 })));
    for (const s of ['sec-1', 'sec-gw']) seen.push(JSON.stringify(await app.storage.conversations.listMessages(s)));
    seen.push(JSON.stringify(await app.tools.approvals.list({ limit: 100 })));
    seen.push(logLines.join('\n'));
    const haystack = seen.join('\n');
    expect(haystack.length).toBeGreaterThan(1000);
    for (const [name, value] of Object.entries(SECRETS)) {
      expect(haystack.includes(value), `${name} leaked`).toBe(false);
    }
    expect(planted).toHaveLength(5);
  });
});
