import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp, type MinaraApp, silentLogger } from '@minara/agent';
import { createGateway, serveGateway, type ServedGateway } from '@minara/agent/gateway';
import { createScriptedModel, type ScriptedCall, type ScriptEntry } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { lineSpec } from '../artifacts/helpers';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201e5270de20000000049454e44ae426082', 'hex');
const running: Array<{ app: MinaraApp; served: ServedGateway; dir: string }> = [];
afterEach(async () => {
  for (const r of running.splice(0)) {
    await r.served.close();
    await r.app.close();
    rmSync(r.dir, { recursive: true, force: true });
  }
});

async function start(script: ScriptEntry[] = [], files: { maxBytes?: number } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-gw-artifacts-'));
  const model = createScriptedModel(script);
  const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, config: { dataDir: dir }, model, finance: false, workspace: false, artifacts: { png: false }, files });
  const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, artifacts: app.artifacts, files: app.files, trustUserHeader: true, logger: silentLogger });
  const served = await serveGateway({ gateway, port: 0 });
  running.push({ app, served, dir });
  const as = (user: string, init: RequestInit = {}) => ({ ...init, headers: { 'x-minara-user': user, ...(init.headers as Record<string, string> | undefined) } });
  return { app, model, url: served.url, as };
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies of a test
const body = async (r: Response | Promise<Response>): Promise<any> => (await r).json();
const upload = (url: string, init: RequestInit, query = '') => fetch(`${url}/v1/files${query}`, { method: 'POST', ...init });

describe('gateway: files', () => {
  it('stores an upload under a stable key, sniffing the type; a lying content type is handled per the bytes', async () => {
    const { url, as, app } = await start();
    const csv = await body(upload(url, as('alice', { body: 'date,close\n2026-01-01,97000\n', headers: { 'content-type': 'text/csv' } }), '?filename=q1.csv'));
    expect(csv.file).toMatchObject({ key: expect.stringMatching(/^f-\d{13}-[a-z0-9]{12}\.csv$/), mediaType: 'text/csv', sizeBytes: 28, filename: 'q1.csv', url: expect.stringMatching(/^\/v1\/files\//) });
    // A PNG declared as text is a PNG; an HTML page declared as a PNG is plain text (never served as HTML).
    const png = (await body(upload(url, as('alice', { body: PNG, headers: { 'content-type': 'text/plain' } })))).file;
    expect(png).toMatchObject({ mediaType: 'image/png', declaredType: 'text/plain', key: expect.stringMatching(/\.png$/) });
    const html = (await body(upload(url, as('alice', { body: '<html><script>alert(1)</script></html>', headers: { 'content-type': 'image/png' } })))).file;
    expect(html).toMatchObject({ mediaType: 'text/plain', declaredType: 'image/png' });
    const served = await fetch(`${url}/v1/files/${html.key}`, as('alice'));
    expect(served.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('content-security-policy')).toContain('sandbox');
    const back = await fetch(`${url}/v1/files/${png.key}`, as('alice'));
    expect(back.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await back.arrayBuffer()).equals(PNG)).toBe(true);
    // Bytes on disk under <dataDir>/files, metadata in storage.
    expect(await app.files!.pathOf({ userId: 'alice' }, png.key)).toContain(`${path.sep}files${path.sep}`);
    expect(await app.storage.files.get({ userId: 'alice' }, png.key)).toMatchObject({ sizeBytes: PNG.length });
  });

  it('refuses zero bytes (400) and oversized uploads (413 naming the limit, by Content-Length and while streaming)', async () => {
    const { url, as } = await start([], { maxBytes: 1024 });
    const empty = await upload(url, as('alice', { body: '' }));
    expect(empty.status).toBe(400);
    expect((await body(empty)).error).toMatchObject({ code: 'FILE_EMPTY' });
    const big = await upload(url, as('alice', { body: Buffer.alloc(2048, 65) }));
    expect(big.status).toBe(413);
    const tooBig = await body(big);
    expect(tooBig).toMatchObject({ error: { code: 'FILE_TOO_LARGE' }, limitBytes: 1024 });
    expect(tooBig.error.message).toContain('1024 bytes');
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < 4; i++) c.enqueue(new Uint8Array(512).fill(66));
        c.close();
      },
    });
    const streamed = await upload(url, as('alice', { body: chunked, duplex: 'half' } as RequestInit));
    expect(streamed.status).toBe(413);
  });

  it('defaults to a 20 MB limit', async () => {
    const { app } = await start();
    expect(app.files!.maxBytes).toBe(20 * 1024 * 1024);
  });

  it("another user's key is 404 (not 403) and audited", async () => {
    const { url, as, app } = await start();
    const f = (await body(upload(url, as('alice', { body: 'a,b\n1,2\n', headers: { 'content-type': 'text/csv' } })))).file;
    const r = await fetch(`${url}/v1/files/${f.key}`, as('mallory'));
    expect(r.status).toBe(404);
    const audit = await app.storage.audit.query({ toolName: 'gateway:files' });
    expect(audit[0]).toMatchObject({ decision: 'blocked', code: 'NOT_FOUND', source: 'gateway' });
    expect(JSON.parse(audit[0]!.argsJson)).toEqual({ key: f.key, userId: 'mallory' });
  });

  it('a file part in a chat message reaches the model as an image / structured text, and is stored as a key (no binary)', async () => {
    let seen: ScriptedCall | undefined;
    const { url, as, app } = await start([
      (call) => {
        seen = call;
        return { text: 'Got the sheet and the screenshot.' };
      },
    ]);
    const sheet = (await body(upload(url, as('alice', { body: 'date,close\n2026-01-01,97000\n2026-01-02,98000\n', headers: { 'content-type': 'text/csv' } }), '?filename=btc.csv'))).file;
    const shot = (await body(upload(url, as('alice', { body: PNG, headers: { 'content-type': 'image/png' } })))).file;
    // AI SDK 7 deprecates the `image` content part and warns on each call that carries one: the image goes as a file part.
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }): void => void warnings.push(`${w.code ?? w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const res = await fetch(`${url}/v1/chat`, as('alice', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'c1', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'Look' }, { type: 'file', mediaType: 'text/csv', url: `minara-file:${sheet.key}` }, { type: 'file', mediaType: 'image/png', url: `${url}/v1/files/${shot.key}` }] }] }),
    }));
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('Got the sheet');
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings.filter((w) => /AISDK_DEP|deprecated/i.test(w))).toEqual([]);
    const user = seen!.prompt.find((m) => m.role === 'user')!;
    const parts = user.content as Array<{ type: string; text?: string; mediaType?: string; data?: unknown }>;
    expect(parts.map((p) => p.type)).toEqual(['text', 'text', 'file']);
    expect(parts[1]!.text).toContain('| date | close |');
    expect(parts[1]!.text).toContain('| 2026-01-02 | 98000 |');
    expect(parts[2]).toMatchObject({ type: 'file', mediaType: 'image/png' });
    const stored = await app.storage.conversations.listMessages('c1');
    const json = stored[0]!.json;
    expect(json).toContain(`minara-file:${shot.key}`);
    expect(json).not.toContain(PNG.toString('base64').slice(0, 20));
    expect(json.length).toBeLessThan(600);
    // Someone else's key in a message is refused before any turn starts.
    const foreign = await fetch(`${url}/v1/chat`, as('mallory', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'c2', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'file', mediaType: 'image/png', url: `minara-file:${shot.key}` }] }] }),
    }));
    expect(foreign.status).toBe(400);
    const inline = await fetch(`${url}/v1/chat`, as('alice', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'c3', messages: [{ id: 'm1', role: 'user', parts: [{ type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${PNG.toString('base64')}` }] }] }),
    }));
    expect(inline.status).toBe(400);
    expect((await body(inline)).error.message).toContain('POST /v1/files');
  });
});

