/**
 * HTTP gateway throughput and latency on loopback: `GET /healthz` and a full scripted-model chat turn
 * (`POST /v1/chat`, two steps: a tool call, then text, read to `[DONE]`), each under 50 concurrent
 * keep-alive clients for BENCH_SECONDS (default 20). The server runs in a child process (SQLite storage,
 * the registry's audit log on, no memory or workspace) so the load generator does not share its CPU.
 * Every chat request uses a new chat id (a first turn: session created, two messages appended).
 * Run: npm run bench -- gateway   (BENCH_SECONDS=5 BENCH_CLIENTS=50 to shorten)
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier, silentLogger } from '../../src/index';
import { createGateway, serveGateway } from '../../src/gateway/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createScriptedModel, type ScriptEntry } from '../../src/testing/index';
import { fmt, machine, summarize, table } from '../lib/stats';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);

async function server(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-gateway-'));
  const storage = createSqliteStorage({ path: path.join(dir, 'bench.db'), logger: silentLogger });
  const tools = createToolRegistry({
    storage,
    tools: [
      defineTool({
        name: 'get_price', toolSet: 'read', description: 'Spot price', permissionTier: PermissionTier.READ_ONLY,
        inputSchema: z.object({ symbol: z.string() }),
        execute: ({ symbol }) => ({ symbol, priceUsd: 97_000 }),
      }),
    ],
  });
  // An endless script: each model call answers by the prompt (tool result → text, else → tool call).
  const step: ScriptEntry = (call) => {
    model.push(step);
    return call.prompt.at(-1)?.role === 'tool'
      ? { text: 'BTC is $97,000. Nothing else moved much today; volumes are average.', usage: { inputTokens: 1400, outputTokens: 20 } }
      : { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 1200, outputTokens: 15 } };
  };
  const model = createScriptedModel([step]);
  const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger, surface: 'gateway' });
  const gateway = createGateway({ runtime, storage, tools, logger: silentLogger });
  const served = await serveGateway({ gateway, port: 0 });
  // Baseline: a bare node:http server answering the same JSON, to separate the gateway's cost from Node's.
  const bare = createServer((_req, res) => {
    const body = JSON.stringify({ ok: true, activeStreams: 0 });
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) }).end(body);
  });
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  process.send?.({ url: served.url, bareUrl: `http://127.0.0.1:${(bare.address() as AddressInfo).port}` });
  process.on('message', async (m) => {
    if (m === 'stop') {
      bare.close();
      await served.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    }
  });
}

interface Outcome {
  readonly latencies: number[];
  readonly errors: number;
  readonly seconds: number;
}

function call(agent: Agent, url: URL, method: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { agent, hostname: url.hostname, port: url.port, path: url.pathname, method, headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function load(base: string, seconds: number, make: (loop: number, i: number) => { base?: string; path: string; method: string; body?: string; ok: (r: { status: number; text: string }) => boolean }): Promise<Outcome> {
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const latencies: number[] = [];
  let errors = 0;
  const t0 = performance.now();
  const deadline = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, loop) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const r = make(loop, i);
        const start = performance.now();
        try {
          const res = await call(agent, new URL(r.path, r.base ?? base), r.method, r.body);
          if (r.ok(res)) latencies.push(performance.now() - start);
          else errors++;
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  return { latencies, errors, seconds: elapsed };
}

async function main(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, BENCH_GATEWAY_ROLE: 'server' }, execArgv: ['--import', 'tsx'] });
  const { url, bareUrl } = await new Promise<{ url: string; bareUrl: string }>((resolve) => child.once('message', (m: { url: string; bareUrl: string }) => resolve(m)));
  const chatBody = (id: string) => JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'price of BTC?' }] }] });
  const scenarios = {
    'baseline: bare node:http JSON': (_loop: number, _i: number) => ({ base: bareUrl, path: '/healthz', method: 'GET', ok: (r: { status: number }) => r.status === 200 }),
    'GET /healthz': (_loop: number, _i: number) => ({ path: '/healthz', method: 'GET', ok: (r: { status: number }) => r.status === 200 }),
    'POST /v1/chat (2-step scripted turn)': (loop: number, i: number) => ({
      path: '/v1/chat', method: 'POST', body: chatBody(`bench-${process.pid}-${loop}-${i}`),
      ok: (r: { status: number; text: string }) => r.status === 200 && r.text.endsWith('data: [DONE]\n\n') && r.text.includes('"text-delta"'),
    }),
  };
  // Warm-up (unmeasured): JIT on both sides, SQLite page cache, sockets.
  await Promise.all(Array.from({ length: 20 }, (_, i) => call(new Agent(), new URL('/v1/chat', url), 'POST', chatBody(`warm-${i}`))));
  await load(url, 2, scenarios['GET /healthz']);
  await load(url, 2, scenarios['baseline: bare node:http JSON']);
  const rows: Array<Array<string | number>> = [];
  for (const [name, make] of Object.entries(scenarios)) {
    const r = await load(url, SECONDS, make);
    const s = summarize(r.latencies);
    rows.push([name, s.n, r.errors, Math.round(s.n / r.seconds), fmt(s.p50, 2), fmt(s.p99, 2), fmt(s.mean, 2)]);
  }
  child.send('stop');
  console.log(`\nGateway on loopback: ${CLIENTS} concurrent keep-alive clients, ${SECONDS} s per scenario (${machine()})\n`);
  console.log(table(['scenario', 'requests', 'errors', 'req/s', 'p50 ms', 'p99 ms', 'mean ms'], rows));
}

if (process.env.BENCH_GATEWAY_ROLE === 'server') await server();
else await main();
