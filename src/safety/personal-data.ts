import { createRequire } from 'node:module';
import { wordlist as bip39English } from '@scure/bip39/wordlists/english.js';
import { getCountrySpecifications, isValidIBAN } from 'ibantools';
import { findBase64Secrets, findSpacedSecrets } from './hidden-secrets';
import { findSecrets, type SecretMatch } from './secret-patterns';
import { isSolanaSecretKey } from './base58-keys';

/**
 * Personal data the dreaming gate keeps out of MEMORY.md (and anything else that promotes text into a file
 * every future prompt reads), found after {@link normaliseForScan}: the secret patterns (keys, addresses,
 * private keys, WIF and `xprv` keys), also when written with spaces inside or in base64, plus e-mail
 * addresses (also written `name (at) domain (dot) com`), phone numbers (`libphonenumber-js`: any number valid
 * in its numbering plan, bare digits included, US as the default region), US social security numbers,
 * payment card numbers that pass the Luhn check, IBANs in either case that pass ISO 13616 (mod-97, the
 * country's length and BBAN format, via `ibantools`), runs of 12 or more BIP-39 English words (a seed phrase;
 * the list comes from `@scure/bip39`; also written as "word 1 is abandon; word 2 is …"), 64-hex private keys
 * (`0x` + 64 hex digits, 64 hex digits labelled as a private key, or split into hex runs that add up to 64),
 * Solana secret keys (base58 of 64 bytes, checked by decoding with `@scure/base`, or the 64-number byte array
 * of a keypair file), and passwords stated in prose ("my exchange password is …", `pin: …`).
 */
export const PERSONAL_DATA_CLASSES = ['email', 'phone', 'us_ssn', 'card_number', 'iban', 'seed_phrase', 'hex_private_key', 'solana_secret_key', 'password'] as const;
export type PersonalDataClass = (typeof PERSONAL_DATA_CLASSES)[number];

// Format characters (zero-width space/joiners, BOM, soft hyphen, bidi marks, …) that hide a secret from a pattern.
const INVISIBLE = /[\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180E\u3164\uFFA0]/gu;

/** NFKC (full-width and compatibility forms fold to ASCII) with invisible format characters removed. */
export function normaliseForScan(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '');
}

const EMAIL = /\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b/g;
// An address with "at"/"dot" spelled out: `(at)`, `[at]`, `{at}`, `<at>`, or the bare words (then the last
// label must be a common top-level domain, so "looking at polka dot patterns" stays prose). No library
// covers these spellings; the regex only proposes, `obfuscatedEmail` decides.
const AT_SEP = String.raw`(?:\s*[(\[{<]\s*at\s*[)\]}>]\s*|\s+at\s+|@)`;
const DOT_SEP = String.raw`(?:\s*[(\[{<]\s*dot\s*[)\]}>]\s*|\s+dot\s+|\.)`;
const OBFUSCATED_EMAIL = new RegExp(String.raw`(?<![\w.%+-])[a-z0-9._%+-]{1,64}${AT_SEP}[a-z0-9-]{1,63}(?:${DOT_SEP}[a-z0-9-]{1,63}){1,4}(?![\w])`, 'giu');
const BRACKETED = /[(\[{<]\s*(?:at|dot)\s*[)\]}>]/iu;
const COMMON_TLDS = new Set(['com', 'org', 'net', 'edu', 'gov', 'io', 'co', 'uk', 'de', 'fr', 'es', 'it', 'nl', 'ca', 'au', 'ch', 'jp', 'cn', 'in', 'br', 'ru', 'me', 'us', 'info', 'biz', 'ai', 'app', 'dev', 'xyz']);
const PHONE_INTL = /(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?!\w)/g;
const SSN = /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g;
const CARD = /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g;
// Candidates in either case; `ibantools` decides (country length, BBAN format, mod-97).
const IBAN = /(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]){11,30}/g;
const IBAN_LENGTH = new Map(Object.entries(getCountrySpecifications()).flatMap(([cc, spec]) => (spec.chars ? [[cc, spec.chars] as const] : [])));
const HEX_KEY = /(?<![0-9A-Za-z])0x[0-9a-fA-F]{64}(?![0-9A-Za-z])/g;
const LABELLED_HEX_KEY = /\b(?:private|priv|secret|signing)[ _-]?key\b[^0-9a-fA-F\n]{0,16}([0-9a-fA-F]{64})(?![0-9A-Za-z])/gi;
const WORD = /[a-z]+/g;
const SEED_WORDS = new Set(bip39English);
const SEED_MIN_WORDS = 12;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function seedRuns(text: string): SecretMatch[] {
  const out: SecretMatch[] = [];
  const lower = text.toLowerCase();
  let runStart = -1;
  let runEnd = -1;
  let count = 0;
  let lastEnd = 0;
  const flush = () => {
    if (count >= SEED_MIN_WORDS) out.push({ pattern: 'seed_phrase', index: runStart, length: runEnd - runStart });
    count = 0;
    runStart = -1;
  };
  for (const m of lower.matchAll(WORD)) {
    const gap = lower.slice(lastEnd, m.index);
    // Words of one phrase are separated by whitespace (and at most light punctuation such as a numbered list).
    if (count > 0 && !/^[\s\d.,;:)(-]*$/.test(gap)) flush();
    if (SEED_WORDS.has(m[0])) {
      if (count === 0) runStart = m.index;
      count++;
      runEnd = m.index + m[0].length;
    } else flush();
    lastEnd = m.index + m[0].length;
  }
  flush();
  return out;
}

