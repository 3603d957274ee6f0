import { createHash } from 'node:crypto';

/**
 * A JSON-safe copy of `value` with object keys in sorted order at every depth, `undefined` members dropped,
 * bytes as `{ $bytes: base64 }`, dates as `{ $date: iso }` and URLs as strings, so two equal requests serialise to
 * the same text whatever order their keys were written in.
 */
export function canonicalize(value: unknown): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'bigint') return value.toString();
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (value instanceof Date) return { $date: value.toISOString() };
  if (value instanceof URL) return value.href;
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value).toString('base64') };
  if (value instanceof RegExp) return value.source;
  if (Array.isArray(value)) return value.map((v) => canonicalize(v) ?? null);
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = canonicalize((value as Record<string, unknown>)[key]);
      if (v !== undefined) out[key] = v;
    }
    return out;
  }
  return String(value);
}

/** Canonical JSON text (sorted keys, see {@link canonicalize}); `indent` for a readable form. */
export function canonicalJson(value: unknown, indent?: number): string {
  return JSON.stringify(canonicalize(value), null, indent) ?? 'null';
}

/** The sha256 (hex) of a value's canonical JSON. */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

/** Undo {@link canonicalize}'s `$date` and `$bytes` encodings (for replayed responses). */
export function reviveCanonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reviveCanonical);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (keys.length === 1 && typeof obj.$date === 'string') return new Date(obj.$date);
    if (keys.length === 1 && typeof obj.$bytes === 'string') return new Uint8Array(Buffer.from(obj.$bytes, 'base64'));
    const out: Record<string, unknown> = {};
    for (const k of keys) out[k] = reviveCanonical(obj[k]);
    return out;
  }
  return value;
}
