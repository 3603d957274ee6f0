/**
 * `JSON.stringify` for plain data without recursion: an explicit stack, so a value nested 5,000 levels deep
 * serialises like a shallow one instead of overflowing the call stack. The scripted model uses it to turn a
 * scripted tool input into the JSON text a provider would send, so deep input reaches the same bounds as on the
 * real provider path (the registry's depth limit), and to size prompts.
 */

type Frame =
  | { readonly kind: 'array'; readonly source: object; readonly items: readonly unknown[]; index: number }
  | { readonly kind: 'object'; readonly source: object; readonly entries: ReadonlyArray<readonly [string, unknown]>; index: number };

const skipped = (v: unknown) => v === undefined || typeof v === 'function' || typeof v === 'symbol';
const jsonValue = (v: unknown): unknown => (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function' ? (v as { toJSON: () => unknown }).toJSON() : v);

/**
 * The JSON text of `value`, as `JSON.stringify(value)` gives it for data (objects, arrays, strings, numbers,
 * booleans, null; `toJSON` honoured; `undefined`, functions and symbols left out of objects and `null` in
 * arrays); `undefined` for a top-level value JSON cannot hold. A cycle throws a `TypeError`, as `JSON.stringify` does.
 */
export function stringifyJsonIteratively(value: unknown): string | undefined {
  const top = jsonValue(value);
  if (skipped(top)) return undefined;
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = new Set<object>();
  const write = (raw: unknown): void => {
    const v = jsonValue(raw);
    if (v === null || typeof v !== 'object') {
      out.push(JSON.stringify(v) ?? 'null');
      return;
    }
    if (open.has(v)) throw new TypeError('Converting circular structure to JSON');
    open.add(v);
    if (Array.isArray(v)) {
      out.push('[');
      stack.push({ kind: 'array', source: v, items: v, index: 0 });
    } else {
      out.push('{');
      const entries = Object.entries(v).map(([k, x]) => [k, jsonValue(x)] as const).filter(([, x]) => !skipped(x));
      stack.push({ kind: 'object', source: v, entries, index: 0 });
    }
  };
  write(top);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const length = frame.kind === 'array' ? frame.items.length : frame.entries.length;
    if (frame.index >= length) {
      out.push(frame.kind === 'array' ? ']' : '}');
      open.delete(frame.source);
      stack.pop();
      continue;
    }
    if (frame.index > 0) out.push(',');
    if (frame.kind === 'array') {
      const item = frame.items[frame.index++];
      write(skipped(item) ? null : item);
    } else {
      const [key, item] = frame.entries[frame.index++]!;
      out.push(`${JSON.stringify(key)}:`);
      write(item);
    }
  }
  return out.join('');
}
