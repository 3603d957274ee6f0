/**
 * A scope's lexical index as bytes, so a fresh process loads it instead of reading and tokenising every row
 * of the scope (`lexical-cache.ts` stores it through `MemoryStorage.saveTextIndex` and catches it up through
 * the change log from the position it records).
 *
 * What it holds: the index's {@link ScopeIndexState} (rows, their term ids, labels, categories, question
 * flags; postings are derived on load), the change-log position (`seq`) the rows were read after, the scope
 * it belongs to, and a fingerprint of the tokenizer (`indexTerms`, `labelTerms`, `asksQuestion` on a fixed
 * sample), so a snapshot written by a version that tokenised differently is never used. A SHA-256 of the
 * whole guards against a torn or corrupted value; after it, `createScopeIndex` checks every offset, id and
 * document frequency as it restores the rows and throws on the first inconsistency. A failed check
 * ({@link decodeIndexSnapshot} returning `undefined`, or the restore throwing) makes the caller rebuild
 * from the rows.
 *
 * Layout (little-endian): a 64-byte header (magic `MLXS`, format version, fingerprint, section sizes, `seq`,
 * `maxId`), then the sections, each padded to 4 bytes (document frequencies, ids, term offsets, term ids, label offsets, label
 * ids, categories per row, question flags, the vocabulary joined by `\n`, the category names as JSON, the
 * scope key), then the 32-byte SHA-256 of everything before it. About 4 bytes per index term: a 100k-row
 * scope of 20-term rows is ~9 MB.
 */
import { createHash } from 'node:crypto';
import type { ScopeIndexState } from './lexical-index';
import { asksQuestion } from './lexical-rank';
import { indexTerms, labelTerms } from './text';

const MAGIC = 0x53584c4d; // 'MLXS'
/** Bump when the layout changes. */
const FORMAT = 1;
const HEADER = 64;
const DIGEST = 32;

/** What a decoded snapshot gives back. */
export interface DecodedIndexSnapshot {
  /** The change-log position the rows were read after (`MemoryStorage.textChanges`). */
  readonly seq: number;
  readonly state: ScopeIndexState;
}

let fingerprintValue: number | undefined;

/**
 * A 32-bit fingerprint of the text rules an index depends on: the tokens, stems, labels and question flags of
 * a fixed sample. A change to any of them (a new stemmer, another tokenizer rule) changes it with near
 * certainty, and snapshots written before are then ignored.
 */
export function tokenizerFingerprint(): number {
  if (fingerprintValue !== undefined) return fingerprintValue;
  const sample = [
    "Maria: Caroline's dogs were researching BTC做多 stop-loss at 12.5% — naïve café, running runners ran?",
    'Note: see https://example.com/search?q=btc&page=2 山寨币全线下跌 AAVE PENDLE uni 0xAbC123 2024-01-02',
    'Dr Maria Lopez: 你好吗？ ünïcödé Ωmega ﬁnance ARE they happily connected; hedging hedges hedged',
  ];
  const text = sample.map((s) => JSON.stringify([indexTerms(s), labelTerms(s), asksQuestion(s)])).join('\n');
  fingerprintValue = createHash('sha256').update(`${FORMAT}\n${text}`).digest().readUInt32LE(0);
  return fingerprintValue;
}

const pad4 = (n: number) => (n + 3) & ~3;

/**
 * Encode a scope index state. Returns `undefined` when the state cannot be encoded (a term holding a line
 * break, an id beyond 32 bits): the caller then keeps no snapshot.
 */
export function encodeIndexSnapshot(input: { scopeKey: string; seq: number; state: ScopeIndexState }): Uint8Array | undefined {
  const { state, seq, scopeKey } = input;
  if (!Number.isSafeInteger(seq) || seq < 0) return undefined;
  for (const t of state.terms) if (t.includes('\n')) return undefined;
  const enc = new TextEncoder();
  const vocab = enc.encode(state.terms.join('\n'));
  const cats = enc.encode(JSON.stringify(state.categories));
  const key = enc.encode(scopeKey);
  const rows = state.ids.length;
  const sections: Array<Int32Array | Uint8Array> = [state.df, state.ids, state.termOffsets, state.termIds, state.labelOffsets, state.labelIds, state.cats, state.asks, vocab, cats, key];
  let size = HEADER;
  for (const sec of sections) size += pad4(sec.byteLength);
  const out = new Uint8Array(size + DIGEST);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, FORMAT, true);
  view.setUint32(8, tokenizerFingerprint(), true);
  view.setUint32(12, rows, true);
  view.setUint32(16, state.termIds.length, true);
  view.setUint32(20, state.labelIds.length, true);
  view.setUint32(24, state.terms.length, true);
  view.setUint32(28, vocab.byteLength, true);
  view.setUint32(32, cats.byteLength, true);
  view.setUint32(36, key.byteLength, true);
  view.setFloat64(40, seq, true);
  view.setFloat64(48, state.maxId, true);
  let at = HEADER;
  for (const sec of sections) {
    out.set(new Uint8Array(sec.buffer, sec.byteOffset, sec.byteLength), at);
    at += pad4(sec.byteLength);
  }
  out.set(createHash('sha256').update(out.subarray(0, size)).digest(), size);
  return out;
}

