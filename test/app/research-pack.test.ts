/**
 * The research pack through createApp: web_search appears only with a provider configured in the environment.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type MinaraApp, parseEnvelope, silentLogger } from '@minara/agent';

const apps: MinaraApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
const open = async (opts: Parameters<typeof createApp>[0]) => {
  const app = await createApp({ logger: silentLogger, envFileDir: false, ...opts, env: { MINARA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'minara-research-')), ...opts?.env } });
  apps.push(app);
  return app;
};

let server: Server;
let base: string;
beforeAll(async () => {
  const brave = readFileSync(path.join(import.meta.dirname, '..', 'tools', 'fixtures', 'web-search', 'brave.json'), 'utf8');
  server = createServer((req, res) => {
    if (req.url?.startsWith('/res/v1/web/search') && req.headers['x-subscription-token'] === 'app-test-key-0123456789') res.writeHead(200, { 'content-type': 'application/json' }).end(brave);
    else res.writeHead(401).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => server.close());

describe('research pack in createApp', () => {
  it('web_search is absent without a provider, present with BRAVE_API_KEY, and checks results with the web URL policy', async () => {
    expect((await open({})).tools.has('web_search')).toBe(false);
    const app = await open({ env: { BRAVE_API_KEY: 'app-test-key-0123456789', BRAVE_BASE_URL: base }, web: { resolve: async () => ['93.184.216.34'], denyHosts: ['data.example.org'] } });
    expect(app.tools.has('web_search')).toBe(true);
    const r = parseEnvelope(await app.tools.dispatch('web_search', { query: 'bitcoin etf flows' })) as { ok: true; data: { results: Array<{ url: string }>; dropped: Array<{ url: string; reason: string }> } };
    expect(r.data.results.map((x) => x.url)).toEqual(['https://news.example.com/markets/2026/05/bitcoin-etf-flows', 'http://intranet.example.com/admin/flows']);
    expect(r.data.dropped.find((d) => d.url.includes('data.example.org'))!.reason).toContain('deny list');
    expect((await open({ env: { BRAVE_API_KEY: 'k-0123456789' }, research: false })).tools.has('web_search')).toBe(false);
  });

  it('run_code is registered (JavaScript; Python only with E2B_API_KEY), asks once per session, and the sandbox closes with the app', async () => {
    const app = await open({});
    const tool = app.tools.get('run_code')!;
    expect(tool.permissionTier).toBe(2);
    expect(tool.description).not.toContain('Python');
    expect((await open({ env: { E2B_API_KEY: 'e2b_0123456789abcdef0123456789abcdef' } })).tools.get('run_code')!.description).toContain('Python (e2b)');
    expect((await open({ research: { runCode: false } })).tools.has('run_code')).toBe(false);
    const first = parseEnvelope(await app.tools.dispatch('run_code', { code: 'return data * 2', data: 21 })) as { ok: false; code: string };
    expect(first.code).toBe('APPROVAL_REQUIRED');
  });

  it('registers the research skills with their tools; methodology_lens applies graduated methodologies; alert_request is the alert engine', async () => {
    const app = await open({});
    for (const id of ['deep-research', 'analysis', 'code-analysis', 'memory.alerts', 'minara.autopilot']) expect(app.skills.has(id), id).toBe(true);
    expect(app.background.status().map((j) => j.id)).toContain('finance:autopilot');
    expect(app.skills.get('analysis')!.toolNames).toEqual(expect.arrayContaining(['methodology_lens', 'analyze_token', 'run_code']));
    const learning = app.learning!;
    const { methodology } = await learning.createMethodology({ text: 'Buy BTC dips when RSI(14) is below 30 on the 4h', asset: 'BTC', origin: 'api' });
    await learning.graduateMethodology(methodology.id, { force: true, reason: 'test' });
    await learning.createMethodology({ text: 'Fade ETH pumps above the upper band', asset: 'ETH', origin: 'api' });
    const lens = parseEnvelope(await app.tools.dispatch('methodology_lens', { symbol: 'btc' })) as { ok: true; data: { assetClass: string; methodologies: Array<{ text: string }>; untestedCandidates: number; market: { symbol: string } } };
    expect(lens.ok).toBe(true);
    expect(lens.data).toMatchObject({ assetClass: 'crypto_major', methodologies: [{ text: 'Buy BTC dips when RSI(14) is below 30 on the 4h' }], untestedCandidates: 1, market: { symbol: 'BTC' } });

    // memory.alerts uses the finance pack's alert engine: alerts are rows of the alerts domain, not memories
    // (alert memories an earlier build wrote are left as they were).
    const added = parseEnvelope(await app.tools.dispatch('alert_request', { op: 'add', asset: 'btc', condition: 'below', threshold: 60_000 })) as { ok: true; data: { added: { id: number; asset: string }; note: string } };
    expect(added.data.note).toContain('an alert fires once');
    expect(added.data.added.asset).toBe('BTC');
    expect(await app.memory.read({ category: 'alert' })).toEqual([]);
    expect(await app.storage.alerts.list({ userId: 'default' })).toMatchObject([{ id: added.data.added.id, asset: 'BTC', condition: 'below', threshold: 60_000, status: 'active' }]);
    const cancelled = parseEnvelope(await app.tools.dispatch('alert_request', { op: 'cancel', id: added.data.added.id })) as { ok: true; data: { active: unknown[] } };
    expect(cancelled.data.active).toEqual([]);
    expect(parseEnvelope(await app.tools.dispatch('alert_request', { op: 'add', asset: 'ETH' }))).toMatchObject({ ok: false, error: expect.stringContaining('asset, condition and threshold') });
    // Without the finance pack there is no market to check: no alert tool, and the skill is hidden.
    const noFinance = await open({ finance: false });
    expect(noFinance.tools.has('alert_request')).toBe(false);
  });
});
