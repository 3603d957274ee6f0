/**
 * Retrieval quality on a seeded synthetic corpus: conversations with known evidence, in seven categories
 * (exact term, entity, paraphrase, temporal, knowledge update, distractors, another tenant's near-duplicates).
 * Reports recall@5, recall@10 and MRR@10 for BM25, BM25 + entity boost and hybrid (fake 384-dim embedder).
 * Reports; asserts nothing. The fake embedder is feature hashing plus a tiny synonym table, so the hybrid
 * column shows the pipeline working, not the recall of a real embedding model.
 *
 *   npx tsx bench/memory/quality.ts [--seed=7] [--noise=1500]
 */
import { type MemorySearchOptions, createMemoryStore, silentLogger } from '../../src/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createFakeEmbedder } from '../../src/testing/fake-embedder';
import { TICKERS, generateMemories, prng } from './corpus';
import { printTable } from './stats';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const seed = Number(args.get('seed') ?? 7);
const noise = Number(args.get('noise') ?? 1500);
const rnd = prng(seed);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;

interface Case {
  readonly kind: string;
  readonly write: Array<{ category: string; content: string }>;
  /** Index into `write` of the evidence. */
  readonly evidence: number;
  readonly query: string;
}

const NICK = ['bluefin', 'quartz', 'heron', 'saffron', 'tundra', 'marlin', 'cobalt', 'juniper', 'osprey', 'basalt'];
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October'];
const cases: Case[] = [];
for (let i = 0; i < 20; i++) {
  const nick = `${pick(NICK)}-${100 + i}`;
  cases.push({ kind: 'exact term', write: [{ category: 'reference', content: `the user's hardware wallet is nicknamed ${nick}` }, { category: 'observation', content: 'the user checks the hardware wallet weekly' }], evidence: 0, query: `${nick} wallet` });
  const t = TICKERS[i % TICKERS.length] as string;
  cases.push({
    kind: 'entity',
    write: [
      { category: 'observation', content: `user holds a large $${t} position sized at ${2 + (i % 5)}% of the portfolio` },
      { category: 'observation', content: `user holds a large ${TICKERS[(i + 3) % TICKERS.length]} position sized at 3% of the portfolio` },
    ],
    evidence: 0,
    query: `how large is the ${t} position`,
  });
  const para: Array<[string, string]> = [
    ['user avoids leverage above 3x on perps', 'maximum margin multiplier the user tolerates'],
    ['昨晚山寨币全线下跌，账户回撤明显', 'altcoin crash overnight'],
    ['user got stopped out of SOL during the drawdown', 'the SOL stoploss hit in the crash'],
    ['the user is cautious and keeps most funds in stablecoins', 'is the user conservative with risk'],
    ['user dislikes meme coins and never apes into launches', 'does the user trade memecoins'],
  ];
  const [ev, q] = para[i % para.length] as [string, string];
  cases.push({ kind: 'paraphrase', write: [{ category: 'lesson', content: `${ev} (${i})` }], evidence: 0, query: q });
  const month = MONTHS[i % MONTHS.length] as string;
  cases.push({ kind: 'temporal', write: [{ category: 'trade_outcome', content: `in ${month} 2026 the user rebalanced into stablecoins (case ${i})` }, { category: 'trade_outcome', content: `in ${MONTHS[(i + 1) % MONTHS.length]} 2025 the user added to ETH (case ${i})` }], evidence: 0, query: `what did the user rebalance in ${month} 2026` });
  const tf = ['weekly', 'daily', '4h', 'monthly'];
  const a = tf[i % 4] as string;
  const b = tf[(i + 1) % 4] as string;
  cases.push({ kind: 'knowledge update', write: [{ category: 'preference', content: `user prefers ${a} charts for ${t}` }, { category: 'preference', content: `update: user now prefers ${b} charts for ${t}` }], evidence: 1, query: `which charts does the user prefer now for ${t}` });
  cases.push({
    kind: 'distractors',
    write: [
      { category: 'preference', content: `always use ${(0.1 * (i + 1)).toFixed(1)}% slippage on ${pick(['Base', 'Arbitrum'])} swaps for ${t}` },
      ...Array.from({ length: 4 }, (_, k) => ({ category: 'observation', content: `slippage on ${t} swaps was noted in review ${k} with fees and gas` })),
    ],
    evidence: 0,
    query: `what slippage setting does the user always use for ${t} swaps`,
  });
}

type Mode = { name: string; options: MemorySearchOptions; hybrid: boolean };
const modes: Mode[] = [
  { name: 'BM25', options: { mode: 'bm25', entityBoost: false }, hybrid: false },
  { name: 'BM25 + entity boost', options: { mode: 'bm25' }, hybrid: false },
  { name: 'hybrid (RRF + boost)', options: {}, hybrid: true },
];

const storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
const embedder = createFakeEmbedder(384);
const mine = createMemoryStore({ storage, scope: { userId: 'me' }, logger: silentLogger, embedder });
const other = createMemoryStore({ storage, scope: { userId: 'someone-else' }, logger: silentLogger, embedder });
const evidenceIds = new Map<Case, number>();
const otherIds = new Set<number>();
const noiseRows = generateMemories(noise, seed);
let n = 0;
for (const c of cases) {
  for (let k = 0; k < 8 && n < noiseRows.length; k++) await mine.write(noiseRows[n++] as (typeof noiseRows)[number]);
  for (const [idx, w] of c.write.entries()) {
    const { id } = await mine.write(w);
    if (idx === c.evidence) evidenceIds.set(c, id);
    otherIds.add((await other.write({ ...w, content: `${w.content} (near-duplicate)` })).id);
  }
}
while (n < noiseRows.length) await mine.write(noiseRows[n++] as (typeof noiseRows)[number]);
await mine.flushEmbeddings();

const kinds = [...new Set(cases.map((c) => c.kind)), 'all'];
const rows: Array<Array<string | number>> = [];
let leaks = 0;
for (const mode of modes) {
  for (const kind of kinds) {
    const subset = cases.filter((c) => kind === 'all' || c.kind === kind);
    let r5 = 0;
    let r10 = 0;
    let mrr = 0;
    for (const c of subset) {
      const hits = await mine.search(c.query, { ...mode.options, limit: 10 });
      leaks += hits.filter((h) => otherIds.has(h.id)).length;
      const rank = hits.findIndex((h) => h.id === evidenceIds.get(c));
      if (rank >= 0 && rank < 5) r5++;
      if (rank >= 0) {
        r10++;
        mrr += 1 / (rank + 1);
      }
    }
    rows.push([mode.name, kind, String(subset.length), r5 / subset.length, r10 / subset.length, mrr / subset.length]);
  }
}
console.log(`\nSeeded corpus: ${cases.length} questions, ${noise} noise memories + evidence, one other tenant with near-duplicates of every evidence row (seed ${seed}).`);
printTable('Retrieval quality', ['mode', 'category', 'n', 'recall@5', 'recall@10', 'MRR@10'], rows);
console.log(`\nOther tenant's near-duplicates surfaced: ${leaks} (must be 0)`);
await mine.close();
await other.close();
await storage.close();
