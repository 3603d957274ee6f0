import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MockLanguageModelV4 } from 'ai/test';

export const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures');
export const FIXED_NOW = new Date('2026-03-02T12:00:00.000Z');
export const fixedNow = () => FIXED_NOW;

const created: string[] = [];

/** A fresh temp directory, removed by `cleanupTempDirs`. */
export async function tempDir(prefix = 'minara-ws-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export async function cleanupTempDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((d) => rm(d, { recursive: true, force: true })));
}

/** A V4 mock model answering every call with `text` (after `delayMs`), recording prompts. */
export function textModel(text: string | (() => string), delayMs = 0): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: async () => {
      if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
      return {
        content: [{ type: 'text', text: typeof text === 'function' ? text() : text }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 5, text: 5, reasoning: 0 },
        },
        warnings: [],
      };
    },
  });
}

/** A mock model whose every call fails. */
export function failingModel(message: string): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doGenerate: async () => {
      throw new Error(message);
    },
  });
}

/** Run `fixtures/<name>.ts` in a child Node with tsx; resolves with its exit code and output. */
export function runFixture(name: string, args: readonly string[], env: Record<string, string> = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, `${name}.ts`), ...args], {
      cwd: join(FIXTURES, '..', '..', '..'),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Parse the last JSON line a fixture printed. */
export function lastJson<T>(stdout: string): T {
  const lines = stdout.trim().split('\n').filter((l) => l.startsWith('{'));
  const last = lines[lines.length - 1];
  if (last === undefined) throw new Error(`fixture printed no JSON: ${stdout}`);
  return JSON.parse(last) as T;
}
