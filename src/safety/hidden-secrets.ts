/**
 * Secrets written so the plain patterns miss them: with spaces inside (`sk-ant-api03- abcd efgh …`, or every
 * character spaced) and in base64 (a config blob holding a key). Used by `findPersonalData` (the dreaming
 * gate); the audit redactor and the input scanner keep to the plain patterns.
 */
import { findSecrets, SECRET_PATTERNS, type SecretMatch, type SecretPattern } from './secret-patterns';

/** The plain patterns that are secrets (not on-chain identifiers, not multi-line PEM), without their word boundaries. */
const SPACED_PATTERNS: readonly SecretPattern[] = SECRET_PATTERNS
  .filter((p) => !p.identifier && p.name !== 'pem_private')
  .map((p) => ({ ...p, regex: new RegExp(p.regex.source.replace(/^\\b/u, '').replace(/\\b$/u, ''), p.regex.flags) }));

const WORD_CHAR = /[A-Za-z0-9_]/u;

/**
 * Secrets with whitespace inside: the text is scanned with its whitespace removed, and a match counts when it
 * starts where a word starts in the original, spans at least one removed space, and holds a letter and a digit
 * after its first four characters (a key body is random; prose that follows a key prefix is not).
 */
export function findSpacedSecrets(text: string): SecretMatch[] {
  if (!/\s/u.test(text)) return [];
  const at: number[] = [];
  let compact = '';
  for (let i = 0; i < text.length; i++) {
    if (/\s/u.test(text[i]!)) continue;
    at.push(i);
    compact += text[i];
  }
  const out: SecretMatch[] = [];
  for (const h of findSecrets(compact, { patterns: SPACED_PATTERNS })) {
    const start = at[h.index]!;
    const end = at[h.index + h.length - 1]! + 1;
    if (end - start === h.length) continue; // no space inside: the plain patterns see it
    if (start > 0 && WORD_CHAR.test(text[start - 1]!)) continue;
    const body = compact.slice(h.index + 4, h.index + h.length);
    if (!/[A-Za-z]/u.test(body) || !/\d/u.test(body)) continue;
    out.push({ pattern: h.pattern, index: start, length: end - start });
  }
  return out;
}

const BASE64_RUN = /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{24,}={0,2}/gu;

/**
 * Secrets inside base64 (or base64url) runs of 24+ characters: a run that decodes to printable text is scanned
 * with the plain patterns (and `extra`, e.g. the hex private key check); a hit is reported over the whole run.
 */
export function findBase64Secrets(text: string, extra: (decoded: string) => readonly SecretMatch[] = () => []): SecretMatch[] {
  const out: SecretMatch[] = [];
  for (const m of text.matchAll(BASE64_RUN)) {
    const decoded = Buffer.from(m[0].replace(/=+$/u, ''), 'base64').toString('utf8');
    if (decoded.length < 16 || !isMostlyPrintable(decoded)) continue;
    const hit = findSecrets(decoded, { includeIdentifiers: false })[0] ?? extra(decoded)[0];
    if (hit) out.push({ pattern: hit.pattern, index: m.index, length: m[0].length });
  }
  return out;
}

/** At least 90 % printable ASCII (tabs and newlines count) and no replacement character. */
function isMostlyPrintable(s: string): boolean {
  if (s.includes('\uFFFD')) return false;
  let printable = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x20 && c < 0x7f) || c === 0x09 || c === 0x0a || c === 0x0d) printable++;
  }
  return printable >= 0.9 * s.length;
}
