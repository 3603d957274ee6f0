import { isExtendedPrivateKey, isWifPrivateKey } from './base58-keys';

/**
 * High-confidence secret patterns, shared by the audit redactor, the input scanner and the dreaming
 * PII gate. Order matters: `anthropic_key` is tested before `openai_key`.
 *
 * Deliberately absent (too many false positives against hashes, signatures and prose): Solana base58
 * addresses and bare 64-hex strings (a `0x` 64-hex string is a transaction hash as often as a private key:
 * the dreaming gate treats it as a key, see `findPersonalData`, but audit rows and tool arguments keep it). Seed phrases, cards, IBANs, e-mail and phone numbers are personal data,
 * checked by `findPersonalData` (the dreaming gate) with validation a regex alone cannot do.
 */
export interface SecretPattern {
  /** Stable class name used in logs and quarantine records. */
  readonly name: string;
  /** Global, so it can be used for replacement; reset `lastIndex` before `test`. */
  readonly regex: RegExp;
  /** True for on-chain identifiers (addresses): sensitive in memory files, fine in tool arguments. */
  readonly identifier?: boolean;
  /** A check a match must also pass (a checksum), when the shape alone is not enough. */
  readonly validate?: ((match: string) => boolean) | undefined;
}

/** The pattern list of the spec's PII gate, in match order. */
export const SECRET_PATTERNS: readonly SecretPattern[] = [
  { name: 'anthropic_key', regex: /\bsk-ant-[A-Za-z0-9_-]{20,}/g },
  { name: 'openai_key', regex: /\bsk-(?!ant-)(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}/g },
  { name: 'stripe_key', regex: /\b(?:sk|rk)_live_[A-Za-z0-9]{10,}/g },
  { name: 'minara_key', regex: /\bmk_(?:live|test)_[A-Za-z0-9_-]{16,}/g },
  // A JSON Web Token: base64url header and payload that both open a JSON object (`eyJ`), then the signature.
  { name: 'jwt', regex: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g },
  { name: 'github_pat', regex: /\b(?:github_pat_[A-Za-z0-9_]{20,}|gh[opusr]_[A-Za-z0-9]{20,})/g },
  { name: 'google_api_key', regex: /\bAIza[0-9A-Za-z_-]{35}/g },
  { name: 'slack_token', regex: /\bxox[bpars]-[A-Za-z0-9-]{10,}/g },
  { name: 'aws_access_key', regex: /\bAKIA[0-9A-Z]{16}\b/g },
  { name: 'evm_address', regex: /\b0x[a-fA-F0-9]{40}\b/g, identifier: true },
  { name: 'btc_bech32', regex: /\bbc1[ac-hj-np-z02-9]{11,71}\b/g, identifier: true },
  { name: 'btc_legacy', regex: /\b[13][a-km-zA-HJ-NP-Z1-9]{25,34}\b/g, identifier: true },
  // Base58check keys: only matches whose checksum and payload hold (`@scure/base`), so random base58 is not one.
  { name: 'wif_private_key', regex: /\b[59KLc][1-9A-HJ-NP-Za-km-z]{50,51}\b/g, validate: isWifPrivateKey },
  { name: 'extended_private_key', regex: /\b[tuvxyz]prv[1-9A-HJ-NP-Za-km-z]{100,108}\b/g, validate: isExtendedPrivateKey },
  {
    name: 'pem_private',
    regex: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|$)/g,
  },
];

/** A pattern hit: which class matched and where. */
export interface SecretMatch {
  readonly pattern: string;
  readonly index: number;
  readonly length: number;
}

/**
 * Every secret-pattern hit in `text`, in pattern order.
 *
 * @example
 * ```ts
 * findSecrets('key sk-ant-abcdefghijklmnopqrstu').map((m) => m.pattern); // ['anthropic_key']
 * ```
 */
export function findSecrets(
  text: string,
  options: { includeIdentifiers?: boolean; patterns?: readonly SecretPattern[] } = {},
): SecretMatch[] {
  const { includeIdentifiers = true, patterns = SECRET_PATTERNS } = options;
  const hits: SecretMatch[] = [];
  const taken: Array<[number, number]> = [];
  for (const p of patterns) {
    if (!includeIdentifiers && p.identifier) continue;
    p.regex.lastIndex = 0;
    for (const m of text.matchAll(p.regex)) {
      const start = m.index;
      const end = start + m[0].length;
      if (taken.some(([s, e]) => start < e && end > s)) continue;
      if (p.validate && !p.validate(m[0])) continue;
      taken.push([start, end]);
      hits.push({ pattern: p.name, index: start, length: m[0].length });
    }
  }
  return hits;
}

/**
 * The shortest text any default pattern matches: a Bech32 address (`bc1` + 11 characters); a Slack token (15)
 * is the shortest secret. Shorter strings (a symbol, an amount, an id) skip the scan: every audited argument is
 * redacted, and most are a few characters long.
 */
const SHORTEST_MATCH = 14;

/** Replace every secret (not on-chain identifiers, by default) with `[REDACTED:<class>]`. */
export function redactSecrets(text: string, options: { includeIdentifiers?: boolean } = {}): string {
  if (text.length < SHORTEST_MATCH) return text;
  const hits = findSecrets(text, { includeIdentifiers: options.includeIdentifiers ?? false });
  if (hits.length === 0) return text;
  hits.sort((a, b) => b.index - a.index);
  let out = text;
  for (const h of hits) out = `${out.slice(0, h.index)}[REDACTED:${h.pattern}]${out.slice(h.index + h.length)}`;
  return out;
}

const SECRET_KEY_NAMES = /^(?:pass(?:word|phrase)?|secret|token|api[_-]?key|apikey|private[_-]?key|privkey|mnemonic|seed(?:[_-]?phrase)?|authorization|auth|credentials?|access[_-]?token|refresh[_-]?token|client[_-]?secret)$/i;

/**
 * A deep copy of `value` with secret-named fields (`password`, `apiKey`, `mnemonic`, …) replaced by
 * `[REDACTED]` and secret-looking strings redacted by pattern. Used for audit arguments.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (depth > 12) return '[TRUNCATED]';
  if (typeof value === 'string') return redactSecrets(value);
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = SECRET_KEY_NAMES.test(k) && v !== null && v !== undefined ? '[REDACTED]' : redactValue(v, depth + 1);
    }
    return out;
  }
  return value;
}
