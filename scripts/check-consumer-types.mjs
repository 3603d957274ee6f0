// What a consumer's compiler sees: the emitted .d.ts of every entry, type-checked from a project that imports
// them by package name under `nodenext` and under `bundler` resolution, with `skipLibCheck` off and `strict`
// on; and no `any` anywhere in those declarations (found with the TypeScript AST, not a text search, so
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

// 2. A consumer project that imports every entry, under both resolutions.
const dir = mkdtempSync(path.join(tmpdir(), 'minara-consumer-'));
try {
  mkdirSync(path.join(dir, 'node_modules', '@minara'), { recursive: true });
  symlinkSync(root, path.join(dir, 'node_modules', '@minara', 'agent'), 'dir');
  const specifier = (e) => (e === '.' ? '@minara/agent' : `@minara/agent/${e.slice(2)}`);
  const imports = entries.map((e, i) => `import * as m${i} from '${specifier(e)}';`).join('\n');
  const uses = entries.map((_, i) => `m${i}`).join(', ');
  writeFileSync(
    path.join(dir, 'index.ts'),
    `${imports}
import { createToolRegistry, defineTool, PermissionTier } from '@minara/agent';
import { z } from 'zod';

export const all = [${uses}] as const;
const tool = defineTool({
  name: 'get_quote', toolSet: 'read', description: 'A quote', permissionTier: PermissionTier.READ_ONLY,
  inputSchema: z.object({ symbol: z.string() }),
  execute: ({ symbol }) => ({ symbol: symbol.toUpperCase() }),
});
export const registry = createToolRegistry({ tools: [tool] });
`,
  );
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // zod and ai resolve from the package's own node_modules (through the symlink's real path).
  symlinkSync(path.join(root, 'node_modules', 'zod'), path.join(dir, 'node_modules', 'zod'), 'dir');
  const base = { strict: true, skipLibCheck: false, noEmit: true, target: 'es2022', types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')], noUncheckedIndexedAccess: true };
  const configs = {
    nodenext: { ...base, module: 'nodenext', moduleResolution: 'nodenext' },
    bundler: { ...base, module: 'esnext', moduleResolution: 'bundler' },
  };
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const [name, compilerOptions] of Object.entries(configs)) {
    writeFileSync(path.join(dir, `tsconfig.${name}.json`), JSON.stringify({ compilerOptions, files: ['index.ts'] }));
    try {
      execFileSync(process.execPath, [tsc, '-p', `tsconfig.${name}.json`], { cwd: dir, encoding: 'utf8', stdio: 'pipe' });
      console.log(`check:consumer-types: ${entries.length} entries type-check under ${name} (skipLibCheck off)`);
    } catch (error) {
      failed = true;
      console.error(`check:consumer-types: ${name} failed:\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (!failed) console.log(`check:consumer-types: no \`any\` in ${declarations.length} declaration files`);
process.exit(failed ? 1 : 0);
