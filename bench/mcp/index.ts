/**
 * MCP dispatch overhead: the same server-everything `echo` tool over stdio, called (a) with the bare official
 * SDK client and (b) through `createMcpTools` + `registry.dispatch` (validation, tier gate, hooks, audit row
 * on in-memory storage, result mapping and the input scanner). Interleaved in rounds in one process so host
 * drift hits both alike; prints medians, p95 and the difference.
 * Run: npm run bench -- mcp   (BENCH_CALLS=2000 by default)
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';
import { createToolCallContext, createToolRegistry } from '../../src/index';
import { createMcpTools } from '../../src/mcp/index';
import { createInMemoryStorage } from '../../src/testing/index';
import { fmt, machine, summarize, table } from '../lib/stats';

const EVERYTHING = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
const calls = Number(process.env.BENCH_CALLS ?? 2000);
const rounds = 10;

const bare = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
await bare.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], env: getDefaultEnvironment(), stderr: 'ignore' }));
const mcp = await createMcpTools({ config: { mcpServers: { e: { command: process.execPath, args: [EVERYTHING, 'stdio'], trustAnnotations: true } } } });
const registry = createToolRegistry({ tools: mcp.tools, storage: createInMemoryStorage(), audit: true });
const ctx = createToolCallContext({ sessionId: 'bench', source: 'user' });

const bareMs: number[] = [];
const oursMs: number[] = [];
const perRound = Math.ceil(calls / rounds);
// Warm-up: JIT, schema compilation, the server's own caches.
for (let i = 0; i < 200; i++) {
  await bare.callTool({ name: 'echo', arguments: { message: `w${i}` } });
  await registry.dispatch('mcp__e__echo', { message: `w${i}` }, { context: ctx });
}
for (let r = 0; r < rounds; r++) {
  for (let i = 0; i < perRound; i++) {
    let t0 = performance.now();
    await bare.callTool({ name: 'echo', arguments: { message: `m${i}` } });
    bareMs.push(performance.now() - t0);
    t0 = performance.now();
    await registry.dispatch('mcp__e__echo', { message: `m${i}` }, { context: ctx });
    oursMs.push(performance.now() - t0);
  }
}
await bare.close();
await mcp.close();

const b = summarize(bareMs);
const o = summarize(oursMs);
console.log(`\nMCP tool call over stdio, server-everything echo (${machine()}), ${bareMs.length} calls each, interleaved\n`);
console.log(table(
  ['path', 'p50 ms', 'p95 ms', 'p99 ms', 'mean ms'],
  [
    ['bare SDK client', fmt(b.p50), fmt(b.p95), fmt(b.p99), fmt(b.mean)],
    ['createMcpTools + dispatch', fmt(o.p50), fmt(o.p95), fmt(o.p99), fmt(o.mean)],
    ['added by the SDK', fmt(o.p50 - b.p50), fmt(o.p95 - b.p95), fmt(o.p99 - b.p99), fmt(o.mean - b.mean)],
  ],
));
console.log('\ntarget: added p50 ≤ 0.3 ms per call');
