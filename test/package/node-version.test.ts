/**
 * The package refuses a Node.js older than 22.12 with a clear error as it loads, instead of crashing in the native
 * SQLite addon (a segmentation fault on Node 20). The spawned check runs when an old Node is on this machine (the
 * system Node of CI is 20) and dist/ is built.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { assertSupportedNode, MIN_NODE_VERSION, MinaraError, nodeVersionProblem } from '@minara/agent';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** A Node.js older than 22 on PATH's usual places, if any. */
function oldNode(): string | undefined {
  for (const bin of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    if (!existsSync(bin)) continue;
    try {
      const v = execFileSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
      if (nodeVersionProblem(v) !== undefined) return bin;
    } catch {
      // not runnable here
    }
  }
  return undefined;
}

describe('Node.js version', () => {
  it('names the version found and the one needed; 22.12 and later pass', () => {
    expect(MIN_NODE_VERSION).toBe('22.12.0');
    expect(nodeVersionProblem('20.20.2')).toBe('@minara/agent needs Node.js 22.12 or newer (this is 20.20.2): its SQLite addon would crash this one. Install a current Node.js (https://nodejs.org).');
    expect(nodeVersionProblem('22.11.0')).toMatch(/needs Node\.js 22\.12/);
    expect(nodeVersionProblem('18.0.0')).toBeDefined();
    for (const ok of ['22.12.0', '22.20.1', '23.0.0', '24.21.0', '30.1.0']) expect(nodeVersionProblem(ok)).toBeUndefined();
    expect(nodeVersionProblem()).toBeUndefined(); // this process
    expect(() => assertSupportedNode('20.20.2')).toThrow(MinaraError);
    try {
      assertSupportedNode('21.7.3');
    } catch (e) {
      expect(MinaraError.isInstance(e) && e.code).toBe('UNSUPPORTED_RUNTIME');
    }
    expect(() => assertSupportedNode()).not.toThrow();
  });

  const node20 = oldNode();
  const built = existsSync(`${root}/dist/index.js`);
  it.skipIf(!node20 || !built)('an old Node gets the error from every entry, and no crash from the SQLite engine', () => {
    const run = (code: string) => spawnSync(node20!, ['--input-type=module', '-e', code], { cwd: root, encoding: 'utf8' });
    for (const entry of ['@minara/agent', '@minara/agent/sqlite', '@minara/agent/testing', '@minara/agent/gateway', '@minara/agent/finance', '@minara/agent/backtest']) {
      const r = run(`import(${JSON.stringify(entry)}).then(() => console.log('loaded'), (e) => { console.log(e.code); process.exit(3); });`);
      expect({ entry, status: r.status, out: r.stdout.trim() }).toEqual({ entry, status: 3, out: 'UNSUPPORTED_RUNTIME' });
    }
    // Importing the engine as a whole throws before any database opens: a status 1 with the message, never a signal.
    const sqlite = run(`import { createSqliteStorage } from '@minara/agent/sqlite'; createSqliteStorage({ path: ':memory:' });`);
    expect(sqlite.signal).toBeNull();
    expect(sqlite.status).toBe(1);
    expect(sqlite.stderr).toMatch(/needs Node\.js 22\.12 or newer/);
  });
});
