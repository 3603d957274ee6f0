/**
 * The length of a value's JSON text without building it (the runtime's token estimates and the scripted model's
 * usage both count characters of JSON ÷ 4, on every model call): plain data is counted, long strings' lengths are
 * remembered by content (a system prompt's blocks come back at every call), anything else is serialised.
 */

/** A character `JSON.stringify` escapes in a string: a control character, `"`, `\\`, or a surrogate (lone ones are). */
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;
/** Strings at least this long have their JSON length remembered (the system prompt's blocks, sent at every call). */
const LONG_STRING = 256;
const MAX_LONG_STRINGS = 64;
const longStringLengths = new Map<string, number>();

/** Characters of `JSON.stringify(s)`. */
function stringJsonLength(s: string): number {
  if (s.length < LONG_STRING) return NEEDS_ESCAPE.test(s) ? JSON.stringify(s).length : s.length + 2;
  let n = longStringLengths.get(s);
  if (n === undefined) {
    n = NEEDS_ESCAPE.test(s) ? JSON.stringify(s).length : s.length + 2;
    if (longStringLengths.size >= MAX_LONG_STRINGS) longStringLengths.delete(longStringLengths.keys().next().value as string);
    longStringLengths.set(s, n);
  }
  return n;
}

/** {@link plainJsonLength}'s answers besides a length: a value an object leaves out, and "not plain data". */
const LEFT_OUT = -1;
const NOT_PLAIN = -2;
const MAX_PLAIN_DEPTH = 64;

/**
 * Characters of `JSON.stringify(v)` for plain data (plain objects and arrays, strings, finite and other numbers,
 * booleans, null), counted without building the text; `LEFT_OUT` for what an object leaves out (undefined, a
 * function, a symbol); `NOT_PLAIN` for anything else (a `toJSON`, a class instance, a typed array, a bigint, depth
 * past 64), which the caller serialises the ordinary way.
 */
function plainJsonLength(v: unknown, depth: number): number {
  switch (typeof v) {
    case 'string':
      return stringJsonLength(v);
    case 'number':
      return Number.isFinite(v) ? String(v).length : 4;
    case 'boolean':
      return v ? 4 : 5;
    case 'undefined':
    case 'function':
    case 'symbol':
      return LEFT_OUT;
    case 'bigint':
      return NOT_PLAIN;
    default:
  }
  if (v === null) return 4;
  if (depth >= MAX_PLAIN_DEPTH) return NOT_PLAIN;
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto === Array.prototype) {
    const items = v as readonly unknown[];
    if (items.length === 0) return 2;
    let n = items.length + 1; // the brackets and the commas
    for (let i = 0; i < items.length; i++) {
      const x = plainJsonLength(items[i], depth + 1);
      if (x === NOT_PLAIN) return NOT_PLAIN;
      n += x === LEFT_OUT ? 4 : x; // null in an array
    }
    return n;
  }
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
  const record = v as Record<string, unknown>;
  let n = 2;
  let members = 0;
  for (const key of Object.keys(record)) {
    const x = plainJsonLength(record[key], depth + 1);
    if (x === NOT_PLAIN) return NOT_PLAIN;
    if (x === LEFT_OUT) continue;
    n += (members++ > 0 ? 1 : 0) + stringJsonLength(key) + 1 + x;
  }
  return n;
}

/**
 * Characters of `JSON.stringify(value)` (0 when it gives `undefined`): counted for plain data, else `serialise`
 * (by default the engine's `JSON.stringify`). The same number either way.
 */
export function jsonTextLength(value: unknown, serialise: (value: unknown) => string | undefined = (v) => JSON.stringify(v)): number {
  const plain = plainJsonLength(value, 0);
  if (plain >= 0) return plain;
  if (plain === LEFT_OUT) return 0;
  return (serialise(value) ?? '').length;
}
