/**
 * What importing the package costs a consumer: the root entry is pure JavaScript (the native SQLite addon is
 * loaded only by `/sqlite` or when `createApp` opens its default storage), and the bin refuses Node < 22 with
 * a message instead of crashing in the addon.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

/** Run an ESM snippet from source (tsx) that records every native addon `process.dlopen` loads. */
function addonsLoadedBy(snippet: string): string[] {
  const code = `
    const loaded = [];
    const dlopen = process.dlopen;
    process.dlopen = function (module, filename, ...rest) { loaded.push(filename); return dlopen.call(this, module, filename, ...rest); };
    ${snippet}
    console.log(JSON.stringify(loaded));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
  expect(r.stderr).not.toMatch(/Error/);
  return JSON.parse(r.stdout.trim().split('\n').pop() ?? '[]') as string[];
}

describe('package entry points', () => {
  it('importing the root (and using defineTool) loads no native addon', () => {
    const loaded = addonsLoadedBy(`
      const { defineTool, PermissionTier, createToolRegistry } = await import('${join(ROOT, 'src/index.ts')}');
      const { z } = await import('zod');
      createToolRegistry({ tools: [defineTool({ name: 't', toolSet: 'read', description: 'd', inputSchema: z.object({}), permissionTier: PermissionTier.READ_ONLY, execute: () => 1 })] });`);
    expect(loaded).toEqual([]);
  });

  it('importing the root loads none of the packages only some calls need (issue 32: cold start)', () => {
    // Each is loaded on first use: markdown-it and csv-parse (artifacts, spreadsheets), undici and html-to-text
    // (web tools), jose (JWT auth), yaml (SKILL.md, memory export), @opentelemetry/api (the first span), unhomoglyph (the first non-ASCII text classified), and the
    // optional peers. `ai` (and the gateway provider it brings) loads with the first model call. CommonJS packages are seen through require.cache, ES modules through a load hook.
    const code = `
      import { register, createRequire } from 'node:module';
      const seen = new Set();
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (url) => seen.add(url));
      register('data:text/javascript,' + encodeURIComponent('let p; export function initialize(d) { p = d.port; } export async function load(u, c, n) { p.postMessage(u); return n(u, c); }'), { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
      await import('${join(ROOT, 'src/index.ts')}');
      await new Promise((r) => setTimeout(r, 200));
      port1.close();
      const all = [...seen, ...Object.keys(createRequire(import.meta.url).cache)];
      const packages = new Set(all.map((u) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(u)?.[1]).filter(Boolean));
      console.log(JSON.stringify([...packages]));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const packages = JSON.parse(r.stdout.trim().split('\n').pop() ?? '[]') as string[];
    expect(packages, r.stderr).toContain('zod'); // the hook saw the root's own imports
    for (const lazy of ['ai', '@ai-sdk/gateway', '@vercel/oidc', 'markdown-it', 'csv-parse', 'undici', 'html-to-text', 'jose', 'yaml', '@opentelemetry/api', 'exceljs', 'vega', 'vega-lite', '@modelcontextprotocol/sdk', 'pg', '@electric-sql/pglite', 'playwright-core', 'unhomoglyph']) {
      expect(packages, lazy).not.toContain(lazy);
    }
  });

  it('importing the root loads none of the Node modules only some calls need (issue 41: start-up)', () => {
    // node:child_process (git for `skills add`), node:worker_threads (the code sandbox's first run) and node:dns/promises
    // (the first fetch's address check) load with their first use. A resolve hook sees every node: import of the
    // package's own files, even of a builtin tsx loaded already.
    const code = `
      import { register } from 'node:module';
      const seen = new Set();
      const { port1, port2 } = new MessageChannel();
      port1.on('message', (specifier) => seen.add(specifier));
      register('data:text/javascript,' + encodeURIComponent('let p; export function initialize(d) { p = d.port; } export async function resolve(s, c, n) { if (s.startsWith("node:") && c.parentURL?.includes("/src/")) p.postMessage(s); return n(s, c); }'), { parentURL: import.meta.url, data: { port: port2 }, transferList: [port2] });
      await import('${join(ROOT, 'src/index.ts')}');
      await new Promise((r) => setTimeout(r, 200));
      port1.close();
      console.log(JSON.stringify([...seen]));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    const builtins = JSON.parse(r.stdout.trim().split('\n').pop() ?? '[]') as string[];
    expect(builtins, r.stderr).toContain('node:crypto'); // the hook saw the root's own imports
    for (const lazy of ['node:child_process', 'node:worker_threads', 'node:dns/promises']) expect(builtins, lazy).not.toContain(lazy);
  });

  it('the SQLite engine loads the addon when asked for', () => {
    const loaded = addonsLoadedBy(`
      const { createSqliteStorage } = await import('${join(ROOT, 'src/storage/sqlite/index.ts')}');
      const s = createSqliteStorage({ path: ':memory:' });
      await s.close();`);
    expect(loaded.some((f) => f.includes('better-sqlite3'))).toBe(true);
  });

  it('the bin names the Node version it needs instead of crashing on an old one', () => {
    // Pretend to be Node 20 (the check reads process.versions.node before anything else loads).
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', `Object.defineProperty(process.versions, 'node', { value: '20.20.2' }); await import('${join(ROOT, 'cli/index.ts')}');`], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000, input: '',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('minara needs Node.js 22.12 or newer (this is 20.20.2)');
  });
});
