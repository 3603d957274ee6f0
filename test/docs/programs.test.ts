/**
 * Every TypeScript block of README.md and docs/*.md is a complete program, type-checked strictly against the
 * package's public entries (mapped to src/ here) and run offline in a throwaway home; or it is marked
 * `ts fragment`. scripts/check-doc-programs.ts runs the same programs from the packed tarball (.ci/run).
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { type DocBlock, describeFailure, freshDir, inventory, mapDiagnostics, programFileName, runPrograms } from '../../scripts/doc-programs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = path.join(root, '.tmp', 'doc-programs');
const docs = inventory(root);
// DOC_PROGRAMS=docs/app.md,README.md checks only those files' programs (while writing docs).
const only = process.env['DOC_PROGRAMS']?.split(',').filter(Boolean);
const programs = only ? docs.programs.filter((b) => only.includes(b.file)) : docs.programs;
const byName = new Map<string, DocBlock>(programs.map((b) => [programFileName(b), b]));

/** The repository's compiler options (the strictest a consumer may have), the package mapped to src/. */
function writePrograms(): string {
  freshDir(dir);
  for (const [name, block] of byName) writeFileSync(path.join(dir, name), block.code);
  const tsconfig = path.join(dir, 'tsconfig.json');
  writeFileSync(tsconfig, JSON.stringify({ extends: '../../tsconfig.json', compilerOptions: { noEmit: true, moduleDetection: 'force' }, include: [], files: [...byName.keys()] }, null, 2));
  return tsconfig;
}

describe('the docs hold programs', () => {
  let tsconfig = '';
  beforeAll(() => {
    tsconfig = writePrograms();
  });

  it('finds the blocks, and every TypeScript block is a program or a `ts fragment`', () => {
    expect(docs.programs.length).toBeGreaterThan(20);
    expect(docs.problems).toEqual([]);
  });

  it('type-checks every program strictly against the public entries', { timeout: 300_000 }, () => {
    let diagnostics = '';
    try {
      execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], { cwd: root, encoding: 'utf8', stdio: 'pipe' });
    } catch (error) {
      const e = error as { stdout?: string; stderr?: string };
      diagnostics = mapDiagnostics(`${e.stdout ?? ''}${e.stderr ?? ''}`, byName);
    }
    expect(diagnostics).toBe('');
  });

  it('runs each program offline, in an empty directory and home, to a clean exit', { timeout: 900_000 }, async () => {
    const loader = pathToFileURL(path.join(root, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
    const results = await runPrograms(programs, {
      fileOf: (b) => path.join(dir, programFileName(b)),
      command: (file) => [process.execPath, '--import', loader, file],
      env: { TSX_TSCONFIG_PATH: tsconfig },
    });
    if (process.env['DOC_PROGRAMS_VERBOSE']) for (const r of results) console.log(`── ${r.block.file}:${r.block.line}\n${r.stdout}${r.stderr}`);
    expect(results.filter((r) => !r.ok).map(describeFailure)).toEqual([]);
  });
});
