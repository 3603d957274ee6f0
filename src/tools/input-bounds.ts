/** Deepest nesting of arrays and objects a tool input may have. */
export const MAX_TOOL_INPUT_DEPTH = 64;
/** Largest tool input, as JSON text, in bytes (UTF-16 code units, close enough for a bound). */
export const MAX_TOOL_INPUT_BYTES = 1_000_000;

/** Key of the stand-in object that replaces a model's tool input too deep or too large to parse safely. */
export const REJECTED_TOOL_INPUT_KEY = '__minaraRejectedToolInput';

/**
 * Why a tool input given as JSON text is out of bounds (too large or nested too deep), or undefined. One pass
 * over the text, no recursion and no parse, so a hostile input cannot exhaust the stack while being checked.
 */
export function jsonTextBoundsProblem(text: string): string | undefined {
  if (text.length > MAX_TOOL_INPUT_BYTES) return `the tool input is ${text.length} characters of JSON; the limit is ${MAX_TOOL_INPUT_BYTES}`;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > MAX_TOOL_INPUT_DEPTH) return `the tool input is nested more than ${MAX_TOOL_INPUT_DEPTH} levels deep`;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return undefined;
}

/**
 * Why a tool input value is out of bounds, or undefined: nested deeper than {@link MAX_TOOL_INPUT_DEPTH}, more
 * than {@link MAX_TOOL_INPUT_BYTES} of strings and keys, or a stand-in for a rejected model input. Iterative.
 */
export function toolInputBoundsProblem(value: unknown): string | undefined {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const rejected = (value as Record<string, unknown>)[REJECTED_TOOL_INPUT_KEY];
    if (typeof rejected === 'string') return rejected;
  }
  let size = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string') size += v.length;
    if (size > MAX_TOOL_INPUT_BYTES) return `the tool input holds more than ${MAX_TOOL_INPUT_BYTES} characters`;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > MAX_TOOL_INPUT_DEPTH) return `the tool input is nested more than ${MAX_TOOL_INPUT_DEPTH} levels deep`;
    for (const [k, child] of Object.entries(v)) {
      size += k.length;
      stack.push([child, depth + 1]);
    }
  }
  return undefined;
}
