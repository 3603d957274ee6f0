import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createApp, createArtifactStore, createArtifactTools, createToolCallContext, createToolRegistry, findArtifactUris, type MinaraApp, parseArtifactRef, silentLogger, type ToolEnvelope,
} from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { lineSpec, urisInPrompt } from './helpers';

const dirs: string[] = [];
const apps: MinaraApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const temp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-artifacts-'));
  dirs.push(d);
  return d;
};
/** dispatch answers with the envelope as JSON text. */
const P = (r: unknown): ToolEnvelope => (typeof r === 'string' ? JSON.parse(r) : r) as ToolEnvelope;
const INJECT = '</script><script>alert("pwned")</script><img src=x onerror=alert(1)>';

async function appWith(script: Parameters<typeof createScriptedModel>[0], dataDir = temp()) {
  const model = createScriptedModel(script);
  const app = await createApp({ envFileDir: false, env: {}, logger: silentLogger, config: { dataDir }, model, finance: false, workspace: false, artifacts: { png: false } });
  apps.push(app);
  return { app, model, dataDir };
}

async function run(app: MinaraApp, sessionId: string, message: string) {
  return app.runtime.generate({ sessionId, message });
}

describe('artifacts through a turn', () => {
  it('a turn creates a chart and a spreadsheet, the materializer writes them, a second session reads them by URI', async () => {
    const { app, model, dataDir } = await appWith([
      { toolCalls: [{ toolName: 'create_chart', input: { title: `Equity ${INJECT}`, spec: lineSpec(120) } }, { toolName: 'create_spreadsheet', input: { title: 'Trades', csvContent: 'date,pnl\n2026-01-01,12.5\n2026-01-02,-3\n' } }] },
      (call) => ({ text: `Here is the backtest: ${urisInPrompt(call).join(' and ')}.` }),
    ]);
    const first = await run(app, 's1', 'Backtest my strategy and chart it');
    const refs = findArtifactUris(first.text);
    expect(refs.map((r) => r.kind)).toEqual(['chart', 'spreadsheet']);
    const [chart, sheet] = refs;
    // Files under <dataDir>/artifacts/<id>/, never under the sandbox.
    const chartDir = path.join(dataDir, 'artifacts', chart!.id);
    const html = readFileSync(path.join(chartDir, 'index.html'), 'utf8');
    expect(html).toContain('<div id="chart"');
    expect(html).toContain('new vega.View');
    expect(html).not.toMatch(/<script[^>]+src=/);
    expect(JSON.parse(readFileSync(path.join(chartDir, 'artifact.json'), 'utf8'))).toMatchObject({ id: chart!.id, kind: 'chart', status: 'completed', data: { dataPoints: 120 } });
    expect(readFileSync(path.join(dataDir, 'artifacts', sheet!.id, 'data.csv'), 'utf8')).toBe('date,pnl\n2026-01-01,12.5\n2026-01-02,-3\n');
    expect(readFileSync(path.join(dataDir, 'artifacts', sheet!.id, 'index.html'), 'utf8')).toContain('<td>-3</td>');
    expect(existsSync(path.join(dataDir, 'sandbox', 'files', chart!.id))).toBe(false);

    // A second session (a later conversation) resolves the URIs.
    model.push({ toolCalls: [{ toolName: 'get_artifact', input: { uri: sheet!.uri } }, { toolName: 'get_artifact', input: { uri: chart!.uri } }] }, { text: 'Read them.' });
    const second = await run(app, 's2', `What was in ${sheet!.uri}?`);
    const results = second.events.filter((e) => e.type === 'tool-result').map((e) => (e as { output: ToolEnvelope }).output);
    expect(results[0]).toMatchObject({ ok: true, data: { uri: sheet!.uri, kind: 'spreadsheet', data: { csvContent: 'date,pnl\n2026-01-01,12.5\n2026-01-02,-3\n', rows: 2, columns: 2 } } });
    expect(results[1]).toMatchObject({ ok: true, data: { kind: 'chart', data: { dataPoints: 120 } } });
    expect(JSON.stringify(results[1])).not.toContain('"vega"');
    model.assertConsumed();
  });

  it('escapes script injection in titles: the viewer shows the text, no tag of it survives', async () => {
    const storage = createInMemoryStorage();
    const store = createArtifactStore({ storage });
    const { createArtifactMaterializer } = await import('@minara/agent');
    const dir = temp();
    const m = createArtifactMaterializer({ store, dir, png: false, logger: silentLogger });
    const chart = await store.createChart({ userId: 'u1' }, { title: INJECT, spec: lineSpec(5, INJECT), description: INJECT });
    const report = await store.createReport({ userId: 'u1' }, { title: INJECT, markdown: `# ${INJECT}\n\n**bold** ${INJECT}\n\n| a | b |\n|---|---|\n| ${INJECT} | 2 |` });
    const sheet = await store.createSpreadsheet({ userId: 'u1' }, { title: INJECT, csvContent: `a,b\n"${INJECT.replace(/"/g, '""')}",1` });
    const written = await m.materialize({ userId: 'u1' }, `${chart.uri} ${report.uri} ${sheet.uri}`);
    expect(written).toHaveLength(3);
    for (const w of written) {
      const html = readFileSync(w.html, 'utf8');
      expect(html, w.uri).not.toContain('<script>alert');
      expect(html, w.uri).not.toContain('<img src=x');
      expect(html, w.uri).toContain('&lt;/script&gt;&lt;script&gt;alert(&quot;pwned&quot;)');
      // Exactly the scripts the viewer brings: none for a report or a spreadsheet, three for a chart.
      expect(html.match(/<script/g)?.length ?? 0, w.uri).toBe(w.kind === 'chart' ? 3 : 0);
    }
    const chartHtml = readFileSync(written[0]!.html, 'utf8');
    // The title inside the Vega spec is JSON with "<" escaped, so it cannot close the script element.
    expect(chartHtml).toContain('\\u003c/script>\\u003cscript>alert');
    expect(readFileSync(written[1]!.html, 'utf8')).toContain('<strong>bold</strong>');
  });

  it('an unknown or another user\'s id is ARTIFACT_NOT_FOUND listing the user\'s recent URIs; bad specs are ARTIFACT_INVALID', async () => {
    const storage = createInMemoryStorage();
    const store = createArtifactStore({ storage });
    const registry = createToolRegistry({ storage, tools: createArtifactTools({ store }) });
    const ctx = (userId: string) => createToolCallContext({ sessionId: 's1', userId });
    const made = P(await registry.dispatch('create_report', { title: 'Weekly', markdown: '# Week 1' }, { context: ctx('alice') })) as ToolEnvelope;
    expect(made).toMatchObject({ ok: true, data: { uri: expect.stringMatching(/^report:\/\/r-[a-z0-9]{16}$/) } });
    const uri = (made as { data: { uri: string } }).data.uri;
    const missing = P(await registry.dispatch('get_artifact', { uri: 'chart://x-doesnotexist1' }, { context: ctx('alice') })) as ToolEnvelope;
    expect(missing).toMatchObject({ ok: false, code: 'ARTIFACT_NOT_FOUND' });
    expect((missing as { error: string }).error).toContain(uri);
    const foreign = P(await registry.dispatch('get_artifact', { uri }, { context: ctx('bob') })) as ToolEnvelope;
    expect(foreign).toMatchObject({ ok: false, code: 'ARTIFACT_NOT_FOUND' });
    expect((foreign as { error: string }).error).toContain('none exist yet');
    // A scheme that does not match the id's prefix does not resolve.
    expect(P(await registry.dispatch('get_artifact', { uri: uri.replace('report://', 'chart://') }, { context: ctx('alice') }))).toMatchObject({ ok: false, code: 'ARTIFACT_NOT_FOUND' });
    for (const [spec, msg] of [
      [{ data: { url: 'http://169.254.169.254/latest' }, mark: 'line' }, 'spec.data.url'],
      [{ data: { values: [] }, mark: 'sparkle' }, 'spec.mark'],
      [{ data: { values: [{ a: 1 }] } }, 'Vega-Lite cannot compile'],
      [{ data: { values: Array.from({ length: 100_001 }, () => ({})) }, mark: 'point' }, 'limit is 100000'],
    ] as const) {
      const r = P(await registry.dispatch('create_chart', { title: 't', spec }, { context: ctx('alice') })) as ToolEnvelope;
      expect(r, JSON.stringify(spec).slice(0, 80)).toMatchObject({ ok: false, code: 'ARTIFACT_INVALID' });
      expect((r as { error: string }).error).toContain(msg);
    }
    const badCsv = P(await registry.dispatch('create_spreadsheet', { csvContent: 'a,b\n1,2,3\n' }, { context: ctx('alice') })) as ToolEnvelope;
    expect(badCsv).toMatchObject({ ok: false, code: 'ARTIFACT_INVALID' });
    // Failed builds leave their row in `error`, with the reason.
    const errored = await storage.artifacts.list({ userId: 'alice' }, { kind: 'chart' });
    expect(errored.every((r) => r.status === 'error' && r.error)).toBe(true);
  });

  it('write_file cannot touch an artifact: the sandbox and the artifact folder never overlap', async () => {
    const { app, dataDir } = await appWith([]);
    const a = await app.artifacts!.createReport({ userId: 'default' }, { title: 'Keep me', markdown: 'original' });
    const [w] = await app.materializer!.materialize({ userId: 'default' }, a.uri);
    const before = readFileSync(w!.html, 'utf8');
    const ctx = createToolCallContext({ sessionId: 'w', userId: 'default' });
    for (const target of [`../../artifacts/${a.id}/index.html`, path.join(dataDir, 'artifacts', a.id, 'index.html'), `../artifacts/${a.id}/index.html`]) {
      const asked = P(await app.tools.dispatch('write_file', { path: target, content: 'pwned' }, { context: ctx })) as ToolEnvelope & { approval?: { approvalId: string } };
      let result: ToolEnvelope = asked;
      if (!asked.ok && asked.code === 'APPROVAL_REQUIRED') {
        await app.tools.approvals.decide(asked.approval!.approvalId, { approved: true });
        result = P(await app.tools.dispatch('write_file', { path: target, content: 'pwned' }, { context: ctx, approvalId: asked.approval!.approvalId })) as ToolEnvelope;
      }
      expect(result, target).toMatchObject({ ok: false, code: 'SANDBOX_ESCAPE' });
    }
    expect(readFileSync(w!.html, 'utf8')).toBe(before);
    expect(path.relative(path.join(dataDir, 'sandbox', 'files'), w!.dir).startsWith('..')).toBe(true);
  });

  it('reads URIs and bare ids; ignores mismatched schemes in text', () => {
    expect(parseArtifactRef('chart://x-abc123')).toEqual({ kind: 'chart', id: 'x-abc123' });
    expect(parseArtifactRef('x-abc123')).toEqual({ id: 'x-abc123' });
    expect(parseArtifactRef('report://x-abc123')).toBeUndefined();
    expect(parseArtifactRef('../etc')).toBeUndefined();
    expect(findArtifactUris('a chart://x-abc123, again chart://x-abc123 and report://x-abc123 and spreadsheet://x-zzz999.')).toEqual([
      { kind: 'chart', id: 'x-abc123', uri: 'chart://x-abc123' },
      { kind: 'spreadsheet', id: 'x-zzz999', uri: 'spreadsheet://x-zzz999' },
    ]);
  });
});
