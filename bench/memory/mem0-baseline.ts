/**
 * The mem0ai OSS TypeScript memory as a baseline, loaded from bench/peers (its own package.json and
 * node_modules, installed with `npm install --legacy-peer-deps`). Offline: telemetry off, the embedder replaced
 * by the same fake vectors our store uses, no LLM call (`infer: false`).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface Mem0Baseline {
  load(rows: ReadonlyArray<{ userId: string; content: string }>): Promise<void>;
  search(query: string, userId: string, limit: number): Promise<unknown[]>;
  close(): Promise<void>;
}

const PEERS = join(import.meta.dirname, '..', 'peers');

/** Create the baseline; throws with a reason when mem0ai is not installed or does not start. */
export async function createMem0Baseline(options: { dir: string; dimensions: number; embed: (text: string) => number[] }): Promise<Mem0Baseline> {
  const entry = join(PEERS, 'node_modules', 'mem0ai', 'dist', 'oss', 'index.mjs');
  if (!existsSync(entry)) throw new Error(`mem0ai is not installed: run \`npm install --legacy-peer-deps\` in bench/peers (${entry} missing)`);
  process.env.MEM0_TELEMETRY = 'false';
  const { Memory } = (await import(pathToFileURL(entry).href)) as { Memory: new (config: unknown) => Record<string, any> };
  const memory = new Memory({
    embedder: { provider: 'openai', config: { apiKey: 'offline-benchmark', model: 'text-embedding-3-small', embeddingDims: options.dimensions } },
    vectorStore: { provider: 'memory', config: { collectionName: 'bench', dimension: options.dimensions, dbPath: join(options.dir, 'vectors.db') } },
    llm: { provider: 'openai', config: { apiKey: 'offline-benchmark', model: 'gpt-4o-mini' } },
    historyDbPath: join(options.dir, 'history.db'),
    disableHistory: true,
  });
  const fake = {
    embed: async (text: string) => options.embed(text),
    embedBatch: async (texts: string[]) => texts.map((t) => options.embed(t)),
  };
  memory.embedder = fake;
  if (typeof memory._ensureInitialized === 'function') await memory._ensureInitialized();
  memory.embedder = fake;
  return {
    async load(rows) {
      // The first rows go through the public add() (infer: false); the rest are bulk-inserted into mem0's
      // vector store with the payload shape add() produced, so loading 200k rows stays tractable.
      const viaAdd = Math.min(rows.length, 200);
      let template: Record<string, unknown> | undefined;
      for (const r of rows.slice(0, viaAdd)) {
        const res = await memory.add(r.content, { userId: r.userId, infer: false });
        if (template === undefined) {
          const id = res?.results?.[0]?.id;
          if (id !== undefined) template = (await memory.vectorStore.get(id))?.payload;
        }
      }
      const rest = rows.slice(viaAdd);
      const batch = 1000;
      for (let i = 0; i < rest.length; i += batch) {
        const chunk = rest.slice(i, i + batch);
        const vectors = chunk.map((r) => options.embed(r.content));
        const ids = chunk.map((_, j) => `bulk-${i + j}`);
        const payloads = chunk.map((r) => ({ ...(template ?? {}), data: r.content, textLemmatized: r.content.toLowerCase(), user_id: r.userId, createdAt: new Date().toISOString() }));
        await memory.vectorStore.insert(vectors, ids, payloads);
      }
    },
    async search(query, userId, limit) {
      const res = await memory.search(query, { filters: { user_id: userId }, topK: limit });
      return res?.results ?? [];
    },
    async close() {
      memory.vectorStore?.db?.close?.();
    },
  };
}
