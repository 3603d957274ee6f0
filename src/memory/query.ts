/**
 * The search-query sanitiser: turns any user text into a {@link MemoryQueryNode} tree that every engine can
 * run without a syntax error. It never throws.
 *
 * Supported syntax (the FTS5 subset of the spec):
 * - tokens: `slippage` (bare tokens are ANDed, as in FTS5);
 * - phrases: `"always use"` (an unbalanced quote closes at the end of the query);
 * - boolean: `slippage AND base`, `slippage OR impact` (upper-case operators; AND binds tighter than OR);
 * - column filter: `category:preference slippage`;
 * - prefix: `slip*`.
 *
 * Everything else is text: FTS5 specials (`^ + - : ( ) NEAR`), punctuation and operators in odd places are
 * dropped or turned into phrases (`EUR/USD` → the phrase `eur usd`, `0.5%` → `0 5`). `NOT` is not supported
 * and is ignored. Unsegmented scripts become character bigrams (see `text.ts`).
 */
import type { MemoryQueryNode } from '../storage/memory-types';
import { QUESTION_STOPWORDS, RELAXATION_STOPWORDS, hasUnsegmentedText, splitScriptRuns, tokenize } from './text';

/** Longest query text considered; the rest is ignored. */
export const MAX_QUERY_CHARS = 1000;
/** Most query items (terms and phrases) kept. */
export const MAX_QUERY_ITEMS = 32;
/** An unquoted unsegmented run longer than this many characters is split into separate bigram terms. */
const SHORT_UNSEGMENTED_RUN = 4;
const CATEGORY_VALUE = /^[a-z][a-z0-9_]{0,39}$/;

/** What {@link parseSearchQuery} returns. */
export interface ParsedQuery {
  /** The query as written (AND/OR/phrases/prefix); undefined when nothing searchable remains. */
  readonly root?: MemoryQueryNode | undefined;
  /** For a bare multi-word query: the OR of its items without stop words (used when AND finds too few). */
  readonly relaxed?: MemoryQueryNode | undefined;
  /** Retry form when the engine rejects `root`: the OR of every token as a plain term. */
  readonly simple?: MemoryQueryNode | undefined;
  /** Categories from `category:x` filters (OR). */
  readonly categories: readonly string[];
  /** Lower-cased words and phrases for the LIKE fallback. */
  readonly needles: readonly string[];
  /**
   * True when the query used operators or prefixes, or quotes outside a natural-language question: it then runs
   * exactly as written (no AND → OR relaxation). A question with a quoted title (`When did she read "Becoming
   * Nicole"?`) is not explicit: its relaxed form holds the title's words like the rest.
   */
  readonly explicit: boolean;
}

type Lexeme = { kind: 'word'; text: string } | { kind: 'phrase'; text: string } | { kind: 'op'; op: 'AND' | 'OR' };

function lex(input: string): Lexeme[] {
  const out: Lexeme[] = [];
  let i = 0;
  let word = '';
  const flush = (): void => {
    if (word.length === 0) return;
    if (word === 'AND' || word === 'OR') out.push({ kind: 'op', op: word });
    else if (word !== 'NOT') out.push({ kind: 'word', text: word });
    word = '';
  };
  while (i < input.length) {
    const ch = input[i] as string;
    if (ch === '"') {
      flush();
      const end = input.indexOf('"', i + 1);
      const text = end === -1 ? input.slice(i + 1) : input.slice(i + 1, end);
      out.push({ kind: 'phrase', text });
      i = end === -1 ? input.length : end + 1;
    } else if (/\s/u.test(ch) || ch === '(' || ch === ')') {
      flush();
      i++;
    } else {
      word += ch;
      i++;
    }
  }
  flush();
  return out;
}

function itemsForWord(raw: string): MemoryQueryNode[] {
  const prefix = raw.endsWith('*');
  const text = raw.replace(/\*+$/u, '');
  const tokens = tokenize(text);
  if (tokens.length === 0) return [];
  const runs = splitScriptRuns(text.replace(/[^\p{L}\p{N}\p{M}\p{Co}]/gu, ''));
  const only = runs.length === 1 ? runs[0] : undefined;
  if (only?.unsegmented === true && Array.from(only.text).length > SHORT_UNSEGMENTED_RUN) {
    return tokens.map((t) => ({ kind: 'term', text: t }));
  }
  if (tokens.length === 1) {
    const single = tokens[0] as string;
    return [prefix && !hasUnsegmentedText(single) ? { kind: 'term', text: single, prefix: true } : { kind: 'term', text: single }];
  }
  return [{ kind: 'phrase', tokens }];
}

function combine(kind: 'and' | 'or', children: MemoryQueryNode[]): MemoryQueryNode | undefined {
  if (children.length === 0) return undefined;
  if (children.length === 1) return children[0];
  return { kind, children };
}

