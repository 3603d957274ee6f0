/**
 * `minara serve` does the user's `## Schedule` with nobody chatting: the real CLI process, an OpenAI-compatible
 * model fixture and a delivery receiver on 127.0.0.1; the answer arrives signed (HMAC verified) within one
 * schedule interval, and the job's run is recorded.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { verifyWebhookSignature } from '@minara/agent';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.join(import.meta.dirname, '..', '..');
const SECRET = 'delivery-secret-0123456789';
const servers: Server[] = [];
const dirs: string[] = [];
afterAll(() => {
  for (const s of servers) s.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<number> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}

describe('minara serve with a schedule and nobody chatting', () => {
  it('runs the `every 1m` entry as a cron turn and delivers the answer to the signed webhook', async () => {
    const prompts: string[] = [];
    const modelPort = await listen((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        prompts.push(raw);
        const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\n\n`;
        const base = { id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'fixture' };
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'BTC funding is calm: +0.01%.' }, finish_reason: null }] }));
        res.write(chunk({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
        res.write(chunk({ ...base, choices: [], usage: { prompt_tokens: 100, completion_tokens: 8, total_tokens: 108 } }));
        res.end('data: [DONE]\n\n');
      });
    });
    const received: Array<{ verified: boolean; body: { text?: string; source?: string; jobId?: string } }> = [];
    const hookPort = await listen((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const ts = Number(req.headers['x-minara-timestamp'] ?? 0);
        const sig = String(req.headers['x-minara-signature'] ?? '');
        received.push({ verified: verifyWebhookSignature(SECRET, ts, raw, sig), body: JSON.parse(raw) as { text?: string } });
        res.writeHead(200).end('ok');
      });
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-serve-bg-'));
    dirs.push(dir);
    mkdirSync(path.join(dir, 'workspace'), { recursive: true });
    writeFileSync(path.join(dir, 'workspace', 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- every 1m: report BTC funding in one line\n');
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(MINARA_|ANTHROPIC_|OPENAI_|GATEWAY_|EMBEDDING_|WORKSPACE_)/.test(k)) env[k] = v;
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'serve', '--port', '0', '--no-web', '--data-dir', dir], {
      cwd: root,
      env: {
        ...env, NO_COLOR: '1', MINARA_MODEL: 'openai-compatible:fixture', MINARA_MODEL_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
        MINARA_DELIVERY_WEBHOOK_URL: `http://127.0.0.1:${hookPort}/hook`, MINARA_DELIVERY_WEBHOOK_SECRET: SECRET, MINARA_HEARTBEAT_EVERY: '0',
        MINARA_PERSONALIZATION_REBUILD: 'disabled',
      },
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const deadline = Date.now() + 90_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
      expect(received.length, out).toBeGreaterThan(0);
      expect(received[0]).toMatchObject({ verified: true, body: { text: 'BTC funding is calm: +0.01%.', source: 'cron', jobId: expect.stringMatching(/^schedule:/) } });
      expect(prompts[0]).toContain('report BTC funding in one line');
      expect(out).toMatch(/schedule:[0-9a-f]+ \(every 1m/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  }, 120_000);
});