/**
 * Every match of `regex` that `keep` accepts. A rejected match does not consume its text: the scan resumes
 * one character later, so a candidate that ran on into prose does not hide a real hit inside it.
 */
function scan(text: string, regex: RegExp, keep: (m: RegExpExecArray) => SecretMatch | undefined): SecretMatch[] {
  const out: SecretMatch[] = [];
  regex.lastIndex = 0;
  for (let m = regex.exec(text); m !== null; m = regex.exec(text)) {
    const hit = keep(m);
    if (hit) {
      out.push(hit);
      regex.lastIndex = Math.max(m.index + 1, hit.index + hit.length);
    } else regex.lastIndex = m.index + 1;
  }
  return out;
}

/** The IBAN at the start of a candidate: its country's length of IBAN characters (spaces and hyphens skipped). */
function ibanAt(m: RegExpExecArray): SecretMatch | undefined {
  const length = IBAN_LENGTH.get(m[0].slice(0, 2).toUpperCase());
  if (length === undefined) return undefined;
  let compact = '';
  let end = 0;
  for (; end < m[0].length && compact.length < length; end++) if (/[A-Za-z0-9]/u.test(m[0][end]!)) compact += m[0][end]!.toUpperCase();
  if (compact.length !== length || /[A-Za-z0-9]/u.test(m[0][end] ?? '') || !isValidIBAN(compact)) return undefined;
  return { pattern: 'iban', index: m.index, length: end };
}

