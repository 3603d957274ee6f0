/**
 * What the bin does before it loads anything (cli/start-up.ts): zod's translations other than English are not loaded,
 * and zod works as before (English messages, JSON Schema with descriptions).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

  it('uses the user\'s own cache directory when the shared one cannot be written', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-compile-cache-'));
    try {
      const file = path.join(dir, 'a-file');
      writeFileSync(file, '');
      const env: NodeJS.ProcessEnv = { ...process.env, NODE_COMPILE_CACHE: path.join(file, 'cache'), XDG_CACHE_HOME: path.join(dir, 'cache-home') };
      delete env['NODE_DISABLE_COMPILE_CACHE'];
      const r = run(ENABLE, env);
      const own = path.join(dir, 'cache-home', 'minara', 'node-compile-cache');
      expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}'), r.stderr).toEqual({ dir: own });
      expect(existsSync(own)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stays off under NODE_DISABLE_COMPILE_CACHE=1', () => {
    const r = run(ENABLE, { ...process.env, NODE_DISABLE_COMPILE_CACHE: '1' });
    expect(JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}'), r.stderr).toEqual({ dir: null });
  });
});
