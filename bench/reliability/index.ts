/**
 * Reliability under load: the gateway with autocannon on loopback (see load-run.ts). Re-runs itself with
 * `--expose-gc` so the live heap can be compared before and after (RSS alone keeps freed pages).
 * Run: npm run bench -- reliability   (BENCH_SECONDS=60 BENCH_CLIENTS=50 by default)
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { machine, table } from '../lib/stats';
import { runLoad } from './load-run';

if (!(globalThis as { gc?: unknown }).gc) {
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const seconds = Number(process.env.BENCH_SECONDS ?? 60);
const connections = Number(process.env.BENCH_CLIENTS ?? 50);
// A short warm-up first: module-level caches (compiled schemas, the AI SDK, autocannon) fill once, ~18 MB;
// three back-to-back runs then show no growth, so the measured run starts warm.
await runLoad({ seconds: 5, connections });
const r = await runLoad({ seconds, connections });
console.log(`\nGateway under load (${machine()}), ${connections} connections for ${seconds} s: chat streams + memory searches, approvals decided twice at once\n`);
console.log(table(
  ['requests', 'non-2xx', '5xx', 'errors', 'p50 ms', 'p99 ms', 'approvals', 'executions', 'duplicated', 'lost', 'heap before MB', 'heap after MB', 'RSS before MB', 'RSS after MB'],
  [[r.requests, r.non2xx, r.status5xx, r.errors, r.p50Ms, r.p99Ms, r.approvalsDecided, r.executions, r.duplicatedExecutions, r.lostExecutions, r.heapBeforeMb ?? '-', r.heapAfterMb ?? '-', r.rssBeforeMb, r.rssAfterMb]],
));
