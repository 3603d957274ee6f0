/**
 * run_code's memory limit holds for every bomb shape: each ends with the `memory` error (not `timeout`), under
 * 16 MiB and 64 MiB limits; the host's resident memory stays within the limit plus the stated margin while the bomb
 * runs, and comes back after the run (the worker of a run that grew its memory is ended). Deep recursion stays
 * `stack`. Before the WebAssembly memory got a maximum, the array bombs returned 400 and raised RSS to ~1.6 GB.
 */
import { createQuickJsSandbox } from '@minara/agent';
import { describe, expect, it } from 'vitest';

const MiB = 1024 * 1024;
/** What the docs state: RSS may rise by at most the limit + 16 MiB (the engine's initial memory) + this margin. */
const MARGIN = 32 * MiB;

const bombs: Record<string, string> = {
  'arrays of ints': 'const a = []; for (let i = 0; i < 400; i++) a.push(new Array(1e5).fill(i)); return a.length',
  'arrays of doubles': 'const a = []; for (;;) a.push(new Array(1e5).fill(1.5));',
  'strings doubling': 'let s = "x"; for (;;) { s += s; s.charCodeAt(s.length >> 1); }',
  'strings doubling (ropes)': 'let s = "x"; for (;;) s += s;',
  'typed arrays': 'const a = []; for (;;) a.push(new Float64Array(1e5));',
  'objects in a Map': 'const m = new Map(); for (let i = 0; ; i++) m.set(i, { i, s: "k" + i });',
};

/** Run `code` and sample the process's RSS every 2 ms while it runs. */
async function measured(limit: number, code: string) {
  const sandbox = createQuickJsSandbox({ timeoutMs: 30_000, memoryBytes: limit });
  await sandbox.warm();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 2);
  try {
    const result = await sandbox.run(code, null);
    peak = Math.max(peak, process.memoryUsage().rss);
    return { result, before, peak, sandbox };
  } finally {
    clearInterval(sampler);
  }
}

describe.each([16 * MiB, 64 * MiB])('memory limit %d bytes', (limit) => {
  it.each(Object.entries(bombs))('%s ends with `memory`, RSS within limit + 16 MiB + margin', async (_name, code) => {
    const { result, before, peak, sandbox } = await measured(limit, code);
    try {
      expect(result).toMatchObject({ ok: false, kind: 'memory' });
      expect(peak - before).toBeLessThanOrEqual(limit + 16 * MiB + MARGIN);
      // The sandbox still works after it.
      expect(await sandbox.run('return 6 * 7', null)).toMatchObject({ ok: true, value: 42 });
    } finally {
      await sandbox.close();
    }
  });

  it('deep recursion stays `stack`; a run that fits the limit succeeds', async () => {
    const sandbox = createQuickJsSandbox({ memoryBytes: limit });
    try {
      expect(await sandbox.run('function f(n) { return f(n + 1) + 1 } return f(0)', null)).toMatchObject({ ok: false, kind: 'stack' });
      // Half the limit in doubles (8 bytes each, 16 per element in the engine's fast arrays) fits.
      const n = Math.floor(limit / 2 / 16);
      expect(await sandbox.run(`const a = new Array(${n}).fill(1.5); return a.length`, null)).toMatchObject({ ok: true, value: n });
    } finally {
      await sandbox.close();
    }
  });
});

it('memory is returned after the run: RSS falls back once the bomb is over', async () => {
  const limit = 64 * MiB;
  const { result, before, sandbox } = await measured(limit, bombs['arrays of doubles']!);
  try {
    expect(result).toMatchObject({ ok: false, kind: 'memory' });
    // The next run starts a fresh worker; the bomb's memory went with the old one.
    expect(await sandbox.run('return 1', null)).toMatchObject({ ok: true, value: 1 });
    let after = process.memoryUsage().rss;
    for (let i = 0; i < 50 && after - before > MARGIN; i++) {
      await new Promise((r) => setTimeout(r, 20));
      after = process.memoryUsage().rss;
    }
    expect(after - before).toBeLessThanOrEqual(MARGIN);
  } finally {
    await sandbox.close();
  }
});
