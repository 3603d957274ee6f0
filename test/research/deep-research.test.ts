/**
 * Deep research end to end, offline: the scripted model activates `deep-research`, plans with `todo`, searches a
 * SearXNG fixture, reads two fixture pages with `web_fetch` (all on 127.0.0.1, allowed for the test), and writes
 * the report. `create_research_report` refuses a citation of a page not read in the turn and a paragraph without a
 * citation, then saves the corrected report as a `report://` artifact whose Sources are the pages read. A later turn
 * cannot cite pages read in an earlier one.
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkCitations, citationNumbers, claimBlocks, createApp, createSearxngSearchProvider, createToolCallContext, createToolRegistry, createWebTools, type MinaraApp,
  noteFetchedPage, fetchedPages, parseEnvelope, silentLogger,
} from '@minara/agent';
import { createScriptedModel, recordEvents } from '@minara/agent/testing';

let server: Server;
let base: string;
const hits: string[] = [];
beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/searxng/search') {
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({
        query: url.searchParams.get('q'),
        results: [
          { url: `${base}/pages/upgrade`, title: 'Pectra upgrade: what changes', content: 'EIP-7251 raises the maximum effective balance…', engine: 'duckduckgo' },
          { url: `${base}/pages/staking`, title: 'Validator consolidation', content: 'Operators can merge validators…', engine: 'bing' },
          { url: 'http://10.0.0.7/wiki', title: 'Internal wiki', content: 'internal', engine: 'bing' },
        ],
      }));
    }
    if (url.pathname === '/pages/upgrade') {
      return res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Pectra upgrade: what changes</title></head><body><p>EIP-7251 raises the maximum effective balance of a validator from 32 ETH to 2048 ETH.</p></body></html>');
    }
    if (url.pathname === '/pages/staking') {
      return res.writeHead(200, { 'content-type': 'text/html' }).end('<html><head><title>Validator consolidation</title></head><body><p>Large operators can consolidate validators, cutting the validator count.</p></body></html>');
    }
    return res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => server.close());

describe('deep research', () => {
  let app: MinaraApp;
  afterAll(() => app?.close());

  it('plans, searches, reads and writes a report whose every claim cites a page read in the turn', async () => {
    const upgrade = `${base}/pages/upgrade`;
    const staking = `${base}/pages/staking`;
    const body = [
      '## Findings',
      '',
      'The Pectra upgrade raises the maximum effective balance of a validator from 32 ETH to 2048 ETH [1].',
      '',
      '- Large operators can consolidate validators, so the validator count can fall [2].',
      '- Fewer validators mean less peer-to-peer load on the network [1, 2].',
    ].join('\n');
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'activate_skills', input: { ids: ['deep-research'] } }, { toolName: 'todo', input: { op: 'add', items: ['What does Pectra change for validators?', 'What does it mean for staking operators?'] } }] },
      { toolCalls: [{ toolName: 'web_search', input: { query: 'Pectra upgrade validator max effective balance' } }] },
      { toolCalls: [{ toolName: 'web_fetch', input: { url: upgrade } }, { toolName: 'web_fetch', input: { url: staking } }] },
      // A source never read and an uncited paragraph: refused, nothing saved.
      {
        toolCalls: [{
          toolName: 'create_research_report',
          input: { title: 'Pectra and validators', question: 'What does Pectra change for validators?', markdown: `${body}\n\nStaking yields will double next year.\n\nSee also [3].`, sources: [upgrade, staking, `${base}/pages/never-read`] },
        }],
      },
      { toolCalls: [{ toolName: 'create_research_report', input: { title: 'Pectra and validators', question: 'What does Pectra change for validators?', markdown: body, sources: [upgrade, staking] } }] },
      (call) => {
        const last = JSON.stringify(call.prompt.at(-1));
        const uri = /report:\/\/r-[A-Za-z0-9_-]+/.exec(last)?.[0] ?? 'report://missing';
        return { text: `Pectra lifts the validator balance cap to 2048 ETH [1] and lets operators consolidate [2]. Full report: ${uri}` };
      },
    ]);
    app = await createApp({
      logger: silentLogger, envFileDir: false, model,
      env: { MINARA_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'minara-deep-research-')) },
      web: { allowHosts: ['127.0.0.1'] },
      research: { webSearch: createSearxngSearchProvider({ baseUrl: `${base}/searxng` }) },
    });
    const r = await recordEvents(app.runtime.run({ sessionId: 'dr-1', message: 'Research the Pectra upgrade: what does it change for validators? Write me a report with sources.' }));
    model.assertConsumed();
    const end = r.ofType('turn-end')[0]!;
    expect(end.stopReason).toBe('finished');
    expect(end.text).toMatch(/Full report: report:\/\/r-/);

    const results = r.ofType('tool-result');
    const search = results.find((e) => JSON.stringify(e.output).includes('"provider":"searxng"'))!;
    expect((search.output as { data: { dropped: unknown[] } }).data.dropped).toEqual([{ url: 'http://10.0.0.7/wiki', reason: '10.0.0.7 is not on the allow list' }]);
    const refusal = results.map((e) => e.output).find((o) => !o.ok && o.error.includes('The report was not saved'));
    expect(refusal).toBeDefined();
    const problems = (refusal as { error: string }).error;
    expect(problems).toContain(`source [3] ${base}/pages/never-read was not read with web_fetch in this turn`);
    expect(problems).toContain('no citation in: "Staking yields will double next year."');
    expect(hits).not.toContain('/pages/never-read');

    const uri = /report:\/\/r-[A-Za-z0-9_-]+/.exec(end.text)![0];
    const report = await app.artifacts!.get({ userId: 'default' }, uri);
    expect(report.kind).toBe('report');
    const markdown = (report.data as { markdown: string }).markdown;
    expect(markdown).toContain('# Pectra and validators');
    expect(markdown).toContain('from 32 ETH to 2048 ETH [1]');
    expect(markdown).toMatch(new RegExp(`## Sources\\n\\n1\\. Pectra upgrade: what changes — <${upgrade.replace(/[.]/g, '\\.')}> \\(read `));
    expect(markdown).toContain(`2. Validator consolidation — <${staking}>`);
    expect(markdown).not.toContain('never-read');
    // The plan the model kept is there to read back.
    expect(JSON.stringify(results.find((e) => e.toolName === 'todo' || JSON.stringify(e.output).includes('"todos"'))?.output)).toContain('What does Pectra change for validators?');
  });

  it('a later turn cannot cite pages read in an earlier one', async () => {
    const denied = await app.tools.dispatch('create_research_report', {
      title: 'Rehash', question: 'Again?', markdown: 'The cap rises to 2048 ETH according to the page [1].', sources: [`${base}/pages/upgrade`],
    });
    expect(JSON.parse(denied)).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT', error: expect.stringContaining('no page was read with web_fetch in this turn') });
  });
});

describe('citation checks', () => {
  it('reads [n], [n, m] and [n-m]; claims are paragraphs and list items, not headings, code or tables', () => {
    expect(citationNumbers('a [1] b [2, 4] c [5-7] d [x]')).toEqual([1, 2, 4, 5, 6, 7]);
    expect(claimBlocks('# Title\n\nPara one\ncontinues [1].\n\n- item [2]\n- item two\n\n```\ncode\n```\n\n| a | b |\n|---|---|\n\n---\n> quoted [1]')).toEqual([
      'Para one continues [1].', '- item [2]', '- item two', 'quoted [1]',
    ]);
    const ctx = createToolCallContext({ sessionId: 's' });
    noteFetchedPage(ctx, { url: 'https://a.example/x', requestedUrl: 'http://a.example/x#top', fetchedAt: '2026-01-01T00:00:00Z', chars: 10 });
    const read = fetchedPages(ctx);
    expect(checkCitations('Claim [1].', ['http://a.example/x'], read)).toEqual([]); // the URL asked for, before its redirect
    expect(checkCitations('Claim [1].\n\nAgain [2].', ['https://a.example/x', 'https://a.example/x#frag'], read).map((p) => p.kind)).toEqual(['duplicate_source']);
    expect(checkCitations('Claim [1].', ['https://a.example/x', 'https://b.example/'], read).map((p) => p.kind)).toEqual(['source_not_read', 'unused_source']);
  });

  it('web_fetch reads at most maxFetchesPerTurn pages in a turn', async () => {
    const tools = createToolRegistry({ tools: createWebTools({ allowHosts: ['127.0.0.1'], maxFetchesPerTurn: 1 }) });
    const ctx = createToolCallContext({ sessionId: 'budget' });
    const fetch = (p: string) => tools.runInContext(ctx, () => tools.dispatch('web_fetch', { url: `${base}${p}` })).then(parseEnvelope);
    expect((await fetch('/pages/upgrade')).ok).toBe(true);
    expect(await fetch('/pages/staking')).toMatchObject({ ok: false, code: 'TOOL_BLOCKED', error: expect.stringContaining('the limit is 1') });
    expect(fetchedPages(ctx).get(`${base}/pages/upgrade`)).toMatchObject({ title: 'Pectra upgrade: what changes' });
  });
});
