/**
 * Text handling shared by the write and search paths: the tokenizer (an equivalent of SQLite FTS5's
 * `unicode61` that also splits unsegmented scripts into bigrams), the text the full-text index sees, and
 * the normalised content hash used for embedding reuse and exact fact dedup.
 *
 * Why bigrams instead of a second `trigram` index: Chinese and Japanese words are mostly two characters
 * long (做多, 止损, 以太), which a trigram index cannot match at all; bigrams find them, keep one index and
 * one BM25 scale for every language, and give the in-memory engine the exact same tokens to rank.
 */
import { createHash } from 'node:crypto';
import { stemmer } from 'stemmer';

/** Scripts written without spaces between words: indexed as overlapping character bigrams. */
const UNSEGMENTED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\u3005\u30fc]/u;
/** Runs of token characters (letters, digits, marks, private use), as `unicode61` sees words. */
const WORD = /[\p{L}\p{N}\p{M}\p{Co}]+/gu;
const COMBINING_DIACRITICS = /[\u0300-\u036f]/g;

/** True when `ch` (one code point) belongs to a script indexed as bigrams. */
export function isUnsegmentedChar(ch: string): boolean {
  return UNSEGMENTED.test(ch);
}

/** True when the text contains any character of an unsegmented script. */
export function hasUnsegmentedText(text: string): boolean {
  return UNSEGMENTED.test(text);
}

/** Lower-case and fold Latin diacritics (`remove_diacritics`), keeping other marks (Thai vowels). */
export function foldToken(word: string): string {
  return word.normalize('NFKD').replace(COMBINING_DIACRITICS, '').normalize('NFC').toLowerCase();
}

/** Split one word into script runs: `BTC做多` → [`BTC`, `做多`]. Unsegmented runs are flagged. */
export function splitScriptRuns(word: string): Array<{ text: string; unsegmented: boolean }> {
  const runs: Array<{ text: string; unsegmented: boolean }> = [];
  for (const ch of word) {
    const unsegmented = UNSEGMENTED.test(ch);
    const last = runs[runs.length - 1];
    if (last !== undefined && last.unsegmented === unsegmented) last.text += ch;
    else runs.push({ text: ch, unsegmented });
  }
  return runs;
}

/** Overlapping character bigrams of an unsegmented run (`山寨币` → `山寨`, `寨币`); one char stays itself. */
export function bigrams(run: string): string[] {
  const chars = Array.from(run);
  if (chars.length <= 1) return chars;
  const out: string[] = [];
  for (let i = 0; i + 1 < chars.length; i++) out.push(`${chars[i]}${chars[i + 1]}`);
  return out;
}

/** One tokenised word: its tokens and whether they came from an unsegmented script. */
export interface WordTokens {
  readonly tokens: string[];
  readonly unsegmented: boolean;
}

/**
 * Tokenise one word (already split on separators) into runs of tokens. A mixed word such as `BTC做多`
 * yields two runs.
 */
export function tokenizeWord(word: string): WordTokens[] {
  const out: WordTokens[] = [];
  for (const run of splitScriptRuns(word)) {
    if (run.unsegmented) out.push({ tokens: bigrams(run.text), unsegmented: true });
    else {
      const folded = foldToken(run.text);
      if (folded.length > 0) out.push({ tokens: [folded], unsegmented: false });
    }
  }
  return out;
}

/** An English possessive or contraction ending (`Caroline's`, `Maria’s`, `dogs'`): not a word of its own. */
const POSSESSIVE = /(?<=\p{L})['’ʼ]s?(?![\p{L}\p{N}])/gu;

/**
 * Every token of `text`, in order: the `unicode61` equivalent with bigrams for unsegmented scripts. An English
 * possessive `'s` is dropped (`Caroline's` → `caroline`), on the write and the query side alike.
 */
export function tokenize(text: string): string[] {
  return ASCII.test(text) ? tokenizeAscii(text) : tokenizeGeneral(text);
}

const ASCII = /^[\x00-\x7f]*$/;

/** Whether an ASCII code is a letter or a digit (the ASCII part of `WORD`). */
function isAlnum(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57);
}

/**
 * {@link tokenize} for ASCII-only text (most memories), without regular expressions: runs of letters and digits,
 * lower-cased, with the possessive `'s` after a letter dropped exactly as `POSSESSIVE` drops it. It is what
 * makes building a large scope's index fast; a property test checks it equals the general path.
 */
function tokenizeAscii(text: string): string[] {
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : -1;
    if (c >= 0 && isAlnum(c)) {
      if (start < 0) start = i;
      continue;
    }
    if (start >= 0) {
      out.push(text.slice(start, i).toLowerCase());
      start = -1;
    }
    // `Caroline's` → `caroline`: an apostrophe after a letter, then `s` not followed by a letter or digit.
    if (c === 39 && i > 0 && i + 1 < text.length) {
      const before = text.charCodeAt(i - 1);
      const isLetter = (before >= 97 && before <= 122) || (before >= 65 && before <= 90);
      if (isLetter && text.charCodeAt(i + 1) === 115 && (i + 2 >= text.length || !isAlnum(text.charCodeAt(i + 2)))) i++;
    }
  }
  return out;
}

