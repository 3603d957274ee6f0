/**
 * Reliability under load: the gateway (in its own process) with autocannon on loopback (see load-run.ts).
 * Run: npm run bench -- reliability   (BENCH_SECONDS=60 BENCH_CLIENTS=50 BENCH_WARMUP=30 by default)
 */
import { machine, table } from '../lib/stats';
import { runLoad } from './load-run';

const seconds = Number(process.env.BENCH_SECONDS ?? 60);
const connections = Number(process.env.BENCH_CLIENTS ?? 50);
const warmupSeconds = Number(process.env.BENCH_WARMUP ?? 30);
const r = await runLoad({ seconds, connections, warmupSeconds });
const pct = (a: number, b: number) => `${b >= a ? '+' : ''}${Math.round(((b - a) / a) * 100)} %`;
console.log(`\nGateway under load (${machine()}), ${connections} connections for ${seconds} s after a ${warmupSeconds} s warm-up: chat streams + memory searches, approvals decided twice at once\n`);
console.log(table(
  ['requests', 'non-2xx', '5xx', 'errors', 'p50 ms', 'p99 ms', 'approvals', 'executions', 'duplicated', 'lost'],
  [[r.requests, r.non2xx, r.status5xx, r.errors, r.p50Ms, r.p99Ms, r.approvalsDecided, r.executions, r.duplicatedExecutions, r.lostExecutions]],
));
console.log(`\nServer process memory after full GCs: RSS ${r.rssBeforeMb} → ${r.rssAfterMb} MB (${pct(r.rssBeforeMb, r.rssAfterMb)}), live heap ${r.heapBeforeMb} → ${r.heapAfterMb} MB (${pct(r.heapBeforeMb, r.heapAfterMb)})`);
if (r.anonBeforeMb !== undefined && r.anonAfterMb !== undefined && r.fileBeforeMb !== undefined && r.fileAfterMb !== undefined) {
  console.log(`  of the RSS: anonymous ${r.anonBeforeMb} → ${r.anonAfterMb} MB (${pct(r.anonBeforeMb, r.anonAfterMb)}), file-backed ${r.fileBeforeMb} → ${r.fileAfterMb} MB (${pct(r.fileBeforeMb, r.fileAfterMb)})`);
}
