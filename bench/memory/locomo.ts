/**
 * LoCoMo retrieval quality (development split, lexical only): `createMemoryStore().search` on SQLite and on
 * the in-memory engine, beside the reference line of the data's README (plain FTS5 `bm25()` with the `porter
 * unicode61` tokenizer over the question's non-stop-words ORed), computed in the same process.
 *
 *   npx tsx bench/memory/locomo.ts [--data=../shared/data/locomo-dev/conversations.json]
 */
import Database from 'better-sqlite3';
import { silentLogger } from '../../src/index';
import { RELAXATION_STOPWORDS } from '../../src/memory/text';
import { createInMemoryStorage } from '../../src/testing/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { LOCOMO_DEV_PATH, type LocomoScores, evaluateLocomo, loadIntoStores, loadLocomo, turnContent } from './locomo-eval';
import { printTable } from './stats';

const args = new Map(process.argv.slice(2).map((a) => a.replace(/^--/, '').split('=') as [string, string]));
const data = loadLocomo(args.get('data') ?? LOCOMO_DEV_PATH);
if (data === undefined) {
  console.error(`LoCoMo split not found at ${args.get('data') ?? LOCOMO_DEV_PATH}`);
  process.exit(2);
}

const rows: Array<Array<string | number>> = [];
const push = (method: string, scores: LocomoScores[]): void => {
  // Three decimals: the figures docs/memory.md quotes (0.816, 0.574) come from this table.
  for (const s of scores) rows.push([method, s.category, String(s.n), s.recall5.toFixed(3), s.recall10.toFixed(3), s.mrr10.toFixed(3), String(s.empty)]);
};

// Reference: plain FTS5 bm25() with porter unicode61, non-stop-words ORed, one table per conversation.
{
  const db = new Database(':memory:');
  db.exec(`CREATE VIRTUAL TABLE t USING fts5(content, conv UNINDEXED, dia UNINDEXED, tokenize='porter unicode61')`);
  const insert = db.prepare('INSERT INTO t (content, conv, dia) VALUES (?, ?, ?)');
  for (const conv of data) for (const s of conv.sessions) for (const turn of s.turns) insert.run(turnContent(turn, s.date_time), conv.conversation_id, turn.dia_id);
  // One table holds every conversation here, so IDF is file-wide, as the README's reference line was computed
  // per conversation: use one table per conversation instead.
  db.exec('DROP TABLE t');
  const tables = new Map<string, string>();
  for (const conv of data) {
    const name = `c${conv.conversation_id.replace(/\W/gu, '_')}`;
    tables.set(conv.conversation_id, name);
    db.exec(`CREATE VIRTUAL TABLE ${name} USING fts5(content, dia UNINDEXED, tokenize='porter unicode61')`);
    const ins = db.prepare(`INSERT INTO ${name} (content, dia) VALUES (?, ?)`);
    for (const s of conv.sessions) for (const turn of s.turns) ins.run(turnContent(turn, s.date_time), turn.dia_id);
  }
  const scores = await evaluateLocomo(data, async (convId, question) => {
    const words = (question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => !RELAXATION_STOPWORDS.has(w));
    if (words.length === 0) return [];
    const match = words.map((w) => `"${w}"`).join(' OR ');
    return (db.prepare(`SELECT dia FROM ${tables.get(convId)} WHERE ${tables.get(convId)} MATCH ? ORDER BY bm25(${tables.get(convId)}) LIMIT 10`).pluck().all(match) as string[]);
  });
  push('plain FTS5 porter, OR of non-stop-words', scores);
  db.close();
}

for (const [name, make] of [
  ['createMemoryStore().search (sqlite)', () => createSqliteStorage({ path: ':memory:', logger: silentLogger })],
  ['createMemoryStore().search (in-memory)', () => createInMemoryStorage()],
] as const) {
  const storage = make();
  const t0 = performance.now();
  const { search, close } = await loadIntoStores(storage, data);
  const loadMs = performance.now() - t0;
  const t1 = performance.now();
  const scores = await evaluateLocomo(data, search);
  const perQuery = (performance.now() - t1) / (scores.at(-1)?.n ?? 1);
  push(name, scores);
  console.error(`${name}: load ${loadMs.toFixed(0)} ms, ${perQuery.toFixed(2)} ms per question`);
  await close();
  await storage.close();
}

console.log(`\nLoCoMo development split (${data.length} conversations), lexical only, limit 10.`);
printTable('LoCoMo retrieval (categories: 1 multi-hop, 2 temporal, 3 inference, 4 single-hop)', ['method', 'category', 'n', 'recall@5', 'recall@10', 'MRR@10', 'empty'], rows);
