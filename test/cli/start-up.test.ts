/**
 * What the bin does before it loads anything (cli/start-up.ts): zod's translations other than English are not loaded,
 * and zod works as before (English messages, JSON Schema with descriptions).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lchownSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

function run(script: string, env: NodeJS.ProcessEnv = process.env): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', timeout: 30_000, env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const PROBE = `
const { z } = await import('zod');
const core = await import('zod/v4/core');
const schema = z.object({ symbol: z.string().describe('ticker') });
console.log(JSON.stringify({
  locales: Object.keys(z.locales), coreLocales: Object.keys(core.locales),
  message: z.string().safeParse(1).error.issues[0].message,
  jsonSchema: z.toJSONSchema(schema).properties.symbol,
}));`;

describe('the bin loads only English of zod\'s locales', () => {
  it('z.locales holds English alone after loadOnlyEnglishZodLocale(); messages and JSON Schema are unchanged', () => {
    const r = run(`const { loadOnlyEnglishZodLocale } = await import('./cli/start-up.ts'); loadOnlyEnglishZodLocale();${PROBE}`);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { locales: string[]; coreLocales: string[]; message: string; jsonSchema: unknown };
    expect(out.locales).toEqual(['en']);
    expect(out.coreLocales).toEqual(['en']);
    expect(out.message).toBe('Invalid input: expected string, received number');
    expect(out.jsonSchema).toEqual({ type: 'string', description: 'ticker' });
  });

  it('without it (a host importing the package) zod loads every locale', () => {
    const r = run(PROBE);
    const out = JSON.parse(r.stdout) as { locales: string[]; message: string };
    expect(out.locales.length).toBeGreaterThan(40);
    expect(out.message).toBe('Invalid input: expected string, received number');
  });
});

describe('the bin\'s compile cache', () => {
  const ENABLE = `const { enableCompileCache } = await import('./cli/start-up.ts'); console.log(JSON.stringify({ dir: enableCompileCache() ?? null }));`;
  const PRIVATE = (dir: string) => `const { isPrivateDirectory } = await import('./cli/start-up.ts'); console.log(JSON.stringify({ ok: isPrivateDirectory(${JSON.stringify(dir)}) }));`;
  const isRoot = process.getuid?.() === 0;
  // Another user's directory takes chown, that is root; the mode and fallback cases run for any user.
  if (!isRoot) console.warn('\n[SKIPPED] two compile-cache attacks need a directory owned by another user: run the tests as root (CI does)\n');
  const posix = process.platform !== 'win32';
  /** A clean environment for the child: no compile-cache variables of our own, the given ones set. */
  const envWith = (extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv => {
    const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
    for (const k of ['NODE_DISABLE_COMPILE_CACHE', 'NODE_COMPILE_CACHE']) if (!(k in extra)) delete env[k];
    return env;
  };
  const lastJson = (stdout: string): unknown => JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
  /** A private temporary directory (mode 0700, its real path) for one test. */
  const scratch = (): string => {
    const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'minara-compile-cache-')));
    chmodSync(dir, 0o700);
    return dir;
  };

  it('uses the user\'s own cache directory (made 0700), not Node\'s shared default', () => {
    const dir = scratch();
    try {
      const r = run(ENABLE, envWith({ XDG_CACHE_HOME: path.join(dir, 'cache-home'), TMPDIR: path.join(dir, 'tmp') }));
      const own = path.join(dir, 'cache-home', 'minara', 'node-compile-cache');
      expect(lastJson(r.stdout), r.stderr).toEqual({ dir: own });
      expect(existsSync(own)).toBe(true);
      if (posix) expect(statSync(own).mode & 0o777).toBe(0o700);
      expect(existsSync(path.join(dir, 'tmp', 'node-compile-cache'))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('still uses its own directory when NODE_COMPILE_CACHE names one that cannot be written', () => {
    const dir = scratch();
    try {
      const file = path.join(dir, 'a-file');
      writeFileSync(file, '');
      const r = run(ENABLE, envWith({ NODE_COMPILE_CACHE: path.join(file, 'cache'), XDG_CACHE_HOME: path.join(dir, 'cache-home') }));
      expect(lastJson(r.stdout), r.stderr).toEqual({ dir: path.join(dir, 'cache-home', 'minara', 'node-compile-cache') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The attack: another user makes $TMPDIR/node-compile-cache first, writable by all, with this user's subdirectory
  // in it; Node's default would write this user's code caches there, where the other user can replace them.
  it.skipIf(!isRoot)('never writes into a shared cache directory another user made first (as root: chown to nobody)', () => {
    const dir = scratch();
    try {
      const tmp = path.join(dir, 'tmp');
      mkdirSync(tmp);
      chmodSync(tmp, 0o1777);
      const shared = path.join(tmp, 'node-compile-cache');
      mkdirSync(shared);
      chmodSync(shared, 0o777);
      chownSync(shared, 65534, 65534);
      const r = run(`${ENABLE} await import('zod');`, envWith({ TMPDIR: tmp, XDG_CACHE_HOME: path.join(dir, 'cache-home') }));
      expect(lastJson(r.stdout.replace(/\n$/, '')), r.stderr).toEqual({ dir: path.join(dir, 'cache-home', 'minara', 'node-compile-cache') });
      expect(readdirSync(shared)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!posix)('refuses a cache directory others can write, or one under a directory others can write, and falls back to $TMPDIR/minara-<uid>', () => {
    const dir = scratch();
    try {
      const open = path.join(dir, 'open');
      mkdirSync(path.join(open, 'minara', 'node-compile-cache'), { recursive: true });
      chmodSync(open, 0o777); // not sticky: anyone could rename what it holds
      const tmp = path.join(dir, 'tmp');
      mkdirSync(tmp, { mode: 0o700 });
      const r = run(ENABLE, envWith({ XDG_CACHE_HOME: open, TMPDIR: tmp }));
      const fallback = path.join(tmp, `minara-${process.getuid?.()}`, 'node-compile-cache');
      expect(lastJson(r.stdout), r.stderr).toEqual({ dir: fallback });

      chmodSync(open, 0o755);
      chmodSync(path.join(open, 'minara', 'node-compile-cache'), 0o770); // the cache directory itself group-writable
      expect(lastJson(run(PRIVATE(path.join(open, 'minara', 'node-compile-cache'))).stdout)).toEqual({ ok: false });
      chmodSync(path.join(open, 'minara', 'node-compile-cache'), 0o755);
      expect(lastJson(run(PRIVATE(path.join(open, 'minara', 'node-compile-cache'))).stdout)).toEqual({ ok: true });
      // A file is not a cache directory.
      writeFileSync(path.join(dir, 'f'), '');
      expect(lastJson(run(PRIVATE(path.join(dir, 'f'))).stdout)).toEqual({ ok: false });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.skipIf(!isRoot)('refuses a directory owned by another user, and one reached through a link another user owns in a sticky directory (as root)', () => {
    const dir = scratch();
    try {
      const theirs = path.join(dir, 'theirs');
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 65534, 65534);
      expect(lastJson(run(PRIVATE(theirs)).stdout)).toEqual({ ok: false });
      // A sticky, root-owned parent is fine for what this user owns in it.
      const sticky = path.join(dir, 'sticky');
      mkdirSync(sticky);
      chmodSync(sticky, 0o1777);
      mkdirSync(path.join(sticky, 'mine'), { mode: 0o700 });
      expect(lastJson(run(PRIVATE(path.join(sticky, 'mine'))).stdout)).toEqual({ ok: true });
      // Another user's link in it, to their own directory: the real path is judged, and refused.
      symlinkSync(theirs, path.join(sticky, 'link'));
      lchownSync(path.join(sticky, 'link'), 65534, 65534);
      const r = run(ENABLE, envWith({ XDG_CACHE_HOME: path.join(sticky, 'link'), TMPDIR: path.join(dir, 'no-such-tmp') }));
      expect(lastJson(r.stdout), r.stderr).toEqual({ dir: path.join(dir, 'no-such-tmp', 'minara-0', 'node-compile-cache') });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stays off under NODE_DISABLE_COMPILE_CACHE=1', () => {
    const r = run(ENABLE, { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}'), r.stderr).toEqual({ dir: null });
  });
});
