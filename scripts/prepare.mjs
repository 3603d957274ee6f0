#!/usr/bin/env node
// `prepare`: build dist/ (tsup) and dist/web (vite) quietly, then put `minara` on the clone's node_modules/.bin.
//
// - Quiet: an install prints what npm prints. tsup runs with --silent and vite with --logLevel warn, so only
//   errors and warnings reach the terminal.
// - Skipped when dist/ is current: npm 11's `npx minara` inside a clone installs the clone (as a link) into its
//   npx cache and runs this script again; without the check it rebuilt everything (13.8 s idle). The stamp is the
//   newest modification time, count and total size of the build's inputs; any edit, checkout or pull changes it.
// - `node_modules/.bin/minara` links to dist/cli.js, so the docs' bare `minara …` works in a clone after the
//   README's `export PATH="$PWD/node_modules/.bin:$PATH"` (npm does not link a package's own bin into its own
//   node_modules). Only when node_modules belongs to this directory (not a shared or hoisted one).
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const INPUTS = ['src', 'cli', 'examples/web', 'package.json', 'tsup.config.ts', 'tsconfig.json'];
const STAMP = join(root, 'dist', '.build-stamp');

function walk(path, acc) {
  let st;
  try {
    st = statSync(path);
  } catch {
    return;
  }
  if (st.isDirectory()) {
    for (const name of readdirSync(path)) if (name !== 'node_modules') walk(join(path, name), acc);
    return;
  }
  acc.count += 1;
  acc.size += st.size;
  if (st.mtimeMs > acc.mtime) acc.mtime = st.mtimeMs;
}

function inputStamp() {
  const acc = { count: 0, size: 0, mtime: 0 };
  for (const input of INPUTS) walk(join(root, input), acc);
  return `${acc.count}:${acc.size}:${Math.floor(acc.mtime)}`;
}

function isCurrent(stamp) {
  if (process.env.MINARA_FORCE_BUILD === '1') return false;
  if (!existsSync(join(root, 'dist', 'cli.js')) || !existsSync(join(root, 'dist', 'web', 'index.html'))) return false;
  try {
    return readFileSync(STAMP, 'utf8').trim() === stamp;
  } catch {
    return false;
  }
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) {
    process.stderr.write(`prepare: \`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal})\n`);
    process.exit(r.status ?? 1);
  }
}

function linkBin() {
  const nm = join(root, 'node_modules');
  const binDir = join(nm, '.bin');
  if (!existsSync(binDir)) return;
  // A node_modules that is a symlink elsewhere (a worktree sharing one) is not this clone's to change.
  if (!realpathSync(nm).startsWith(root + sep)) return;
  const link = join(binDir, 'minara');
  const target = relative(binDir, join(root, 'dist', 'cli.js'));
  try {
    lstatSync(link);
    rmSync(link, { force: true });
  } catch {
    // absent
  }
  symlinkSync(target, link);
}

const stamp = inputStamp();
if (!isCurrent(stamp)) {
  run('tsup', ['--silent']);
  run('vite', ['build', '--config', 'examples/web/vite.config.ts', '--logLevel', 'warn']);
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, `${stamp}\n`);
}
linkBin();
