/**
 * The docs' programs as a user runs them: the packed tarball (what npm publishes) installed in a fresh project
 * with its peers, every TypeScript block of README.md and docs/*.md type-checked there by `tsc` (strict,
 * `nodenext`) and run by Node itself (type stripping, no loader), offline, each in an empty directory with a
 * throwaway HOME. test/docs/programs.test.ts runs the same programs against src/ in `npm test`; this one needs
 * dist/ (`npm run build` first). Run: npm run check:doc-programs
 *
 * The install is `npm install --offline` from the local npm cache: every package a user needs was fetched when
 * this repository was installed (the MCP SDK is linked from node_modules when the cache cannot resolve it; the
 * compiler is this repository's). With MINARA_DOC_PROGRAMS_ONLINE=1 npm may use the registry for what is missing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type DocBlock, describeFailure, inventory, mapDiagnostics, programFileName, runPrograms } from './doc-programs';

const root = fileURLToPath(new URL('..', import.meta.url));
const started = Date.now();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
const log = (line: string) => console.log(`check:doc-programs: ${line}`);

if (!existsSync(path.join(root, 'dist', 'index.js'))) {
  console.error('check:doc-programs: dist/ is missing; run npm run build first');
  process.exit(1);
}
const docs = inventory(root);
if (docs.problems.length > 0) {
  console.error(`check:doc-programs: blocks that break the convention (docs/testing.md, "Examples in the docs"):\n  ${docs.problems.join('\n  ')}`);
  process.exit(1);
}

/** The version of a package this repository installed, so the offline install finds it in the cache. */
const installed = (name: string): string => (JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
/** What a user installs next to the package for the docs' programs: the peers the docs use, and Node's types. */
const companions = ['ai', 'zod', '@electric-sql/pglite', '@types/node'].map((n) => `${n}@${installed(n)}`);
/**
 * Installed when the cache has them, else linked from this repository's node_modules (npm's cache may hold their
 * tarballs but not the registry documents an install resolves first): the MCP SDK (peer of `/mcp`).
 */
const linkable = ['@modelcontextprotocol/sdk'];

const work = mkdtempSync(path.join(tmpdir(), 'minara-doc-programs-'));
let failed = false;
try {
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const tarball = path.join(work, (JSON.parse(packed) as Array<{ filename: string }>)[0]!.filename);
  const project = path.join(work, 'project');
  mkdirSync(path.join(project, 'programs'), { recursive: true });
  writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'doc-programs', private: true, type: 'module' }));
  const online = process.env['MINARA_DOC_PROGRAMS_ONLINE'] === '1';
  const npmInstall = (specs: readonly string[], stdio: 'inherit' | 'ignore') =>
    execFileSync('npm', ['install', online ? '--prefer-offline' : '--offline', '--no-audit', '--no-fund', '--loglevel=error', ...specs], { cwd: project, stdio: ['ignore', stdio, stdio] });
  npmInstall([tarball, ...companions], 'inherit');
  log(`installed ${path.basename(tarball)} with ${companions.join(', ')} (${seconds()})`);
  for (const name of linkable) {
    try {
      npmInstall([`${name}@${installed(name)}`], 'ignore');
      log(`installed ${name}`);
    } catch {
      mkdirSync(path.dirname(path.join(project, 'node_modules', name)), { recursive: true });
      symlinkSync(path.join(root, 'node_modules', name), path.join(project, 'node_modules', name), 'dir');
      log(`linked ${name} from this repository (not in the npm cache)`);
    }
  }

  const byName = new Map<string, DocBlock>(docs.programs.map((b) => [programFileName(b), b]));
  for (const [name, block] of byName) writeFileSync(path.join(project, 'programs', name), block.code);
  // A strict consumer: nodenext resolution through the package's exports map, the flags that keep a .ts file
  // runnable by Node's type stripping (verbatimModuleSyntax, erasableSyntaxOnly).
  const compilerOptions = {
    strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true, verbatimModuleSyntax: true, erasableSyntaxOnly: true,
    module: 'nodenext', moduleResolution: 'nodenext', target: 'es2023', types: ['node'], noEmit: true, skipLibCheck: true, moduleDetection: 'force',
  };
  writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, include: ['programs'] }, null, 2));
  try {
    execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8', stdio: 'pipe' });
    log(`${byName.size} programs type-check against the packed package (nodenext, strict) (${seconds()})`);
  } catch (error) {
    failed = true;
    const e = error as { stdout?: string; stderr?: string };
    console.error(`check:doc-programs: type errors:\n${mapDiagnostics(`${e.stdout ?? ''}${e.stderr ?? ''}`, byName)}`);
  }

  const results = await runPrograms(docs.programs, {
    fileOf: (b) => path.join(project, 'programs', programFileName(b)),
    command: (file) => [process.execPath, '--disable-warning=ExperimentalWarning', file],
  });
  const failures = results.filter((r) => !r.ok);
  if (failures.length > 0) {
    failed = true;
    console.error(`check:doc-programs: ${failures.length} of ${results.length} programs failed:\n\n${failures.map(describeFailure).join('\n\n')}`);
  } else {
    log(`${results.length} programs ran offline to a clean exit with node ${process.versions.node} (${docs.fragments.length} fragments skipped) (${seconds()})`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
