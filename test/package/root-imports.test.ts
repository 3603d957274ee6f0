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
