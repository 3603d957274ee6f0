/**
 * A deterministic, offline embedding model for tests and benchmarks: an AI SDK `EmbeddingModelV4` built on
 * `MockEmbeddingModelV4` from `ai/test` (so calls are recorded in `doEmbedCalls`).
 *
 * Vectors are signed feature hashes: each word (lower-cased), a crude stem, character trigrams of the word
 * (low weight), and bigrams of unsegmented scripts (Chinese, Japanese, …), plus a tiny built-in synonym table
 * (`CONCEPTS`) so tests can show recall across vocabulary (`山寨币崩了` ≈ `altcoin drawdown`). Texts sharing
 * words are near; unrelated texts are nearly orthogonal. It is not a language model: do not read quality
 * figures measured with it as real-world recall.
 */
import { MockEmbeddingModelV4 } from 'ai/test';

/** Options of {@link createFakeEmbedder}. */
export interface FakeEmbedderOptions {
  /** Vector size. @default 384 */
  readonly dimensions?: number | undefined;
  /** Make `doEmbed` throw: always (`true`) or when the predicate says so for the batch. @default false */
  readonly fail?: boolean | ((values: readonly string[]) => boolean) | undefined;
  /** Artificial latency per call, in ms. @default 0 */
  readonly delayMs?: number | undefined;
  /** @default 'fake-embedder' */
  readonly modelId?: string | undefined;
}

/** The fake model, with a switch to make later calls fail. */
export interface FakeEmbedder extends MockEmbeddingModelV4 {
  /** Turn failures on or off for later calls (overrides `options.fail`). */
  setFailing(fail: boolean | ((values: readonly string[]) => boolean)): void;
  /** Total number of values embedded so far. */
  readonly embeddedValues: number;
}

const CONCEPTS: ReadonlyArray<readonly string[]> = [
  ['altcoin', 'altcoins', 'alts', 'alt', '山寨币', '山寨'],
  ['crash', 'crashed', 'drawdown', 'dump', 'dumped', 'plunge', 'plunged', 'selloff', '崩', '崩了', '暴跌', '大跌'],
  ['overnight', 'night', '昨晚', '夜里'],
  ['slippage', 'slip', '滑点'],
  ['stop', 'stoploss', '止损'],
  ['profit', 'gain', 'gains', '盈利', '止盈'],
  ['bitcoin', 'btc', '比特币'],
  ['ethereum', 'eth', 'ether', '以太坊'],
  ['conservative', 'cautious', 'careful', 'risk-averse', '保守'],
  ['chart', 'charts', 'candles', 'timeframe', '图表'],
];
const CONCEPT_OF = new Map<string, number>();
CONCEPTS.forEach((words, i) => {
  for (const w of words) CONCEPT_OF.set(w, i);
});

const UNSEGMENTED = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}]/u;

function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function stem(word: string): string {
  return word.replace(/(?:ing|ed|es|s)$/u, '') || word;
}

/** The features of a text with their weights. */
function features(text: string): Map<string, number> {
  const out = new Map<string, number>();
  const add = (f: string, w: number) => out.set(f, (out.get(f) ?? 0) + w);
  for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = m[0];
    if (UNSEGMENTED.test(word)) {
      const chars = Array.from(word);
      for (let i = 0; i < chars.length; i++) {
        add(`c:${chars[i]}`, 0.5);
        if (i + 1 < chars.length) {
          const bi = `${chars[i]}${chars[i + 1]}`;
          add(`b:${bi}`, 1);
          const concept = CONCEPT_OF.get(bi) ?? CONCEPT_OF.get(chars[i] as string);
          if (concept !== undefined) add(`k:${concept}`, 1.5);
        }
      }
      for (const [w, concept] of CONCEPT_OF) if (UNSEGMENTED.test(w) && word.includes(w)) add(`k:${concept}`, 1.5);
      continue;
    }
    add(`w:${word}`, 1);
    add(`s:${stem(word)}`, 1);
    const concept = CONCEPT_OF.get(word) ?? CONCEPT_OF.get(stem(word));
    if (concept !== undefined) add(`k:${concept}`, 1.5);
    const padded = `#${word}#`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.3);
  }
  return out;
}

/** Embed one text into a unit vector of `dim` entries. */
export function fakeEmbedding(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const [f, w] of features(text)) {
    const h = fnv1a(f);
    const sign = (fnv1a(`~${f}`) & 1) === 0 ? 1 : -1;
    v[h % dim] = (v[h % dim] as number) + sign * w;
  }
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return norm === 0 ? v.map((_, i) => (i === 0 ? 1 : 0)) : v.map((x) => x / norm);
}

/**
 * Create the fake embedder.
 *
 * @example
 * ```ts
 * import { createFakeEmbedder } from '@minara/agent/testing';
 * const embedder = createFakeEmbedder(384);
 * const memory = createMemoryStore({ storage, scope: { userId: 'u1' }, embedder });
 * ```
 */
export function createFakeEmbedder(options: number | FakeEmbedderOptions = {}): FakeEmbedder {
  const opts: FakeEmbedderOptions = typeof options === 'number' ? { dimensions: options } : options;
  const dim = opts.dimensions ?? 384;
  if (!Number.isInteger(dim) || dim < 1) throw new TypeError(`createFakeEmbedder: dimensions must be a positive integer, got ${String(dim)}`);
  let fail = opts.fail ?? false;
  let embedded = 0;
  const model = new MockEmbeddingModelV4({
    provider: 'fake',
    modelId: opts.modelId ?? 'fake-embedder',
    maxEmbeddingsPerCall: 256,
    supportsParallelCalls: true,
    doEmbed: async ({ values, abortSignal }) => {
      if ((opts.delayMs ?? 0) > 0) {
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(resolve, opts.delayMs);
          abortSignal?.addEventListener('abort', () => {
            clearTimeout(t);
            reject(new Error('aborted'));
          });
        });
      }
      if (fail === true || (typeof fail === 'function' && fail(values))) throw new Error('fake embedder: configured to fail');
      embedded += values.length;
      return { embeddings: values.map((v) => fakeEmbedding(v, dim)), usage: { tokens: values.length }, warnings: [] };
    },
  }) as FakeEmbedder;
  Object.defineProperty(model, 'embeddedValues', { get: () => embedded });
  model.setFailing = (next) => {
    fail = next;
  };
  return model;
}