describe('gateway: artifacts', () => {
  it('serves an artifact as JSON and as a sandboxed viewer to its owner; 404 + audit for anyone else', async () => {
    const { url, as, app } = await start();
    const chart = await app.artifacts!.createChart({ userId: 'alice' }, { title: 'BTC <script>', spec: lineSpec(30) });
    const got = await body(fetch(`${url}/v1/artifacts/${chart.id}`, as('alice')));
    expect(got.artifact).toMatchObject({ id: chart.id, uri: chart.uri, kind: 'chart', status: 'completed', view: `/v1/artifacts/${chart.id}/view` });
    expect((await fetch(`${url}/v1/artifacts/${encodeURIComponent(chart.uri)}`, as('alice'))).status).toBe(200);
    const view = await fetch(`${url}/v1/artifacts/${chart.id}/view`, as('alice'));
    expect(view.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(view.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox allow-scripts/);
    const html = await view.text();
    expect(html).toContain('BTC &lt;script&gt;');
    expect(html).not.toContain('BTC <script>');
    expect((await body(fetch(`${url}/v1/artifacts`, as('alice')))).artifacts.map((a: { id: string }) => a.id)).toEqual([chart.id]);
    expect((await body(fetch(`${url}/v1/artifacts`, as('mallory')))).artifacts).toEqual([]);
    for (const p of [`/v1/artifacts/${chart.id}`, `/v1/artifacts/${chart.id}/view`, '/v1/artifacts/x-neverexisted']) {
      expect((await fetch(`${url}${p}`, as('mallory'))).status, p).toBe(404);
    }
    const audit = await app.storage.audit.query({ toolName: 'gateway:artifacts' });
    expect(audit).toHaveLength(3);
    expect(audit.map((a) => JSON.parse(a.argsJson).userId)).toEqual(['mallory', 'mallory', 'mallory']);
  });
});

describe('gateway: signed view links', () => {
  it('viewUrl opens the viewer without the token for its user only; a tampered or foreign link is 401', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-gw-links-'));
    const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, config: { dataDir: dir }, model: createScriptedModel([]), finance: false, workspace: false, artifacts: { png: false } });
    const gateway = createGateway({ runtime: app.runtime, storage: app.storage, tools: app.tools, artifacts: app.artifacts, authToken: 'link-test-token-0123456789', logger: silentLogger });
    const served = await serveGateway({ gateway, port: 0 });
    running.push({ app, served, dir });
    const r = await app.artifacts!.createReport({ userId: 'default' }, { title: 'R', markdown: '# hi' });
    const auth = { headers: { authorization: 'Bearer link-test-token-0123456789' } };
    expect((await fetch(`${served.url}/v1/artifacts/${r.id}/view`)).status).toBe(401);
    const { artifact } = await body(fetch(`${served.url}/v1/artifacts/${r.id}`, auth));
    expect(artifact.viewUrl).toMatch(new RegExp(`^/v1/artifacts/${r.id}/view\\?u=default&exp=\\d+&sig=`));
    const ok = await fetch(`${served.url}${artifact.viewUrl}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('<h1>hi</h1>');
    expect((await fetch(`${served.url}${artifact.viewUrl.replace('u=default', 'u=mallory')}`)).status).toBe(401);
    expect((await fetch(`${served.url}${artifact.viewUrl.replace(/sig=.{4}/, 'sig=AAAA')}`)).status).toBe(401);
    const other = await app.artifacts!.createReport({ userId: 'default' }, { title: 'S', markdown: 'x' });
    expect((await fetch(`${served.url}${artifact.viewUrl.replace(r.id, other.id)}`)).status).toBe(401);
  });
});
