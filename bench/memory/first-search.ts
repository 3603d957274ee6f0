/**
 * The first memory search of a fresh process, run as a child by `latency.ts`: opens the SQLite file, times the
 * first lookup of the tenant (which loads the tenant's saved lexical index snapshot, or builds the index from the
 * rows when there is none) and prints the figures as one JSON line (`firstCpu`: the CPU time of that lookup, which
 * a busy host inflates less than the wall time).
 *
 *   npx tsx bench/memory/first-search.ts <file.db> <userId>
 */
import { createMemoryStore, silentLogger } from '../../src/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';

const [path, userId = 'tenant-0'] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: first-search.ts <file.db> [userId]');
const storage = createSqliteStorage({ path, logger: silentLogger });
const store = createMemoryStore({ storage, scope: { userId }, logger: silentLogger });
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await store.search('funding', { mode: 'bm25' });
const first = performance.now() - t0;
const used = process.cpuUsage(cpu0);
const firstCpu = (used.user + used.system) / 1000;
const t1 = performance.now();
await store.search('weekly charts for BTC', { mode: 'bm25' });
const second = performance.now() - t1;
console.log(JSON.stringify({ first, firstCpu, second }));
await store.close();
await storage.close();
