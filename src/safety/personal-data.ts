import { wordlist as bip39English } from '@scure/bip39/wordlists/english.js';
import { electronicFormatIBAN, isValidIBAN } from 'ibantools';
import { findSecrets, type SecretMatch } from './secret-patterns';

/**
 * Personal data the dreaming gate keeps out of MEMORY.md (and anything else that promotes text into a file
 * every future prompt reads), found after {@link normaliseForScan}: the secret patterns (keys, addresses,
 * private keys) plus e-mail addresses, phone numbers, US social security numbers, payment card numbers that
 * pass the Luhn check, IBANs that pass ISO 13616 (mod-97 and the country's length, via `ibantools`), and
 * runs of 12 or more BIP-39 English words (a seed phrase; the list comes from `@scure/bip39`).
 */
export const PERSONAL_DATA_CLASSES = ['email', 'phone', 'us_ssn', 'card_number', 'iban', 'seed_phrase'] as const;
export type PersonalDataClass = (typeof PERSONAL_DATA_CLASSES)[number];

// Format characters (zero-width space/joiners, BOM, soft hyphen, bidi marks, …) that hide a secret from a pattern.
const INVISIBLE = /[\p{Cf}\u034F\u115F\u1160\u17B4\u17B5\u180E\u3164\uFFA0]/gu;

/** NFKC (full-width and compatibility forms fold to ASCII) with invisible format characters removed. */
export function normaliseForScan(text: string): string {
  return text.normalize('NFKC').replace(INVISIBLE, '');
}

const EMAIL = /\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})*\.[A-Za-z]{2,24}\b/g;
const PHONE_INTL = /(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,4}\)?){2,5}(?!\w)/g;
const PHONE_NANP = /(?<!\w)\(?\d{3}\)?[ .-]\d{3}[ .-]\d{4}(?!\w)/g;
const SSN = /(?<!\d)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?!\d)/g;
const CARD = /(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)/g;
const IBAN = /\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b/g;
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

/** Hits of the personal-data classes in already-normalised text. */
function personalHits(text: string): SecretMatch[] {
  const hits: SecretMatch[] = [];
  const add = (pattern: PersonalDataClass, regex: RegExp, keep: (s: string) => boolean = () => true) => {
    for (const m of text.matchAll(regex)) if (keep(m[0])) hits.push({ pattern, index: m.index, length: m[0].length });
  };
  add('email', EMAIL);
  add('iban', IBAN, (s) => isValidIBAN(electronicFormatIBAN(s) ?? ''));
  add('card_number', CARD, (s) => {
    const digits = s.replace(/[ -]/g, '');
    return digits.length >= 13 && digits.length <= 19 && luhn(digits) && !/^(\d)\1+$/.test(digits);
  });
  add('us_ssn', SSN);
  add('phone', PHONE_INTL, (s) => s.replace(/\D/g, '').length >= 8);
  add('phone', PHONE_NANP);
  hits.push(...seedRuns(text));
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
  for (const h of personalHits(normal)) {
    const end = h.index + h.length;
    if (taken.some(([s, e]) => h.index < e && end > s)) continue;
    taken.push([h.index, end]);
    out.push(h);
  }
  return out;
}
