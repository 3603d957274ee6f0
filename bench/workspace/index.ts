/**
 * Prompt-block build time for a full workspace at the caps (every root file at the 20,000-char per-file
 * cap, a journal for today and yesterday, 60,000-char total cap). Cold = a new workspace object (empty
 * mtime cache) per build; warm = one object reused, files unchanged (stat-only path).
 *
 * Run: npm run bench -- workspace, or npx tsx bench/workspace/index.ts [iterations]
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createWorkspace, WORKSPACE_FILE_NAMES } from '@minara/agent';

const iterations = Number(process.argv[2] ?? 500);
const now = () => new Date('2026-03-02T12:00:00.000Z');

function filler(name: string, chars: number): string {
  const line = `- ${name}: the operator prefers spot BTC, reviews risk weekly, and keeps leverage under 3x.\n`;
  return `# ${name}\n\n${line.repeat(Math.ceil(chars / line.length))}`.slice(0, chars);
}

function stats(samples: number[]): { p50: number; p95: number; mean: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  return { p50: at(0.5), p95: at(0.95), mean: s.reduce((a, b) => a + b, 0) / s.length };
}

const dir = await mkdtemp(join(tmpdir(), 'minara-bench-ws-'));
try {
  for (const name of WORKSPACE_FILE_NAMES) await writeFile(join(dir, name), filler(name, 20_000));
  await mkdir(join(dir, 'memory'));
  for (const f of ['2026-03-01.md', '2026-03-01-repl.md', '2026-03-02-repl.md', '2026-03-02-http.md']) {
    await writeFile(join(dir, 'memory', f), filler(f, 20_000));
  }
  const cold: number[] = [];
  const warm: number[] = [];
  for (let i = 0; i < 20; i++) await createWorkspace({ dir, now }).loadPromptBlocks({ source: 'user' }); // JIT warm-up
  for (let i = 0; i < iterations; i++) {
    const ws = createWorkspace({ dir, now });
    const t0 = performance.now();
    await ws.loadPromptBlocks({ source: 'user', sessionId: 'bench' });
    cold.push(performance.now() - t0);
  }
  const ws = createWorkspace({ dir, now });
  const first = await ws.loadPromptBlocks({ source: 'user', sessionId: 'bench' });
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await ws.loadPromptBlocks({ source: 'user', sessionId: 'bench' });
    warm.push(performance.now() - t0);
  }
  const rows = [
    ['cold (new cache)', stats(cold)],
    ['warm (mtime cache)', stats(warm)],
  ] as const;
  console.log(`workspace prompt blocks: ${iterations} builds each, ${first.totalChars} chars injected, ${first.files.length} files considered`);
  console.log('| case               | p50 ms | p95 ms | mean ms |');
  console.log('| ------------------ | ------ | ------ | ------- |');
  for (const [name, s] of rows) {
    console.log(`| ${name.padEnd(18)} | ${s.p50.toFixed(3).padStart(6)} | ${s.p95.toFixed(3).padStart(6)} | ${s.mean.toFixed(3).padStart(7)} |`);
  }
  const p95 = stats(warm).p95;
  console.log(`target: warm p95 <= 5 ms -> ${p95 <= 5 ? 'met' : 'MISSED'} (${p95.toFixed(3)} ms)`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
