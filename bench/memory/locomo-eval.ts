/**
 * LoCoMo retrieval evaluation (the protocol of `../shared/data/locomo-dev/README.md`): every turn of a
 * conversation is one memory of that conversation's own tenant, every question of categories 1–4 with
 * evidence is searched verbatim with `limit: 10`, a hit is any evidence id among the results. Shared by
 * `bench/memory/locomo.ts` and the quality test. Reads the data from outside the package; never copies it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type MemoryStore, type Storage, createMemoryStore, silentLogger } from '../../src/index';

/** Where the development split lives, relative to the project root. */
export const LOCOMO_DEV_PATH = join(process.cwd(), '..', 'shared', 'data', 'locomo-dev', 'conversations.json');

interface Turn {
  readonly dia_id: string;
  readonly speaker: string;
  readonly text: string;
  readonly image_caption?: string;
}
interface Conversation {
  readonly conversation_id: string;
  readonly sessions: ReadonlyArray<{ readonly session: number; readonly date_time: string; readonly turns: readonly Turn[] }>;
  readonly qa: ReadonlyArray<{ readonly question: string; readonly evidence?: readonly string[]; readonly category: number }>;
}

/** The split, or undefined when it is not on this machine. */
export function loadLocomo(path: string = LOCOMO_DEV_PATH): Conversation[] | undefined {
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as Conversation[];
}

/** Scores of one category (or `all`). */
export interface LocomoScores {
  readonly category: string;
  readonly n: number;
  readonly recall5: number;
  readonly recall10: number;
  readonly mrr10: number;
  /** Questions that returned no row at all. */
  readonly empty: number;
}

/** A search function under test: the ids (dia_id strings) of the top 10, best first. */
export type LocomoSearch = (conversationId: string, question: string) => Promise<readonly string[]>;

/** The memory content of one turn, as the protocol writes it. */
export function turnContent(turn: Turn, dateTime: string): string {
  return `${turn.speaker}: ${turn.text}${turn.image_caption === undefined || turn.image_caption === '' ? '' : ` [image: ${turn.image_caption}]`} (${dateTime})`;
}

/** Write every conversation into `storage` (one tenant each) and return a search over `createMemoryStore`. */
export async function loadIntoStores(storage: Storage, data: readonly Conversation[]): Promise<{ search: LocomoSearch; close: () => Promise<void> }> {
  const stores = new Map<string, MemoryStore>();
  for (const conv of data) {
    const store = createMemoryStore({ storage, scope: { userId: `locomo-${conv.conversation_id}` }, logger: silentLogger });
    stores.set(conv.conversation_id, store);
    for (const session of conv.sessions) {
      for (const turn of session.turns) {
        await store.write({ category: 'observation', content: turnContent(turn, session.date_time), metadata: { dia_id: turn.dia_id } });
      }
    }
  }
  return {
    search: async (conversationId, question) => {
      const store = stores.get(conversationId);
      if (store === undefined) return [];
      const hits = await store.search(question, { limit: 10, mode: 'bm25' });
      return hits.map((h) => String(h.metadata?.['dia_id'] ?? ''));
    },
    close: async () => {
      for (const s of stores.values()) await s.close();
    },
  };
}

/** Evaluate `search` on every answerable question; per category and `all`. */
export async function evaluateLocomo(data: readonly Conversation[], search: LocomoSearch): Promise<LocomoScores[]> {
  const acc = new Map<string, { n: number; r5: number; r10: number; mrr: number; empty: number }>();
  const add = (key: string, rank: number, empty: boolean): void => {
    const a = acc.get(key) ?? { n: 0, r5: 0, r10: 0, mrr: 0, empty: 0 };
    a.n++;
    if (rank >= 0 && rank < 5) a.r5++;
    if (rank >= 0 && rank < 10) {
      a.r10++;
      a.mrr += 1 / (rank + 1);
    }
    if (empty) a.empty++;
    acc.set(key, a);
  };
  for (const conv of data) {
    for (const qa of conv.qa) {
      if (qa.category < 1 || qa.category > 4) continue;
      const evidence = new Set((qa.evidence ?? []).flatMap((e) => e.split(/[;,]/u)).map((e) => e.trim()).filter((e) => e.length > 0));
      if (evidence.size === 0) continue;
      const ids = await search(conv.conversation_id, qa.question);
      const rank = ids.slice(0, 10).findIndex((id) => evidence.has(id));
      add(String(qa.category), rank, ids.length === 0);
      add('all', rank, ids.length === 0);
    }
  }
  return ['1', '2', '3', '4', 'all'].map((category) => {
    const a = acc.get(category) ?? { n: 0, r5: 0, r10: 0, mrr: 0, empty: 0 };
    const d = a.n === 0 ? 1 : a.n;
    return { category, n: a.n, recall5: a.r5 / d, recall10: a.r10 / d, mrr10: a.mrr / d, empty: a.empty };
  });
}
