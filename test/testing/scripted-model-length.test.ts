/** The scripted model counts a prompt's JSON length without serialising it: the same number as JSON.stringify, always. */
import { describe, expect, it } from 'vitest';
import { estimateTokens } from '@minara/agent';
import { estimatePromptTokens } from '@minara/agent/testing';

const viaStringify = (prompt: unknown, tools?: unknown) => Math.ceil((JSON.stringify(prompt) ?? '').length / 4 + (tools ? (JSON.stringify(tools) ?? '').length / 4 : 0));

describe('estimatePromptTokens counts like JSON.stringify', () => {
  const long = `# Identity\n\n"quoted" \\ back\tslash ${'é—中文 '.repeat(200)}`;
  const cases: Array<[string, unknown]> = [
    ['plain prompt', [{ role: 'system', content: long }, { role: 'user', content: [{ type: 'text', text: 'hi "there"\n' }] }]],
    ['numbers', [1, -0, 2.5e-7, 1e21, -1e300, NaN, Infinity, -Infinity, 0.1 + 0.2]],
    ['left out and nulls', { a: undefined, b: () => 1, c: Symbol('x'), d: null, e: [undefined, () => 1, Symbol('y')] }],
    ['empty containers', { o: {}, a: [], s: '', nested: [[[]], [{}]] }],
    ['control characters and lone surrogates', ['\u0000\u001f\u007f', '\ud800', 'a\udc00b', '😀', '\u2028\u2029', 'x'.repeat(300) + '\ud83d']],
    ['a long string without escapes', 'y'.repeat(5000)],
    ['toJSON and class instances', { d: new Date(0), m: new Map([[1, 2]]), u: new Uint8Array([1, 2]), box: Object(5), str: Object('s'), custom: { toJSON: () => ({ replaced: true }) } }],
    ['null prototype and sparse arrays', [Object.assign(Object.create(null) as object, { k: 1 }), [1, , 3]]],
    ['integer-like keys ordered first', { b: 1, 2: 'two', a: 2, 1: 'one' }],
    ['deep but under the plain limit', JSON.parse(`${'['.repeat(60)}1${']'.repeat(60)}`)],
    ['top-level undefined', undefined],
  ];
  for (const [name, value] of cases) {
    it(name, () => {
      expect(estimatePromptTokens(value)).toBe(viaStringify(value));
      // The runtime's estimate (token budgets, compaction) counts the same way.
      expect(estimateTokens(value)).toBe(viaStringify(value));
      expect(estimatePromptTokens([value, value], [{ type: 'function', name: 't', inputSchema: { type: 'object' } }])).toBe(viaStringify([value, value], [{ type: 'function', name: 't', inputSchema: { type: 'object' } }]));
    });
  }

  it('the same long string sent again (another copy, same text) counts the same; a changed one is counted anew', () => {
    const a = `${'line "one"\n'.repeat(100)}`;
    const copy = [...a].join('');
    expect(estimatePromptTokens([a])).toBe(viaStringify([a]));
    expect(estimatePromptTokens([copy])).toBe(viaStringify([a]));
    const changed = `${a}\n`;
    expect(estimatePromptTokens([changed])).toBe(viaStringify([changed]));
  });

  it('a getter is read as JSON.stringify reads it; bigint throws like JSON.stringify', () => {
    let reads = 0;
    const withGetter = { get v() { reads++; return 'value'; } };
    expect(estimatePromptTokens(withGetter)).toBe(viaStringify(withGetter));
    expect(reads).toBe(2);
    expect(() => estimatePromptTokens({ n: 1n })).toThrow(TypeError);
  });
});
