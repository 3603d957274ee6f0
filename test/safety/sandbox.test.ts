import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { resolveInSandbox, SandboxEscapeError, MinaraError } from '@minara/agent';
import { mulberry32 } from '../../src/util/prng';

let base: string;
let root: string;
let outside: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(tmpdir(), 'minara-sandbox-')));
  root = path.join(base, 'root');
  outside = path.join(base, 'outside');
  mkdirSync(path.join(root, 'docs', 'deep'), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(path.join(outside, 'secret.txt'), 'secret');
  writeFileSync(path.join(root, 'docs', 'a.md'), 'a');
  symlinkSync(outside, path.join(root, 'escape'));                       // dir link out
  symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link')); // file link out
  symlinkSync(path.join(root, 'docs'), path.join(root, 'docs-link'));    // link inside: fine
  symlinkSync(path.join(root, 'escape'), path.join(root, 'chain1'));     // chain → link → outside
  symlinkSync(path.join(root, 'chain1'), path.join(root, 'chain2'));
  symlinkSync(path.join(base, 'nowhere'), path.join(root, 'dangling'));
  symlinkSync('../outside', path.join(root, 'relative-out'));
  symlinkSync(root, path.join(root, 'docs', 'deep', 'loop'));          // back to root: inside
});

const escapes = (p: string) => {
  try {
    resolveInSandbox(p, { root });
  } catch (e) {
    expect(MinaraError.isInstance(e)).toBe(true);
    expect(e).toBeInstanceOf(SandboxEscapeError);
    expect((e as SandboxEscapeError).code).toBe('SANDBOX_ESCAPE');
    return true;
  }
  return false;
};

describe('resolveInSandbox', () => {
  it('resolves ordinary paths, including ones that do not exist yet', () => {
    expect(resolveInSandbox('docs/a.md', { root })).toBe(path.join(root, 'docs', 'a.md'));
    expect(resolveInSandbox('./docs//a.md', { root })).toBe(path.join(root, 'docs', 'a.md'));
    expect(resolveInSandbox('new/dir/file.txt', { root })).toBe(path.join(root, 'new', 'dir', 'file.txt'));
    expect(resolveInSandbox('docs-link/a.md', { root })).toBe(path.join(root, 'docs', 'a.md'));
    expect(resolveInSandbox('docs/deep/loop/docs/a.md', { root })).toBe(path.join(root, 'docs', 'a.md'));
  });

  it('refuses absolute paths, "..", NUL bytes and empty paths before touching the disk', () => {
    for (const p of ['/etc/passwd', '//server/share', 'C:/Windows', 'c:secret', '..', '../x', 'docs/../../x', 'docs/../a.md', 'a\0b', '', '   ', '.', './', '~/x', 'docs\\..\\..\\x']) {
      expect(escapes(p), p).toBe(true);
    }
  });

  it('refuses symlinks that lead out, directly, chained, relative or dangling', () => {
    for (const p of ['escape', 'escape/secret.txt', 'secret-link', 'chain1/secret.txt', 'chain2/secret.txt', 'dangling', 'dangling/x', 'relative-out/secret.txt', 'escape/new-file.txt']) {
      expect(escapes(p), p).toBe(true);
    }
  });

  it('treats encoded and look-alike separators as plain characters that stay inside', () => {
    for (const p of ['%2e%2e%2fsecret.txt', '..%2f..%2fetc', '%2e%2e/x', '．．／x', '\u2025/x', 'a\u2215b', '..\u2044x']) {
      const resolved = resolveInSandbox(p, { root });
      expect(resolved.startsWith(root + path.sep), p).toBe(true);
    }
  });

  it('fuzz: random mixes of hostile segments never resolve outside the root', () => {
    const pieces = ['..', '.', 'docs', 'escape', 'chain2', 'docs-link', 'x', '', '%2e%2e', '\u002e\u002e', 'secret-link', 'dangling', '\0', '/', '\\', 'docs/deep/loop', '~', 'ａ'];
    const rnd = mulberry32(42);
    for (let i = 0; i < 3000; i++) {
      const n = 1 + Math.floor(rnd() * 6);
      const p = Array.from({ length: n }, () => pieces[Math.floor(rnd() * pieces.length)]).join(rnd() < 0.8 ? '/' : '');
      let resolved: string | undefined;
      try {
        resolved = resolveInSandbox(p, { root });
      } catch (e) {
        expect(e).toBeInstanceOf(SandboxEscapeError);
        continue;
      }
      const real = (() => {
        // Resolve the deepest existing ancestor to be sure it is inside.
        let cur = resolved;
        for (;;) {
          try { return path.join(realpathSync(cur), path.relative(cur, resolved)); } catch { cur = path.dirname(cur); }
        }
      })();
      expect(real === root || real.startsWith(root + path.sep), `${JSON.stringify(p)} → ${real}`).toBe(true);
    }
  });

  it('refuses a root that does not exist unless asked to create it', () => {
    const missing = path.join(base, 'missing-root');
    expect(() => resolveInSandbox('a.txt', { root: missing })).toThrow(SandboxEscapeError);
    expect(resolveInSandbox('a.txt', { root: missing, create: true })).toBe(path.join(missing, 'a.txt'));
  });
});