function isStopItem(node: MemoryQueryNode): boolean {
  return node.kind === 'term' && node.prefix !== true && (RELAXATION_STOPWORDS.has(node.text) || QUESTION_STOPWORDS.has(node.text));
}

/** Words that open an English question. */
const QUESTION_OPENERS = new Set(
  'what when where who whom whose why how which did does do is are was were can could would should will has have had may might shall'.split(' '),
);

/** A natural-language question: ends with `?` or opens with a question word. */
function isQuestion(lexemes: readonly Lexeme[], input: string): boolean {
  if (/\?\s*["”]?\s*$/u.test(input)) return true;
  const first = lexemes[0];
  return first?.kind === 'word' && QUESTION_OPENERS.has(first.text.toLowerCase());
}

/**
 * Parse and sanitise a search query. Never throws; returns an empty `root` when nothing searchable remains.
 *
 * @example
 * ```ts
 * parseSearchQuery('category:preference slip* "always use"').categories; // ['preference']
 * ```
 */
export function parseSearchQuery(query: string): ParsedQuery {
  const input = typeof query === 'string' ? query.slice(0, MAX_QUERY_CHARS) : '';
  const groups: MemoryQueryNode[][] = [[]];
  const categories: string[] = [];
  const needles = new Set<string>();
  let explicit = false;
  let quoted = false;
  let bareWords = 0;
  let count = 0;
  const lexemes = lex(input);
  for (let i = 0; i < lexemes.length; i++) {
    const lx = lexemes[i] as Lexeme;
    const current = groups[groups.length - 1] as MemoryQueryNode[];
    if (lx.kind === 'op') {
      explicit = true;
      if (lx.op === 'OR' && current.length > 0) groups.push([]);
      continue;
    }
    if (lx.kind === 'word' && /^category:/iu.test(lx.text)) {
      let value = lx.text.slice('category:'.length);
      if (value.length === 0) {
        const next = lexemes[i + 1];
        if (next?.kind === 'word') {
          value = next.text;
          i++;
        }
      }
      value = value.toLowerCase();
      if (CATEGORY_VALUE.test(value) && !categories.includes(value)) categories.push(value);
      continue;
    }
    if (count >= MAX_QUERY_ITEMS) continue;
    let items: MemoryQueryNode[];
    if (lx.kind === 'phrase') {
      quoted = true;
      const tokens = tokenize(lx.text);
      items = tokens.length === 0 ? [] : tokens.length === 1 ? [{ kind: 'term', text: tokens[0] as string }] : [{ kind: 'phrase', tokens }];
      const needle = lx.text.trim().toLowerCase();
      if (needle.length > 0) needles.add(needle);
    } else {
      if (lx.text.endsWith('*')) explicit = true;
      items = itemsForWord(lx.text);
      if (items.length > 0) bareWords++;
      const needle = lx.text.replace(/^[^\p{L}\p{N}$]+|[^\p{L}\p{N}%]+$/gu, '').toLowerCase();
      if (needle.length > 0 && items.length > 0) needles.add(needle);
    }
    for (const item of items) {
      if (count >= MAX_QUERY_ITEMS) break;
      current.push(item);
      count++;
    }
  }
  const nonEmpty = groups.filter((g) => g.length > 0);
  const root = combine(
    'or',
    nonEmpty.map((g) => combine('and', g) as MemoryQueryNode),
  );
  const allItems = nonEmpty.flat();
  // Quotes keep a query exact unless it is a natural-language question around the quoted words.
  if (quoted && !explicit && !(isQuestion(lexemes, input) || bareWords >= 3)) explicit = true;
  let relaxed: MemoryQueryNode | undefined;
  if (!explicit && allItems.length >= 2) {
    // The relaxed form is the OR of the content words: phrases (quoted titles, `EUR/USD`) contribute their
    // words one by one, so a title that is written differently in the stored text still finds it.
    const words = new Map<string, MemoryQueryNode>();
    for (const item of allItems) {
      const parts: MemoryQueryNode[] = item.kind === 'phrase' ? item.tokens.map((t): MemoryQueryNode => ({ kind: 'term', text: t })) : [item];
      for (const part of parts) {
        const key = JSON.stringify(part);
        if (!words.has(key)) words.set(key, part);
      }
    }
    const all = [...words.values()];
    const content = all.filter((n) => !isStopItem(n));
    relaxed = combine('or', content.length > 0 ? content : all);
  }
  const tokens = new Set<string>();
  for (const item of allItems) {
    if (item.kind === 'term') tokens.add(item.text);
    else if (item.kind === 'phrase') for (const t of item.tokens) tokens.add(t);
  }
  const simple = combine(
    'or',
    Array.from(tokens, (t): MemoryQueryNode => ({ kind: 'term', text: t })),
  );
  return { root, relaxed, simple, categories, needles: Array.from(needles).slice(0, 16), explicit };
}
