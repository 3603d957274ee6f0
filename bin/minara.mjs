#!/usr/bin/env node
// The `minara` command. A published package (built by `prepack`) runs the built CLI; a git clone that has
// not been built yet runs the TypeScript source through tsx (a devDependency, present in a clone), so
// `npm install && npx minara demo` works before `npm run build`.
import { existsSync } from 'node:fs';

const built = new URL('../dist/cli.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const source = new URL('../cli/index.ts', import.meta.url);
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    process.stderr.write('minara: this install has no built CLI (dist/cli.js); run `npm run build` first.\n');
    process.exit(1);
  }
  register({ tsconfig: new URL('../tsconfig.json', import.meta.url).pathname });
  await import(source.href);
}
