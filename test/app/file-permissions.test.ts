/**
 * Other local users must not read the agent's data (issue 33, item 12): whatever the umask, the data
 * directory, the workspace and exports are created 0700 and their files 0600 (minara.db with its -wal and
 * -shm, workspace markdown, daily logs, exports); the doctor reports looser modes on an existing directory
 * and its `permissions` fix tightens them.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createApp, exportMemory, formatDoctorFixReport, formatDoctorReport, resolveApprovalKey, runDoctor, runDoctorFixes, silentLogger } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-perm-'));
  dirs.push(d);
  return d;
};
const mode = (p: string) => (statSync(p).mode & 0o777).toString(8).padStart(4, '0');
const originalUmask = process.umask();
afterEach(() => {
  process.umask(originalUmask);
});

/** Every entry under `root` (itself included), with its mode. */
function modes(root: string): Array<[string, string, 'dir' | 'file']> {
  const out: Array<[string, string, 'dir' | 'file']> = [[root, mode(root), 'dir']];
  for (const name of readdirSync(root)) {
    const p = path.join(root, name);
    if (statSync(p).isDirectory()) out.push(...modes(p));
    else out.push([p, mode(p), 'file']);
  }
  return out;
}

describe.skipIf(process.platform === 'win32')('private files whatever the umask', () => {
  it.each([['0000', 0o000], ['0022', 0o022], ['0002', 0o002]] as const)('umask %s: data dir, database (-wal, -shm), workspace and exports are 0700 / 0600', async (_label, umask) => {
    process.umask(umask);
    const dataDir = path.join(tmp(), 'home', '.minara');
    const app = await createApp({ envFileDir: false, env: { MINARA_DATA_DIR: dataDir }, logger: silentLogger, model: createScriptedModel([]), finance: false });
    try {
      await app.memory.write({ category: 'reference', content: 'Cold wallet holds SOL long term' });
      const ws = app.workspace!;
      const user = await ws.readFile('USER.md');
      await ws.writeFile('USER.md', `${user.content}\n- Prefers limit orders\n`, { expectedSha256: user.sha256 });
      await ws.appendDailyLog({ sessionId: 's1', surface: 'repl', summary: 'Talked about SOL.' });
      const exported = await exportMemory({ storage: app.storage, out: path.join(dataDir, 'exports', 'now'), sign: true, approvalKey: resolveApprovalKey({ dataDir }).key });

      expect(mode(dataDir)).toBe('0700');
      for (const f of ['minara.db', 'minara.db-wal', 'minara.db-shm']) {
        expect(existsSync(path.join(dataDir, f)), f).toBe(true);
        expect(mode(path.join(dataDir, f)), f).toBe('0600');
      }
      const loose = [...modes(ws.dir), ...modes(exported.dir), ...modes(path.join(dataDir, 'exports'))]
        .filter(([, m, kind]) => m !== (kind === 'dir' ? '0700' : '0600'));
      expect(loose).toEqual([]);
      expect(readdirSync(path.join(ws.dir, 'memory')).length).toBeGreaterThan(0);
      // Every other directory the app made under the data dir.
      expect(modes(dataDir).filter(([, m, kind]) => kind === 'dir' && m !== '0700')).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('the doctor reports looser modes on an existing directory; --fix (permissions) tightens them, and a second run changes nothing', async () => {
    const dataDir = path.join(tmp(), 'data');
    const app = await createApp({ envFileDir: false, env: { MINARA_DATA_DIR: dataDir }, logger: silentLogger, model: createScriptedModel([]), finance: false });
    try {
      await app.memory.write({ category: 'reference', content: 'Cold wallet holds SOL long term' });
      // An install made before this change: world-readable directory, database and workspace files.
      chmodSync(dataDir, 0o755);
      chmodSync(path.join(dataDir, 'minara.db'), 0o644);
      chmodSync(path.join(app.workspace!.dir, 'USER.md'), 0o644);
      chmodSync(app.workspace!.dir, 0o775);
      const privatePaths = [dataDir, app.workspace!.dir];

      const report = await runDoctor({ storage: app.storage, memory: app.memory, privatePaths });
      expect(report.permissions?.loose.map((l) => [path.relative(dataDir, l.path), l.mode, l.expected]).sort()).toEqual([
        ['', '0755', '0700'], ['minara.db', '0644', '0600'], ['workspace', '0775', '0700'], ['workspace/USER.md', '0644', '0600'],
      ]);
      expect(report.warnings.join('\n')).toMatch(/4 paths are readable or writable by other local users.*--fix --only permissions --apply/);
      expect(formatDoctorReport(report)).toContain(`Permissions: 4 too open`);
      const anonymous = await runDoctor({ storage: app.storage, privatePaths, anonymous: true });
      expect(JSON.stringify(anonymous.permissions)).not.toContain(dataDir);

      const dry = await runDoctorFixes({ storage: app.storage, only: ['permissions'], privatePaths });
      expect(dry.fixes).toEqual([{ name: 'permissions', candidates: 4, applied: 0 }]);
      expect(mode(dataDir)).toBe('0755');
      const done = await runDoctorFixes({ storage: app.storage, only: ['permissions'], privatePaths, apply: true });
      expect(done.fixes).toEqual([{ name: 'permissions', candidates: 4, applied: 4 }]);
      expect(formatDoctorFixReport(done)).toMatch(/permissions\s+4 of 4 changed/);
      expect([mode(dataDir), mode(path.join(dataDir, 'minara.db')), mode(app.workspace!.dir), mode(path.join(app.workspace!.dir, 'USER.md'))]).toEqual(['0700', '0600', '0700', '0600']);
      expect((await runDoctorFixes({ storage: app.storage, only: ['permissions'], privatePaths, apply: true })).fixes[0]).toMatchObject({ candidates: 0, applied: 0 });
      expect((await runDoctor({ storage: app.storage, privatePaths })).permissions?.loose).toEqual([]);
      // Without paths the fix says why it did nothing.
      expect((await runDoctorFixes({ storage: app.storage, only: ['permissions'] })).fixes[0]).toMatchObject({ skipped: expect.stringMatching(/privatePaths/) });
    } finally {
      await app.close();
    }
  });
});
