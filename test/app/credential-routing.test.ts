import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, endpointWarnings, type Logger } from '@minara/agent';

// Two loopback servers record which credentials reach them: the model server and the Minara API. Each key
// must reach only its own host (issue: `/call get_price` sent the Minara key to the LLM server).

interface Seen { path: string; auth: string | undefined }
const MINARA_KEY = 'mnr-live-0123456789abcdef';
const LLM_KEY = 'llm-local-fedcba9876543210';

function sse(res: import('node:http').ServerResponse, chunks: unknown[]) {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const c of chunks) res.write(`data: ${JSON.stringify(c)}\n\n`);
  res.end('data: [DONE]\n\n');
}

let llm: Server;
let minara: Server;
const llmSeen: Seen[] = [];
const minaraSeen: Seen[] = [];
const url = (s: Server) => `http://127.0.0.1:${(s.address() as { port: number }).port}`;

beforeAll(async () => {
  llm = createServer((req, res) => {
    llmSeen.push({ path: req.url ?? '', auth: req.headers.authorization });
    req.resume();
    req.on('end', () => {
      const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'local' };
      sse(res, [
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello from the local model.' }, finish_reason: null }] },
        { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } },
      ]);
    });
  });
  minara = createServer((req, res) => {
    minaraSeen.push({ path: req.url ?? '', auth: req.headers.authorization });
    if ((req.url ?? '').startsWith('/v1/market/price')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(readFileSync(new URL('../finance/fixtures/minara-price.json', import.meta.url)));
    } else {
      res.writeHead(404).end();
    }
  });
  await Promise.all([llm, minara].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))));
});

afterAll(async () => {
  await Promise.all([llm, minara].map((s) => new Promise((r) => s.close(r))));
});

describe('each credential reaches only its own host', () => {
  it('the legacy MINARA_BASE_URL points the model only; the Minara key goes only to MINARA_API_BASE_URL', async () => {
    const warnings: string[] = [];
    const logger: Logger = { debug() {}, info() {}, warn: (m) => { warnings.push(m); }, error() {} };
    const app = await createApp({
      envFileDir: false,
      logger,
      env: {
        MINARA_DATA_DIR: path.join(mkdtempSync(path.join(tmpdir(), 'minara-cred-')), 'data'),
        MINARA_MODEL: 'openai-compatible:local',
        MINARA_BASE_URL: `${url(llm)}/v1`,
        OPENAI_COMPATIBLE_API_KEY: LLM_KEY,
        MINARA_API_KEY: MINARA_KEY,
        MINARA_API_BASE_URL: url(minara),
      },
    });
    try {
      const price = JSON.parse(await app.tools.dispatch('get_price', { symbol: 'ETH' }));
      expect(price).toMatchObject({ ok: true, data: { priceUsd: 3499.12 } });
      const turn = await app.runtime.generate({ sessionId: 'cred-1', message: 'hello' });
      expect(turn.text).toContain('Hello from the local model.');
    } finally {
      await app.close();
    }
    expect(minaraSeen.length).toBeGreaterThan(0);
    expect(llmSeen.length).toBeGreaterThan(0);
    expect(minaraSeen.every((s) => s.auth === `Bearer ${MINARA_KEY}`)).toBe(true);
    expect(llmSeen.every((s) => s.auth === `Bearer ${LLM_KEY}`)).toBe(true);
    expect(JSON.stringify(llmSeen)).not.toContain(MINARA_KEY);
    expect(JSON.stringify(minaraSeen)).not.toContain(LLM_KEY);
    expect(warnings.some((w) => w.includes('MINARA_MODEL_BASE_URL'))).toBe(true);
    expect(warnings.join('\n')).not.toContain(MINARA_KEY);
  });

  it('warns only for the ambiguous legacy setup', () => {
    expect(endpointWarnings({ MINARA_BASE_URL: 'http://x', MINARA_API_KEY: 'k' })).toHaveLength(1);
    expect(endpointWarnings({ MINARA_MODEL_BASE_URL: 'http://x', MINARA_API_KEY: 'k' })).toEqual([]);
    expect(endpointWarnings({ MINARA_BASE_URL: 'http://x' })).toEqual([]);
  });
});
