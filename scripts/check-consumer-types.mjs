// What a consumer's compiler sees: the emitted .d.ts of every entry, type-checked from projects that import
// them by package name (from the packed tarball) under `nodenext` and `bundler` resolution, with `skipLibCheck`
// off and on and `strict` on (one that installs only @minara/agent, ai and zod, one with the optional peers too); and no `any` anywhere in those declarations (found with the TypeScript AST, not a text search, so
// "any" in a comment does not count). Run after `npm run build`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
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

// 2. Two consumer projects that install the packed tarball (what npm publishes) and import the entries by package
// name, under `nodenext` and `bundler` resolution, with skipLibCheck off and on:
//  - "minimal": installs only `@minara/agent`, `ai` and `zod` (what `npm i @minara/agent ai zod` installs: our
//    dependencies and the non-optional peers, transitively), so none of the optional peers (the MCP SDK, pg,
//    PGlite, playwright-core) is there; imports the root, /sqlite, /gateway, /testing, /finance and /backtest. A declaration
//    that needs an optional peer's types fails here.
//  - "with-peers": also installs the optional peers and imports every entry, /mcp and /postgres included.
// Packages are linked from this repository's node_modules (the tree npm would install, resolved package by package
// from each one's `dependencies`, `optionalDependencies` and non-optional `peerDependencies`), so no network is needed.
const modulesRoot = realpathSync(path.join(root, 'node_modules'));
const manifest = (dir) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
/** Where Node would find `name` from a package in `fromDir`: its own nested node_modules first, then up to the root. */
const resolveFrom = (name, fromDir) => {
  for (let dir = fromDir; dir.startsWith(modulesRoot) && dir !== modulesRoot; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return realpathSync(candidate);
  }
  const top = path.join(modulesRoot, name);
  return existsSync(path.join(top, 'package.json')) ? top : undefined;
};
/** The top-level packages a consumer gets when it installs `wanted` (names). */
const installedTree = (wanted) => {
  const top = new Set();
  const seen = new Set();
  const visit = (names, fromDir) => {
    for (const name of names) {
      const dir = resolveFrom(name, fromDir);
      if (dir === undefined || seen.has(dir)) continue;
      seen.add(dir);
      if (dir === path.join(modulesRoot, name)) top.add(name);
      const m = manifest(dir);
      const optional = new Set(Object.entries(m.peerDependenciesMeta ?? {}).filter(([, v]) => v?.optional === true).map(([k]) => k));
      visit([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.optionalDependencies ?? {}), ...Object.keys(m.peerDependencies ?? {}).filter((p) => !optional.has(p))], dir);
    }
  };
  visit(wanted, modulesRoot);
  return top;
};
const optionalPeers = Object.entries(pkg.peerDependenciesMeta ?? {}).filter(([, v]) => v?.optional === true).map(([k]) => k);
const requiredPeers = Object.keys(pkg.peerDependencies ?? {}).filter((p) => !optionalPeers.includes(p));
const ourDeps = Object.keys(pkg.dependencies ?? {});
const specifier = (e) => (e === '.' ? '@minara/agent' : `@minara/agent/${e.slice(2)}`);
const consumers = [
  { name: 'minimal', peers: requiredPeers, entries: ['.', './sqlite', './gateway', './testing', './finance', './backtest'], absent: optionalPeers },
  { name: 'with-peers', peers: [...requiredPeers, ...optionalPeers], entries, absent: [] },
];
const work = mkdtempSync(path.join(tmpdir(), 'minara-consumer-'));
try {
  const packed = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const tarball = path.join(work, JSON.parse(packed)[0].filename);
  for (const consumer of consumers) {
    const dir = path.join(work, consumer.name);
    const modules = path.join(dir, 'node_modules');
    mkdirSync(path.join(modules, '@minara', 'agent'), { recursive: true });
    execFileSync('tar', ['-xzf', tarball, '-C', path.join(modules, '@minara', 'agent'), '--strip-components=1']);
    // `@types/node` is the consumer's own (TypeScript runs from this repository).
    const tree = installedTree([...ourDeps, ...consumer.peers, '@types/node']);
    for (const name of tree) {
      mkdirSync(path.dirname(path.join(modules, name)), { recursive: true });
      symlinkSync(path.join(modulesRoot, name), path.join(modules, name), 'dir');
    }
    const present = consumer.absent.filter((name) => existsSync(path.join(modules, name)));
    if (present.length > 0) {
      failed = true;
      console.error(`check:consumer-types: the ${consumer.name} consumer got optional peers it did not ask for: ${present.join(', ')}`);
    }
    const imports = consumer.entries.map((e, i) => `import * as m${i} from '${specifier(e)}';`).join('\n');
    const uses = consumer.entries.map((_, i) => `m${i}`).join(', ');
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
    writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `consumer-${consumer.name}`, private: true, type: 'module' }));
    const base = { strict: true, noEmit: true, target: 'es2022', types: ['node'], noUncheckedIndexedAccess: true };
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const what = `${consumer.name} consumer (@minara/agent with ${consumer.peers.join(', ')}; ${tree.size} packages)`;
    for (const resolution of ['nodenext', 'bundler']) {
      for (const skipLibCheck of [false, true]) {
        const name = `${resolution}-${skipLibCheck ? 'skip' : 'full'}`;
        const compilerOptions = { ...base, skipLibCheck, ...(resolution === 'nodenext' ? { module: 'nodenext', moduleResolution: 'nodenext' } : { module: 'esnext', moduleResolution: 'bundler' }) };
        writeFileSync(path.join(dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files: ['index.ts'] }));
        try {
          execFileSync(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
          console.log(`check:consumer-types: ${what} type-checks under ${resolution}, skipLibCheck ${skipLibCheck ? 'on' : 'off'}: ${consumer.entries.map(specifier).join(', ')}`);
        } catch (error) {
          failed = true;
          console.error(`check:consumer-types: ${what}, ${resolution} with skipLibCheck ${skipLibCheck ? 'on' : 'off'} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
        }
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
if (!failed) console.log(`check:consumer-types: no \`any\` in ${declarations.length} declaration files`);
process.exit(failed ? 1 : 0);
