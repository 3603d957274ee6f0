/**
 * The harness behind test/docs/programs.test.ts and scripts/check-doc-programs.ts: which blocks are programs,
 * the placeholder rule, diagnostics mapped back to the markdown line, and a program that fails or never exits
 * reported with its file and line.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type DocBlock, describeFailure, extractBlocks, inventory, mapDiagnostics, placeholderProblems, programEnv, programFileName, runPrograms } from '../../scripts/doc-programs';

const md = [
  '# Title', //                                    1
  '', //                                           2
  '```ts', //                                      3
  "import { createApp } from '@minara/agent';", // 4
  'await createApp();', //                         5
  '```', //                                        6
  '', //                                           7
  '```ts fragment', //                             8
  'registry.dispatch(…);', //                      9
  '```', //                                        10
  '', //                                           11
  '1. In a list:', //                              12
  '', //                                           13
  '   ```typescript', //                           14
  '   const x = 1;', //                            15
  '   ```', //                                     16
  '', //                                           17
  '```json', //                                    18
  '{ "a": 1 }', //                                 19
  '```', //                                        20
  '```tsx fragmnet', //                            21
  'useChat();', //                                 22
  '```', //                                        23
].join('\n');

describe('extractBlocks', () => {
  it('finds TypeScript blocks (indented ones too) with the line of their first code line and their flags; other languages are not read', () => {
    const blocks = extractBlocks('docs/x.md', md);
    expect(blocks.map((b) => [b.line, b.lang, b.flags])).toEqual([
      [4, 'ts', []],
      [9, 'ts', ['fragment']],
      [15, 'typescript', []],
      [22, 'tsx', ['fragmnet']],
    ]);
    expect(blocks[0]!.code).toBe("import { createApp } from '@minara/agent';\nawait createApp();\n");
    expect(blocks[2]!.code).toBe('const x = 1;\n'); // the list's indentation is removed
  });

  it('sorts blocks into programs and fragments; a block that is neither (a mistyped flag, a bad placeholder) is a problem with its file and line', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-doc-inventory-'));
    mkdirSync(path.join(dir, 'docs'));
    writeFileSync(path.join(dir, 'README.md'), md);
    writeFileSync(path.join(dir, 'docs', 'x.md'), '```ts\nconst m = 1; // placeholder\n```\n');
    const found = inventory(dir);
    expect(found.programs.map((b) => `${b.file}:${b.line}`)).toEqual(['README.md:4', 'README.md:15', 'docs/x.md:2']);
    expect(found.fragments.map((b) => `${b.file}:${b.line}`)).toEqual(['README.md:9']);
    expect(found.problems).toEqual([
      'README.md:21: unknown word(s) "fragmnet" in the info string; a TypeScript block is a program, or `tsx fragment`',
      'docs/x.md:2: a placeholder reads `// placeholder for <what>: <the line that fills it>`',
    ]);
  });

  it('names a program file after its doc and line', () => {
    expect(programFileName({ file: 'docs/gateway.md', line: 8, lang: 'ts', flags: [], code: '' })).toBe('docs-gateway-md-L8.ts');
    expect(programFileName({ file: 'README.md', line: 30, lang: 'ts', flags: [], code: '' })).toBe('readme-md-L30.ts');
  });
});

describe('placeholders', () => {
  const block = (code: string): DocBlock => ({ file: 'docs/x.md', line: 10, lang: 'ts', flags: [], code });

  it('a placeholder says for what and gives the line that fills it', () => {
    expect(placeholderProblems(block("const model = createScriptedModel([]); // placeholder for your model: openai('gpt-4.1-mini')\n"))).toEqual([]);
    expect(placeholderProblems(block('const a = 1;\nconst model = createScriptedModel([]); // placeholder\n'))).toEqual([
      'docs/x.md:11: a placeholder reads `// placeholder for <what>: <the line that fills it>`',
    ]);
    expect(placeholderProblems(block('const broker = {}; // placeholder for your broker\n'))).toHaveLength(1);
    expect(placeholderProblems(block('const broker = {}; // placeholder for your broker:\n'))).toHaveLength(1);
  });
});

describe('reports', () => {
  it('maps tsc diagnostics of a program file back to the markdown line', () => {
    const b: DocBlock = { file: 'docs/gateway.md', line: 9, lang: 'ts', flags: [], code: '' };
    const out = mapDiagnostics("docs-gateway-md-L9.ts(3,7): error TS2304: Cannot find name 'model'.\nother line", new Map([['docs-gateway-md-L9.ts', b]]));
    expect(out).toBe("docs/gateway.md:11:7: error TS2304: Cannot find name 'model'.\nother line");
  });

  it('runs each program in an empty directory and a throwaway home without model keys; a failure and a program that never exits are reported with file and line', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-doc-harness-'));
    const blocks: DocBlock[] = [
      { file: 'docs/a.md', line: 3, lang: 'ts', flags: [], code: "import { existsSync, readdirSync } from 'node:fs';\nconsole.log(JSON.stringify({ home: process.env.HOME === process.cwd().replace(/\\/project$/, ''), empty: readdirSync('.').length === 0, key: process.env.OPENAI_API_KEY ?? null, data: process.env.MINARA_DATA_DIR?.endsWith('/.minara') }), existsSync('x'));\n" },
      { file: 'docs/b.md', line: 7, lang: 'ts', flags: [], code: "throw new Error('boom');\n" },
      { file: 'docs/c.md', line: 12, lang: 'ts', flags: [], code: 'setInterval(() => {}, 1000);\n' },
    ];
    for (const b of blocks) writeFileSync(path.join(dir, programFileName(b)), b.code);
    const before = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-from-the-parent'; // never reaches a program
    const results = await runPrograms(blocks, { fileOf: (b) => path.join(dir, programFileName(b)), command: (f) => [process.execPath, f], timeoutMs: 3_000 }).finally(() => {
      if (before === undefined) delete process.env.OPENAI_API_KEY;
      else process.env.OPENAI_API_KEY = before;
    });
    expect(results[0]!.ok).toBe(true);
    expect(JSON.parse(results[0]!.stdout.split(' ')[0]!)).toEqual({ home: true, empty: true, key: null, data: true });
    expect(results[1]).toMatchObject({ ok: false, code: 1, timedOut: false });
    expect(describeFailure(results[1]!)).toMatch(/^docs\/b\.md:7: the program exited with code 1\n[\s\S]*boom/);
    expect(results[2]).toMatchObject({ ok: false, timedOut: true });
    expect(describeFailure(results[2]!)).toMatch(/^docs\/c\.md:12: the program did not exit by itself/);
    expect(programEnv('/h')).toMatchObject({ HOME: '/h', MINARA_DATA_DIR: '/h/.minara', GATEWAY_PORT: '0' });
  });
});
