/**
 * The gateway under load, on loopback only. The gateway runs in a child process (load-server.ts) so its
 * memory is measured alone; here `autocannon` drives concurrent chat streams (each a new chat: a tool call,
 * then text, read to the end of the stream) and memory searches, while approvals are requested in the child
 * and decided through `POST /v1/approvals/:id`, each decision sent twice at once, so a double submit is
 * tried on every one. Counts 5xx, lost and duplicated executions, p99, and the server's RSS and live heap
 * after a warm-up and after the load. Shared by the 10 s smoke test (`test/reliability/load-smoke.test.ts`)
 * and `npm run bench -- reliability`.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export interface LoadResult {
  readonly seconds: number;
  readonly connections: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly status5xx: number;
  readonly errors: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly approvalsDecided: number;
  readonly executions: number;
  readonly duplicatedExecutions: number;
  readonly lostExecutions: number;
  /** The server process's RSS and live heap (after full GCs), after the warm-up and after the load. */
  readonly rssBeforeMb: number;
  readonly rssAfterMb: number;
  readonly heapBeforeMb: number;
  readonly heapAfterMb: number;
  /** RSS split (Linux): anonymous memory, where a leak shows, and file-backed pages (the mapped database). */
  readonly anonBeforeMb: number | undefined;
  readonly anonAfterMb: number | undefined;
  readonly fileBeforeMb: number | undefined;
  readonly fileAfterMb: number | undefined;
}

const TOKEN = 'load-test-token-0123456789abcdef';
const SERVER = fileURLToPath(new URL('./load-server.ts', import.meta.url));

type Reply = { type: string; url?: string; id?: string | null; ref?: string; rssMb?: number; heapMb?: number; anonMb?: number; fileMb?: number; executed?: Record<string, number> };

/** The gateway process and its line protocol (one command at a time). */
async function startServer() {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', SERVER, TOKEN], { stdio: ['pipe', 'pipe', 'inherit'] });
  const replies: Reply[] = [];
  const waiting: Array<(r: Reply) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    const reply = JSON.parse(line) as Reply;
    const next = waiting.shift();
    if (next) next(reply);
    else replies.push(reply);
  });
  const read = () => new Promise<Reply>((resolve) => {
    const ready = replies.shift();
    if (ready) resolve(ready);
    else waiting.push(resolve);
  });
  const ask = (command: string) => {
    child.stdin.write(`${command}\n`);
    return read();
  };
  const listening = await read();
  return { url: listening.url as string, ask, exited: new Promise((r) => child.on('exit', r)) };
}

function cannon(url: string, seconds: number, connections: number) {
  let chat = 0;
  return autocannon({
    url,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    requests: [
      {
        method: 'POST',
        path: '/v1/chat',
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ id: `load-${Date.now()}-${chat++}`, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'price of BTC?' }] }] }) }),
      },
      { method: 'GET', path: '/v1/memory?q=bitcoin%20staking&limit=5' },
    ],
  });
}

/** Run the load; `warmupSeconds` of the same load first (module caches fill once), then measure. */
export async function runLoad(options: { seconds: number; connections: number; warmupSeconds?: number }): Promise<LoadResult> {
  const server = await startServer();
  const warmup = options.warmupSeconds ?? 3;
  if (warmup > 0) await cannon(server.url, warmup, options.connections);
  const before = await server.ask('measure');

  let stop = false;
  let decided = 0;
  const requested: string[] = [];
  // Approvals: the server requests one, then the same decision is sent twice at once (one wins, one gets 409).
  const approvals = (async () => {
    while (!stop) {
      const { id, ref } = await server.ask('request');
      if (!id || !ref) continue;
      requested.push(ref);
      const send = () => fetch(`${server.url}/v1/approvals/${id}`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: '{"approved":true}' });
      const [a, b] = await Promise.all([send(), send()]);
      await Promise.all([a.text(), b.text()]);
      if (a.status === 200 || b.status === 200) decided++;
    }
  })();
  const result = await cannon(server.url, options.seconds, options.connections);
  stop = true;
  await approvals;
  const after = await server.ask('measure');
  const { executed = {} } = await server.ask('stop');
  await server.exited;

  const counts = Object.values(executed);
  return {
    seconds: options.seconds,
    connections: options.connections,
    requests: result.requests.total,
    non2xx: result.non2xx,
    status5xx: result['5xx'],
    errors: result.errors + result.timeouts,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    approvalsDecided: decided,
    executions: counts.reduce((a, b) => a + b, 0),
    duplicatedExecutions: counts.filter((c) => c > 1).length,
    lostExecutions: requested.filter((ref) => !(ref in executed)).length,
    rssBeforeMb: before.rssMb ?? 0,
    rssAfterMb: after.rssMb ?? 0,
    heapBeforeMb: before.heapMb ?? 0,
    heapAfterMb: after.heapMb ?? 0,
    anonBeforeMb: before.anonMb,
    anonAfterMb: after.anonMb,
    fileBeforeMb: before.fileMb,
    fileAfterMb: after.fileMb,
  };
}