/** Little-endian hosts read the Int32 sections in place; others copy them through a DataView. */
const LITTLE_ENDIAN = new Uint8Array(Int32Array.of(1).buffer)[0] === 1;

/**
 * Decode and check a snapshot of `scopeKey`. `undefined` when it is of another scope, another format or
 * tokenizer, torn, corrupted or inconsistent in any way.
 */
export function decodeIndexSnapshot(bytes: Uint8Array, scopeKey: string): DecodedIndexSnapshot | undefined {
  try {
    return decode(bytes, scopeKey);
  } catch {
    return undefined;
  }
}

function decode(bytes: Uint8Array, scopeKey: string): DecodedIndexSnapshot | undefined {
  if (bytes.byteLength < HEADER + DIGEST || bytes.byteLength % 4 !== 0) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC || view.getUint32(4, true) !== FORMAT || view.getUint32(8, true) !== tokenizerFingerprint()) return undefined;
  const body = bytes.byteLength - DIGEST;
  const digest = createHash('sha256').update(bytes.subarray(0, body)).digest();
  for (let i = 0; i < DIGEST; i++) if (digest[i] !== bytes[body + i]) return undefined;
  const rows = view.getUint32(12, true);
  const termTotal = view.getUint32(16, true);
  const labelTotal = view.getUint32(20, true);
  const vocabSize = view.getUint32(24, true);
  const vocabBytes = view.getUint32(28, true);
  const catBytes = view.getUint32(32, true);
  const keyBytes = view.getUint32(36, true);
  const seq = view.getFloat64(40, true);
  const maxId = view.getFloat64(48, true);
  if (!Number.isSafeInteger(seq) || seq < 0 || !Number.isSafeInteger(maxId) || maxId < 0) return undefined;
  // Every section must fit exactly in the body before the digest.
  const lengths = [vocabSize * 4, rows * 4, (rows + 1) * 4, termTotal * 4, (rows + 1) * 4, labelTotal * 4, rows * 4, rows, vocabBytes, catBytes, keyBytes];
  let expected = HEADER;
  for (const l of lengths) expected += pad4(l);
  if (expected !== body) return undefined;
  let at = HEADER;
  const int32s = (n: number): Int32Array => {
    let a: Int32Array;
    if (LITTLE_ENDIAN) {
      // A copy when the bytes are not 4-aligned in their buffer (a Buffer slice of a pooled allocation).
      a = (bytes.byteOffset + at) % 4 === 0 ? new Int32Array(bytes.buffer, bytes.byteOffset + at, n) : new Int32Array(bytes.slice(at, at + n * 4).buffer);
    } else {
      a = new Int32Array(n);
      for (let i = 0; i < n; i++) a[i] = view.getInt32(at + i * 4, true);
    }
    at += pad4(n * 4);
    return a;
  };
  const raw = (n: number): Uint8Array => {
    const a = bytes.subarray(at, at + n);
    at += pad4(n);
    return a;
  };
  const df = int32s(vocabSize);
  const ids = int32s(rows);
  const termOffsets = int32s(rows + 1);
  const termIds = int32s(termTotal);
  const labelOffsets = int32s(rows + 1);
  const labelIds = int32s(labelTotal);
  const cats = int32s(rows);
  const asks = raw(rows);
  const dec = new TextDecoder('utf-8', { fatal: true });
  const vocabText = dec.decode(raw(vocabBytes));
  const categories: unknown = JSON.parse(dec.decode(raw(catBytes)));
  if (dec.decode(raw(keyBytes)) !== scopeKey) return undefined;
  const terms = vocabSize === 0 ? [] : vocabText.split('\n');
  if (terms.length !== vocabSize) return undefined;
  if (!Array.isArray(categories) || !categories.every((c) => typeof c === 'string')) return undefined;
  // The rows themselves are checked by createScopeIndex as it restores them (one pass, not two).
  return { seq, state: { terms, categories: categories as string[], df, ids, termOffsets, termIds, labelOffsets, labelIds, cats, asks, maxId } };
}