function obfuscatedEmail(m: RegExpExecArray): SecretMatch | undefined {
  const s = m[0];
  if (!/\s(?:at|dot)\s|[(\[{<]/iu.test(s)) return undefined; // a plain address: EMAIL covers it
  const tld = (/([a-z0-9-]+)$/iu.exec(s)?.[1] ?? '').toLowerCase();
  if (!/^[a-z]{2,24}$/u.test(tld)) return undefined;
  if (!BRACKETED.test(s) && !COMMON_TLDS.has(tld)) return undefined;
  return { pattern: 'email', index: m.index, length: s.length };
}

type PhoneLibrary = typeof import('libphonenumber-js/max');
let phoneLibrary: PhoneLibrary | undefined;
/**
 * `libphonenumber-js` with its full metadata, loaded on the first scan that has digits: importing the package
 * (or starting the CLI) does not pay for the numbering plans of every country.
 */
function phones(): PhoneLibrary {
  phoneLibrary ??= createRequire(import.meta.url)('libphonenumber-js/max') as PhoneLibrary;
  return phoneLibrary;
}

/** Phone numbers `libphonenumber-js` finds and judges valid (US as the region of numbers without `+`). */
function phoneNumbers(text: string): SecretMatch[] {
  if (!/\d{3}/u.test(text.replace(/[\s().-]/gu, ''))) return [];
  return phones().findPhoneNumbersInText(text, { defaultCountry: 'US' })
    .filter((n) => n.number.isValid())
    .map((n) => ({ pattern: 'phone', index: n.startsAt, length: n.endsAt - n.startsAt }));
}

/** 64-hex private keys: `0x` + 64 hex digits, or 64 hex digits labelled as a private key. */
function hexKeys(text: string): SecretMatch[] {
  const out: SecretMatch[] = [];
  for (const m of text.matchAll(HEX_KEY)) out.push({ pattern: 'hex_private_key', index: m.index, length: m[0].length });
  for (const m of text.matchAll(LABELLED_HEX_KEY)) out.push({ pattern: 'hex_private_key', index: m.index + m[0].length - m[1]!.length, length: m[1]!.length });
  return out;
}

// "word 1 is abandon; word 2: ability …": a seed phrase written one numbered word at a time.
const NUMBERED_WORD = /\b(?:word|w|#|no\.?|number)\s*#?\s*\d{1,2}\s*(?:is|was|=|:|-|\))?\s*([a-z]+)/giu;
function numberedSeedWords(text: string): SecretMatch[] {
  const found = [...text.matchAll(NUMBERED_WORD)].filter((m) => SEED_WORDS.has(m[1]!.toLowerCase()));
  if (found.length < SEED_MIN_WORDS) return [];
  const first = found[0]!;
  const last = found.at(-1)!;
  return [{ pattern: 'seed_phrase', index: first.index, length: last.index + last[0].length - first.index }];
}

// Runs of hex digits (16 or more, letters and digits mixed) close together whose lengths add up to 64: a private
// key written in halves or quarters.
const HEX_RUN = /(?<![0-9A-Za-z])(?:0x)?([0-9a-fA-F]{16,48})(?![0-9A-Za-z])/g;
function splitHexKeys(text: string): SecretMatch[] {
  const runs = [...text.matchAll(HEX_RUN)].filter((m) => /[a-f]/iu.test(m[1]!) && /\d/u.test(m[1]!));
  for (let i = 0; i < runs.length; i++) {
    let total = 0;
    for (let j = i; j < runs.length; j++) {
      if (j > i && runs[j]!.index - (runs[j - 1]!.index + runs[j - 1]![0].length) > 120) break;
      total += runs[j]![1]!.length;
      if (total === 64 && j > i) return [{ pattern: 'hex_private_key', index: runs[i]!.index, length: runs[j]!.index + runs[j]![0].length - runs[i]!.index }];
      if (total > 64) break;
    }
  }
  return [];
}

const SOLANA_SECRET = /(?<![1-9A-HJ-NP-Za-km-z])[1-9A-HJ-NP-Za-km-z]{80,90}(?![1-9A-HJ-NP-Za-km-z])/g;
const KEYPAIR_BYTES = /\[\s*\d{1,3}(?:\s*,\s*\d{1,3}){63}\s*\]/g;
// A password stated in prose: the value must look like one (a digit, a symbol or mixed case), or be quoted.
const PASSWORD = /\b(?:pass(?:word|wd|code|phrase)|pin(?:\s+code)?|login|2fa\s+(?:backup\s+)?code)\s*(?:is|was|=|:|-)\s*(?:"([^"\n]{4,64})"|'([^'\n]{4,64})'|`([^`\n]{4,64})`|([^\s"'`]{4,64}))/giu;
function passwords(text: string): SecretMatch[] {
  const out: SecretMatch[] = [];
  for (const m of text.matchAll(PASSWORD)) {
    const quoted = m[1] ?? m[2] ?? m[3];
    const bare = (m[4] ?? '').replace(/[.,;!?)]+$/u, '');
    const value = quoted ?? bare;
    const looksLikeOne = quoted !== undefined || (/\d|[^\w\s]/u.test(value) && /[a-z]/iu.test(value)) || (/[a-z]/u.test(value) && /[A-Z]/u.test(value.slice(1)));
    if (value.length >= 4 && looksLikeOne) out.push({ pattern: 'password', index: m.index, length: m[0].length });
  }
  return out;
}

/** Hits of the personal-data classes in already-normalised text. */
function personalHits(text: string): SecretMatch[] {
  const hits: SecretMatch[] = [];
  const add = (pattern: PersonalDataClass, regex: RegExp, keep: (s: string) => boolean = () => true) => {
    for (const m of text.matchAll(regex)) if (keep(m[0])) hits.push({ pattern, index: m.index, length: m[0].length });
  };
  hits.push(...hexKeys(text));
  add('email', EMAIL);
  hits.push(...scan(text, OBFUSCATED_EMAIL, obfuscatedEmail));
  hits.push(...scan(text, IBAN, ibanAt));
  add('card_number', CARD, (s) => {
    const digits = s.replace(/[ -]/g, '');
    return digits.length >= 13 && digits.length <= 19 && luhn(digits) && !/^(\d)\1+$/.test(digits);
  });
  add('us_ssn', SSN);
  add('phone', PHONE_INTL, (s) => s.replace(/\D/g, '').length >= 8);
  hits.push(...phoneNumbers(text));
  hits.push(...seedRuns(text), ...numberedSeedWords(text), ...splitHexKeys(text), ...passwords(text));
  add('solana_secret_key', SOLANA_SECRET, isSolanaSecretKey);
  add('solana_secret_key', KEYPAIR_BYTES);
  return hits;
}

/**
 * Every secret or personal-data hit in `text`, found after normalising it (NFKC, invisible characters
 * removed), so `sk-\u200Bant-…` or a full-width card number is caught. Indexes refer to the normalised text.
 * Overlapping hits keep the first class found (secrets first).
 *
 * @example
 * ```ts
 * findPersonalData('mail me at ana@example.com').map((h) => h.pattern); // ['email']
 * ```
 */
export function findPersonalData(text: string, options: { includeIdentifiers?: boolean } = {}): SecretMatch[] {
  const normal = normaliseForScan(text);
  const out = findSecrets(normal, { includeIdentifiers: options.includeIdentifiers ?? true });
  const taken = out.map((h) => [h.index, h.index + h.length] as const);
  const more = [...findSpacedSecrets(normal), ...findBase64Secrets(normal, hexKeys), ...personalHits(normal)];
  for (const h of more) {
    const end = h.index + h.length;
    if (taken.some(([s, e]) => h.index < e && end > s)) continue;
    taken.push([h.index, end]);
    out.push(h);
  }
  return out;
}
