// What a consumer's compiler sees: the emitted .d.ts of every entry, type-checked from a project that imports
// them by package name (from the packed tarball) under `nodenext` and `bundler` resolution, with `skipLibCheck`
// off and on and `strict` on; and no `any` anywhere in those declarations (found with the TypeScript AST, not a text search, so
// "any" in a comment does not count). Run after `npm run build`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
const entries = Object.keys(pkg.exports).filter((k) => k !== './package.json');
const dist = path.join(root, 'dist');
let failed = false;

// 1. No `any` in the declarations.
const declarations = readdirSync(dist).filter((f) => f.endsWith('.d.ts'));
if (declarations.length === 0) {
  console.error('check:consumer-types: dist has no .d.ts files; run npm run build first');
  process.exit(1);
}
for (const file of declarations) {
  const text = readFileSync(path.join(dist, file), 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const hits = [];
  const visit = (node) => {
    if (node.kind === ts.SyntaxKind.AnyKeyword) {
      const { line } = source.getLineAndCharacterOfPosition(node.getStart(source));
      hits.push(`${file}:${line + 1}: ${text.split('\n')[line].trim().slice(0, 160)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (hits.length > 0) {
    failed = true;
    console.error(`check:consumer-types: \`any\` in ${file}:\n  ${hits.join('\n  ')}`);
  }
}

// 2. A consumer project that installs the packed tarball (what npm publishes) and imports every entry, under
// both resolutions, with skipLibCheck off and on. Dependencies resolve from this repository's node_modules
// (linked one by one), so no network is needed.
const dir = mkdtempSync(path.join(tmpdir(), 'minara-consumer-'));
try {
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const tarball = path.join(dir, JSON.parse(packed)[0].filename);
  const modules = path.join(dir, 'node_modules');
  mkdirSync(path.join(modules, '@minara', 'agent'), { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', path.join(modules, '@minara', 'agent'), '--strip-components=1']);
  // Everything installed here except what only this repository's development needs: a consumer gets our
  // dependencies and peers, not our devDependencies (a type a declaration needs from one of those fails here).
  // (`@types/node` and TypeScript are the consumer's own.)
  const consumerOwn = new Set(['@types/node', 'typescript']);
  const devOnly = new Set(Object.keys(pkg.devDependencies ?? {}).filter((d) => !consumerOwn.has(d) && !(d in (pkg.dependencies ?? {})) && !(d in (pkg.peerDependencies ?? {}))));
  const link = (name) => {
    if (devOnly.has(name)) return;
    mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
    symlinkSync(path.join(root, 'node_modules', name), path.join(modules, name), 'dir');
  };
  for (const entry of readdirSync(path.join(root, 'node_modules'))) {
    if (entry.startsWith('.') || entry === '@minara') continue;
    if (entry.startsWith('@')) for (const sub of readdirSync(path.join(root, 'node_modules', entry))) link(`${entry}/${sub}`);
    else link(entry);
  }
  const specifier = (e) => (e === '.' ? '@minara/agent' : `@minara/agent/${e.slice(2)}`);
  const imports = entries.map((e, i) => `import * as m${i} from '${specifier(e)}';`).join('\n');
  const uses = entries.map((_, i) => `m${i}`).join(', ');
  writeFileSync(
    path.join(dir, 'index.ts'),
    `${imports}
import { createEventBus, createToolRegistry, defineTool, type MinaraBus, PermissionTier } from '@minara/agent';
import type { SqliteHandle } from '@minara/agent/sqlite';
import { z } from 'zod';

export const all = [${uses}] as const;
const tool = defineTool({
  name: 'get_quote', toolSet: 'read', description: 'A quote', permissionTier: PermissionTier.READ_ONLY,
  inputSchema: z.object({ symbol: z.string() }),
  execute: ({ symbol }) => ({ symbol: symbol.toUpperCase() }),
});
export const registry = createToolRegistry({ tools: [tool] });
// Types that once degraded to any for consumers: each line fails to compile if its type is any.
type NotAny<T> = 0 extends 1 & T ? never : true;
export const busTyped: NotAny<MinaraBus> = true;
export const busInstance: NotAny<ReturnType<typeof createEventBus>> = true;
export const sqliteDb: NotAny<SqliteHandle['db']> = true;
`,
  );
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  const base = { strict: true, noEmit: true, target: 'es2022', types: ['node'], noUncheckedIndexedAccess: true };
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const resolution of ['nodenext', 'bundler']) {
    for (const skipLibCheck of [false, true]) {
      const name = `${resolution}-${skipLibCheck ? 'skip' : 'full'}`;
      const compilerOptions = { ...base, skipLibCheck, ...(resolution === 'nodenext' ? { module: 'nodenext', moduleResolution: 'nodenext' } : { module: 'esnext', moduleResolution: 'bundler' }) };
      writeFileSync(path.join(dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files: ['index.ts'] }));
      try {
        execFileSync(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
        console.log(`check:consumer-types: the packed package type-checks under ${resolution}, skipLibCheck ${skipLibCheck ? 'on' : 'off'} (${entries.length} entries)`);
      } catch (error) {
        failed = true;
        console.error(`check:consumer-types: ${resolution} with skipLibCheck ${skipLibCheck ? 'on' : 'off'} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (!failed) console.log(`check:consumer-types: no \`any\` in ${declarations.length} declaration files`);
process.exit(failed ? 1 : 0);
