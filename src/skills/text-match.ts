/**
 * Keyword matching shared by the router and the taxonomy.
 *
 * Rules:
 * - Text and keywords are normalised the same way: NFKC (full-width → half-width), lower case, curly
 *   quotes → straight, runs of whitespace, `-` and `_` → one space (so `stop-loss` matches `stop loss`).
 * - A keyword containing CJK is a plain substring (Chinese has no word boundaries).
 * - A latin keyword matches only on word boundaries: `long` does not fire inside `belong`. A plain
 *   English plural of a message word also matches (`positions` hits `position`).
 * - Single-word latin keywords are looked up in a token set (O(1)); phrases use `indexOf` with
 *   boundary checks. Everything is compiled once, at registration.
 */

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]/u;
const SINGLE_TOKEN = /^[a-z0-9\u00c0-\u024f]+$/u;
const TOKEN = /[a-z0-9\u00c0-\u024f]+/gu;

/** True for a latin letter or digit (the characters a word boundary separates). */
export function isWordChar(ch: string | undefined): boolean {
  if (ch === undefined || ch === '') return false;
  const c = ch.charCodeAt(0);
  return (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 0xc0 && c <= 0x24f);
}

/** True when the string holds a CJK character. */
export function containsCjk(s: string): boolean {
  return CJK.test(s);
}

/** Normalise text or a keyword for matching. */
export function normalizeText(s: string): string {
  return s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\u2018\u2019\u02bc]/g, "'")
    .replace(/[\u201c\u201d]/g, '"')
    .replace(/[\s\-_]+/g, ' ')
    .trim();
}

/** A message prepared once per routing pass. */
export interface AnalyzedText {
  /** The original text (NFKC), case kept, for case-sensitive entity rules. */
  readonly raw: string;
  /** Normalised text. */
  readonly norm: string;
  /** Latin word tokens of `norm`, plus singular forms of plain plurals. */
  readonly tokens: ReadonlySet<string>;
}

/** Normalise and tokenise a message. */
export function analyzeText(text: string): AnalyzedText {
  const raw = text.normalize('NFKC');
  const norm = normalizeText(raw);
  const tokens = new Set<string>();
  for (const m of norm.matchAll(TOKEN)) {
    const t = m[0];
    tokens.add(t);
    if (t.length > 3 && t.endsWith('s') && !t.endsWith('ss')) tokens.add(t.slice(0, -1));
  }
  return { raw, norm, tokens };
}

// The library analyses the same message several times a turn (the router, the stage and entity rules, the
// scenario classifier, the learning loop's assets): its own callers share one analysis per message text, kept
// for the last few texts (a turn's message, and a few turns running side by side), newest first.
interface SharedAnalysis {
  readonly source: string;
  readonly text: AnalyzedText;
  derived?: Map<string, unknown>;
}
const sharedAnalyses: SharedAnalysis[] = [];
const MAX_SHARED_ANALYSES = 8;
const MAX_SHARED_TEXT = 16_384;

/**
 * {@link analyzeText} for the library's own callers: the analysis of a message text made once and shared while it is
 * among the last few analysed (a message above 16 K characters is analysed each time). The result is shared: never
 * mutate it. Same text, same analysis, so nothing is ever stale.
 */
export function analyzeTextShared(text: string): AnalyzedText {
  for (const entry of sharedAnalyses) if (entry.source === text) return entry.text;
  const analysis = analyzeText(text);
  if (text.length > MAX_SHARED_TEXT) return analysis;
  sharedAnalyses.unshift({ source: text, text: analysis });
  if (sharedAnalyses.length > MAX_SHARED_ANALYSES) sharedAnalyses.pop();
  return analysis;
}

/**
 * A pure function of an analysis, computed once per shared analysis ({@link analyzeTextShared}) and `key`, and each
 * time for any other (a caller's own `analyzeText`, which it may change). Callers copy what they hand out.
 */
export function derivedOnce<T>(text: AnalyzedText, key: string, compute: () => T): T {
  const entry = sharedAnalyses.find((e) => e.text === text);
  if (!entry) return compute();
  const memo = (entry.derived ??= new Map());
  if (memo.has(key)) return memo.get(key) as T;
  const value = compute();
  memo.set(key, value);
  return value;
}

/** A compiled phrase keyword. */
interface Phrase {
  readonly text: string;
  readonly leftBoundary: boolean;
  readonly rightBoundary: boolean;
}

