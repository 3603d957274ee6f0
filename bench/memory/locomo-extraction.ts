/**
 * Memory from conversations on LoCoMo (development split): the recall of what the extraction pass stores,
 * beside the raw-turn baseline (every turn stored, `bench/memory/locomo.ts`'s protocol).
 *
 * Every turn of a conversation is queued as a user turn of that conversation's tenant and drained by
 * `createMemoryExtractor` (batches of 20, the pass's real path: the queue, the structured-output call, the
 * personal-data and instruction gates, the fact layer's deduplication, `chat_extracted` rows). The model is
 * scripted: for each batch it returns exactly the evidence turns it was given (any turn some question cites),
 * verbatim. So the figure is the store's side of extraction with a perfect extractor: what the gates and the fact
 * layer drop, and how retrieval behaves over the smaller set, not the quality of a real model's extraction.
 * Questions are then searched over the extracted memories (`limit: 10`, BM25), a hit being any evidence id.
 * The data is read from outside the package, never copied.
 *
 *   npx tsx bench/memory/locomo-extraction.ts [--data=../shared/data/locomo-dev/conversations.json]
 */
import {
  createMemoryExtractor, createMemoryStore, DEFAULT_MODEL_PRICES, type MemoryStore, silentLogger, type Storage, usageCostUsd,
} from '../../src/index';
import { createSqliteStorage } from '../../src/storage/sqlite/index';
import { createScriptedModel, type ScriptedCall, type ScriptedStep } from '../../src/testing/index';
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
  for (const s of scores) rows.push([method, s.category, String(s.n), s.recall5.toFixed(3), s.recall10.toFixed(3), s.mrr10.toFixed(3), String(s.empty)]);
};

// Raw-turn baseline: every turn a memory (the protocol of bench/memory/locomo.ts).
{
  const storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
  const { search, close } = await loadIntoStores(storage, data);
  push('raw turns (every turn stored)', await evaluateLocomo(data, search));
  await close();
  await storage.close();
}

// The extraction pass with a scripted extractor that returns the evidence turns it is given.
const evidence = new Set<string>();
for (const conv of data) {
  for (const qa of conv.qa) {
    if (qa.category < 1 || qa.category > 4) continue;
    for (const e of (qa.evidence ?? []).flatMap((x) => x.split(/[;,]/u))) if (e.trim() !== '') evidence.add(`${conv.conversation_id}|${e.trim()}`);
  }
}
const byText = new Map<string, string>(); // queued text → conversation|dia_id
let evidenceQueued = 0;
const answer = (call: ScriptedCall): ScriptedStep => {
  const prompt = call.prompt.map((m) => (typeof m.content === 'string' ? m.content : m.content.map((p) => ('text' in p ? p.text : '')).join(''))).join('\n');
  const memories: Array<{ turn: number; kind: 'fact'; content: string }> = [];
  for (const line of prompt.split('\n')) {
    const m = /^\[(\d+)\] (.*)$/su.exec(line);
    if (!m) continue;
    const key = byText.get(m[2]!);
    if (key !== undefined && evidence.has(key)) memories.push({ turn: Number(m[1]), kind: 'fact', content: m[2]! });
  }
  const text = JSON.stringify({ memories });
  return { text };
};

const storage: Storage = createSqliteStorage({ path: ':memory:', logger: silentLogger });
const stores = new Map<string, MemoryStore>();
const memoryFor = ({ userId }: { userId: string }) => {
  let m = stores.get(userId);
  if (!m) stores.set(userId, (m = createMemoryStore({ storage, scope: { userId }, logger: silentLogger })));
  return m;
};
const model = createScriptedModel([], { modelId: 'claude-haiku-4-5' });
let calls = 0;
const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
const extractor = createMemoryExtractor({
  storage, memoryFor, model, logger: silentLogger, maxTurnChars: 4000,
  recordUsage: async (u) => {
    calls++;
    usage.inputTokens += u.inputTokens;
    usage.outputTokens += u.outputTokens;
  },
});
let turns = 0;
for (const conv of data) {
  for (const s of conv.sessions) {
    for (const turn of s.turns) {
      const text = turnContent(turn, s.date_time);
      const key = `${conv.conversation_id}|${turn.dia_id}`;
      byText.set(text.replace(/\s+/gu, ' ').trim(), key);
      if (evidence.has(key)) evidenceQueued++;
      await extractor.enqueue({ userId: `locomo-${conv.conversation_id}`, sessionId: `${conv.conversation_id}-${s.session}`, turnId: key, text });
      turns++;
    }
  }
}
// One scripted answer per batch (20 turns each, per tenant).
for (let i = 0; i < Math.ceil(turns / 20) + data.length; i++) model.push(answer);
const t0 = performance.now();
const r = await extractor.run();
const passMs = performance.now() - t0;
const search = async (conversationId: string, question: string) => {
  const hits = await memoryFor({ userId: `locomo-${conversationId}` }).search(question, { limit: 10, mode: 'bm25' });
  return hits.map((h) => String(h.metadata?.['turnId'] ?? '').split('|')[1] ?? '');
};
push('extracted memories (scripted extractor: the evidence turns)', await evaluateLocomo(data, search));
for (const m of stores.values()) await m.close();
await storage.close();

const price = DEFAULT_MODEL_PRICES['claude-haiku-4']!;
console.log(`\nLoCoMo development split (${data.length} conversations, ${turns} turns; ${evidenceQueued} evidence turns), lexical only, limit 10.`);
printTable('Recall of extracted memories beside the raw-turn baseline (categories: 1 multi-hop, 2 temporal, 3 inference, 4 single-hop)', ['store', 'category', 'n', 'recall@5', 'recall@10', 'MRR@10', 'empty'], rows);
printTable('The extraction pass on these turns', ['turns', 'model calls', 'failed calls', 'kept', 'retired as duplicates', 'dropped: personal data', 'dropped: instruction', 'input tokens / turn', 'output tokens / turn', 'USD / turn (claude-haiku-4 list price)', 'pass ms / turn (no model)'], [[
  String(r.turns), String(calls), String(r.failed), String(r.written), String(r.duplicates), String(r.personalData), String(r.instructions), (usage.inputTokens / turns).toFixed(1),
  (usage.outputTokens / turns).toFixed(1), (usageCostUsd(usage, price) / turns).toFixed(6), (passMs / turns).toFixed(3),
]]);
