/**
 * The mounts docs/gateway.md documents: a Next.js catch-all route handler under /api and a Hono app, both with
 * `basePath`, driven with real `Request`s (Hono's own router; Next.js calls the exported handlers this way).
 */
import { Hono } from 'hono';
import { createAgentRuntime } from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatBody, type Harness, sseData, startGateway } from './helpers';

let h: Harness;
let mounted: ReturnType<typeof createGateway>;
beforeAll(async () => {
  h = await startGateway([{ text: 'Hello from under /api.' }]);
  const runtime = createAgentRuntime({ model: h.model, tools: h.tools, storage: h.storage });
  mounted = createGateway({ runtime, storage: h.storage, tools: h.tools, memoryFor: h.memoryFor, basePath: '/api' });
});
afterAll(() => h.close());

describe('mounting the gateway under a prefix (basePath)', () => {
  it('a Next.js app/api/[...path]/route.ts: the exported handlers answer /api/v1/… and stream a chat', async () => {
    // What docs/gateway.md tells a Next.js user to write in app/api/[...path]/route.ts:
    const route = { GET: mounted.fetch, POST: mounted.fetch };
    expect((await route.GET(new Request('http://localhost:3000/api/healthz'))).status).toBe(200);
    const chat = await route.POST(new Request('http://localhost:3000/api/v1/chat', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(chatBody('next-1', 'hi')) }));
    expect(chat.status).toBe(200);
    expect(sseData(await chat.text()).join('')).toContain('Hello from under /api.');
    expect((await route.GET(new Request('http://localhost:3000/api/v1/memory'))).status).toBe(200);
    // Outside the prefix, and the bare route without it: 404.
    expect((await route.GET(new Request('http://localhost:3000/healthz'))).status).toBe(404);
    expect((await route.GET(new Request('http://localhost:3000/apix/healthz'))).status).toBe(404);
  });

  it('a Hono app: app.all("/api/*", (c) => gateway.fetch(c.req.raw)) beside the app’s own routes', async () => {
    const app = new Hono();
    app.get('/', (c) => c.text('my app'));
    app.all('/api/*', (c) => mounted.fetch(c.req.raw));
    expect(await (await app.request('/')).text()).toBe('my app');
    expect((await app.request('/api/healthz')).status).toBe(200);
    const approvals = await app.request('/api/v1/approvals');
    expect(approvals.status).toBe(200);
    expect(await approvals.json()).toEqual({ approvals: [] });
    expect((await app.request('/api/v1/nope')).status).toBe(404);
  });

  it('refuses a malformed basePath naming it', () => {
    const runtime = createAgentRuntime({ model: h.model, tools: h.tools, storage: h.storage });
    for (const basePath of ['api', '/api/', '/a b', '//x']) {
      expect(() => createGateway({ runtime, storage: h.storage, tools: h.tools, basePath })).toThrow(/basePath/);
    }
  });
});
