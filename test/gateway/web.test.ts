/**
 * The gateway's web app serving (`web: { dir }`), `GET /v1/info` and memory search over HTTP.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createAgentRuntime } from '@minara/agent';
import { createGateway } from '@minara/agent/gateway';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startGateway, TOKEN } from './helpers';

let h: Harness;
let root: string;
let web: string;
beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'minara-web-static-'));
  web = path.join(root, 'web');
  mkdirSync(path.join(web, 'assets'), { recursive: true });
  writeFileSync(path.join(web, 'index.html'), '<!doctype html><div id="root"></div>');
  writeFileSync(path.join(web, 'assets', 'app-1a2b.js'), 'console.log(1)');
  writeFileSync(path.join(root, 'secret.txt'), 'do not serve me');
  h = await startGateway([], { gateway: { web: { dir: web }, authToken: TOKEN, trustUserHeader: false, modelStatus: { configured: false, reason: 'MINARA_MODEL is not set.', help: '…' } } });
});
afterAll(() => h.close());

const auth = { authorization: `Bearer ${TOKEN}` };

describe('gateway web app serving', () => {
  it('serves index.html and hashed assets without a token, with a strict CSP and caching by kind', async () => {
    const page = await fetch(`${h.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(await page.text()).toContain('id="root"');
    const asset = await fetch(`${h.url}/assets/app-1a2b.js`);
    expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect((await fetch(`${h.url}/assets/app-1a2b.js`, { method: 'HEAD' })).status).toBe(200);
  });

  it('never reads outside its directory, and API routes still need the token', async () => {
    for (const p of ['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/assets%5c..%5c..%5csecret.txt', '/%00index.html']) {
      const r = await fetch(`${h.url}${p}`);
      expect(r.status, p).not.toBe(200);
      expect(await r.text()).not.toContain('do not serve me');
    }
    expect((await fetch(`${h.url}/v1/memory`)).status).toBe(401);
    expect((await fetch(`${h.url}/v1/info`)).status).toBe(401);
    // Unknown non-API paths fall through to the gateway (401 without a token, so routes cannot be mapped).
    expect((await fetch(`${h.url}/nope.js`)).status).toBe(401);
  });

  it('GET /v1/info reports the model status (no secrets) and the features', async () => {
    const info = await (await fetch(`${h.url}/v1/info`, { headers: auth })).json();
    expect(info).toEqual({ identity: { userId: 'default', canDecide: true }, model: { configured: false, reason: 'MINARA_MODEL is not set.' }, features: { memory: true, learning: false, deliveries: false, workflows: false, alerts: false, shadow: false, workspace: true, artifacts: false, backtestRuns: false, files: false, approvals: true, mcp: false, web: true } });
  });

  it('GET /v1/memory?q= searches the tenant memories; a bad q is a 400 naming it', async () => {
    await h.memoryFor('default').write({ category: 'preference', content: 'Prefers limit orders over market orders.', source: 'user_manual' });
    await h.memoryFor('default').write({ category: 'note', content: 'Watching SOL funding.' });
    const found = (await (await fetch(`${h.url}/v1/memory?q=${encodeURIComponent('limit orders')}`, { headers: auth })).json()) as { memories: Array<{ content: string }> };
    expect(found.memories.map((m) => m.content)).toEqual(['Prefers limit orders over market orders.']);
    const bad = await fetch(`${h.url}/v1/memory?q=`, { headers: auth });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toMatch(/^q: /);
  });

  it('under a basePath: /api redirects to /api/ and the app is served below it; web needs a dir', async () => {
    const runtime = createAgentRuntime({ model: h.model, tools: h.tools, storage: h.storage });
    const mounted = createGateway({ runtime, storage: h.storage, tools: h.tools, basePath: '/api', web: { dir: web } });
    const redirect = await mounted.fetch(new Request('http://localhost/api'));
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/api/');
    expect((await mounted.fetch(new Request('http://localhost/api/'))).headers.get('content-type')).toContain('text/html');
    expect((await mounted.fetch(new Request('http://localhost/index.html'))).status).toBe(404);
    expect(() => createGateway({ runtime, storage: h.storage, tools: h.tools, web: { dir: '' } })).toThrow(/"web"/);
  });
});