function compilePhrase(norm: string): Phrase {
  const cjk = containsCjk(norm);
  return {
    text: norm,
    leftBoundary: !cjk && isWordChar(norm[0]),
    rightBoundary: !cjk && isWordChar(norm[norm.length - 1]),
  };
}

/** True when the phrase occurs in `norm` with word boundaries on its latin edges. */
function phraseOccurs(norm: string, p: Phrase): boolean {
  let from = 0;
  for (;;) {
    const at = norm.indexOf(p.text, from);
    if (at < 0) return false;
    const okLeft = !p.leftBoundary || !isWordChar(norm[at - 1]);
    const okRight = !p.rightBoundary || !isWordChar(norm[at + p.text.length]);
    if (okLeft && okRight) return true;
    from = at + 1;
  }
}

/** A keyword compiled for {@link keywordOccurs}: empty, a single token, or a phrase. */
type CompiledKeyword = { readonly kind: 'empty' } | { readonly kind: 'token'; readonly token: string } | { readonly kind: 'phrase'; readonly phrase: Phrase };

// Keywords come from fixed lists (scenarios, taxonomy rules) and are matched on every turn: compile each once.
const compiledKeywords = new Map<string, CompiledKeyword>();
const MAX_COMPILED_KEYWORDS = 10_000;

function compileKeyword(keyword: string): CompiledKeyword {
  let c = compiledKeywords.get(keyword);
  if (c) return c;
  const k = normalizeText(keyword);
  c = k === '' ? { kind: 'empty' } : SINGLE_TOKEN.test(k) ? { kind: 'token', token: k } : { kind: 'phrase', phrase: compilePhrase(k) };
  if (compiledKeywords.size >= MAX_COMPILED_KEYWORDS) compiledKeywords.clear();
  compiledKeywords.set(keyword, c);
  return c;
}

/** True when `keyword` occurs in the analysed text by the rules above. */
export function keywordOccurs(text: AnalyzedText, keyword: string): boolean {
  const c = compileKeyword(keyword);
  if (c.kind === 'empty') return false;
  if (c.kind === 'token') return text.tokens.has(c.token);
  return phraseOccurs(text.norm, c.phrase);
}

/** A compiled set of keywords, each mapped to a payload; built once, matched per message. */
export interface KeywordIndex<T> {
  /** Payloads of the keywords found, in the order the entries were given (each entry at most once). */
  match(text: AnalyzedText): T[];
  readonly size: number;
}

/**
 * Compile `[keyword, payload]` entries. Duplicate keywords share one check.
 *
 * @example
 * ```ts
 * const index = createKeywordIndex([['buy', 'decide'], ['止损', 'manage']]);
 * index.match(analyzeText('buy BTC, 设置止损')); // ['decide', 'manage']
 * ```
 */
export function createKeywordIndex<T>(entries: ReadonlyArray<readonly [string, T]>): KeywordIndex<T> {
  const tokenMap = new Map<string, number[]>();
  const phraseMap = new Map<string, { phrase: Phrase; idx: number[] }>();
  const payloads: T[] = [];
  entries.forEach(([keyword, payload], i) => {
    payloads.push(payload);
    const k = normalizeText(keyword);
    if (k === '') return;
    if (SINGLE_TOKEN.test(k)) {
      const list = tokenMap.get(k);
      if (list) list.push(i);
      else tokenMap.set(k, [i]);
    } else {
      const slot = phraseMap.get(k);
      if (slot) slot.idx.push(i);
      else phraseMap.set(k, { phrase: compilePhrase(k), idx: [i] });
    }
  });
  const phrases = [...phraseMap.values()];
  return {
    size: entries.length,
    match(text) {
      const hits: number[] = [];
      if (tokenMap.size > 0) {
        // Iterate the smaller side.
        if (text.tokens.size <= tokenMap.size) {
          for (const t of text.tokens) {
            const list = tokenMap.get(t);
            if (list) for (const i of list) hits.push(i);
          }
        } else {
          for (const [t, list] of tokenMap) if (text.tokens.has(t)) for (const i of list) hits.push(i);
        }
      }
      for (const p of phrases) if (phraseOccurs(text.norm, p.phrase)) for (const i of p.idx) hits.push(i);
      if (hits.length === 0) return [];
      hits.sort((a, b) => a - b);
      const out: T[] = [];
      let prev = -1;
      for (const i of hits) {
        if (i !== prev) out.push(payloads[i] as T);
        prev = i;
      }
      return out;
    },
  };
}