/** The general path of {@link tokenize} (exported for the test that compares it with the ASCII path). */
export function tokenizeGeneral(text: string): string[] {
  const out: string[] = [];
  for (const match of text.replace(POSSESSIVE, '').matchAll(WORD)) {
    const word = match[0];
    if (ASCII.test(word)) out.push(word.toLowerCase());
    else if (!UNSEGMENTED.test(word)) out.push(foldToken(word));
    else for (const run of tokenizeWord(word)) out.push(...run.tokens);
  }
  return out;
}

/** The raw words of `text` (maximal runs of token characters), unfolded. */
export function words(text: string): string[] {
  return Array.from(text.matchAll(WORD), (m) => m[0]);
}

/**
 * The text stored in the full-text index for `content`: its tokens joined by single spaces. Because every
 * token is made of token characters only, FTS5 re-tokenises it to exactly the same list.
 */
export function buildSearchText(content: string): string {
  return tokenize(content).join(' ');
}

const TRAILING_PUNCT = /[\s.!?。！？…]+$/u;

/**
 * Normalise content for hashing and exact dedup: NFKC, lower-case, whitespace collapsed, trimmed, trailing
 * sentence punctuation removed. `"Prefers weekly charts."` and `"prefers  weekly charts"` normalise alike.
 */
export function normalizeContent(content: string): string {
  return content.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim().replace(TRAILING_PUNCT, '');
}

/** sha256 (hex) of {@link normalizeContent}. */
export function contentHash(content: string): string {
  return createHash('sha256').update(normalizeContent(content)).digest('hex');
}

/**
 * Ticker symbols that a stemmer would change (`AAVE` → `aav`): never stemmed, on either side. Known tickers
 * of the entity extractor plus a few more; an unknown all-caps ticker is stemmed like any word, on both sides
 * alike, so it still matches itself.
 */
const UNSTEMMED = new Set(
  (
    'aave ada apes avax bonk comp crv dai doge ens ethfi fdusd fet grt hbar hype icp inj jto jup kas ldo link ' +
    'mana matic mkr near ondo pendle pepe pyth pyusd rndr render rune sand sei shib snx steth strk sui tao tia ' +
    'ton trx uni usde usdc usdt vet weth wif wld xlm xmr zro'
  ).split(' '),
);
const STEM_CACHE_LIMIT = 50_000;
const stemCache = new Map<string, string>();

/**
 * The index term of one token (as {@link tokenize} emits it): English words (ASCII letters only, 3+ long,
 * not a known ticker) are reduced to their Porter stem (`researching` → `research`, `pets` → `pet`); numbers,
 * addresses, mixed letters and digits, tickers, non-ASCII words and CJK bigrams are kept as they are. The
 * rule looks at the lower-case token only, so the write side and the query side always agree.
 */
export function indexTerm(token: string): string {
  if (token.length < 3) return token;
  // Cached words first: only stemmed words are cached, so a hit skips the rule checks below.
  const cached = stemCache.get(token);
  if (cached !== undefined) return cached;
  if (!LOWER_ASCII_WORD.test(token) || UNSTEMMED.has(token)) return token;
  const stem = stemmer(token);
  if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
  stemCache.set(token, stem);
  return stem;
}

const LOWER_ASCII_WORD = /^[a-z]+$/;

/** The index terms of `text`: {@link tokenize}, then {@link indexTerm} per token. */
export function indexTerms(text: string): string[] {
  const tokens = tokenize(text);
  for (let i = 0; i < tokens.length; i++) tokens[i] = indexTerm(tokens[i] as string);
  return tokens;
}

/** A leading label: up to 40 characters without a colon or line break, then a colon and a space. */
const LABEL = /^\s*([^\s:][^:\n]{0,39}):\s/u;
/** Most index terms a label may have (`Dr Maria Lopez: …`); a longer lead-in is a sentence, not a label. */
const MAX_LABEL_TERMS = 3;

/**
 * The label field of a row: the index terms of a short lead-in before a colon (`Maria: I adopted a dog` →
 * `['maria']`, `Note: …` → `['note']`), deduplicated; empty when the row has none. Transcripts, chat exports
 * and notes are written this way, and the label says who spoke or what kind of row it is. A lead-in of more
 * than three terms, a time (`12:30`) or a URL (`https://…`) is not a label (the colon must be followed by
 * white space).
 */
export function labelTerms(content: string): string[] {
  const m = LABEL.exec(content);
  if (m === null) return [];
  const terms = indexTerms(m[1] as string);
  if (terms.length === 0 || terms.length > MAX_LABEL_TERMS) return [];
  return [...new Set(terms)];
}

/**
 * Function words of English questions, dropped from the relaxed form of a natural-language query: question
 * words, auxiliaries, pronouns, articles, prepositions and conjunctions. They carry no topic, and each one that
 * stayed would reward rows for sharing grammar with the question.
 */
export const QUESTION_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each either else ever few for from further had has have having he her here hers ' +
    'herself him himself his how i if in into is it its itself just let may me might mine more most much must my myself no ' +
    'nor not now of off on once only or other ought our ours ourselves out over own per same shall she should so some such ' +
    'than that the their theirs them themselves then there these they this those through to too under until up upon us very ' +
    'was we were what whatever when whenever where whereas wherever whether which while who whom whose why will with within ' +
    'without would yet you your yours yourself yourselves'
  ).split(' '),
);

/** Common English words dropped when a bare multi-word query is relaxed from AND to OR. */
export const RELAXATION_STOPWORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his how i if in into ' +
    'is it its me my no not of on or our she so than that the their them then there these they this those to ' +
    'was we were what when where which who why will with would you your about any some just also'
  ).split(' '),
);
