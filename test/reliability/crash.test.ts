/**
 * Crash: a child process writing memories (with vectors), memory edits, grants, approvals executed by a
 * fund-moving tool, and workspace files is killed with SIGKILL at 200 seeded random points. After each kill:
 * the next process opens the same files without any repair step; `storage.verify()` finds the SQLite file,
 * the full-text index, the vectors and the edges consistent with the rows; every write the child
 * acknowledged is there; every workspace file is whole; no payment reached the "broker" twice or without
 * an `executing` audit row. `MINARA_CRASH_POINTS` changes the number of kills.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 as rng } from '../../src/util/prng';

const ROOT = join(import.meta.dirname, '..', '..');
const POINTS = Number(process.env.MINARA_CRASH_POINTS ?? 200);
const FILES = ['MEMORY.md', 'USER.md', 'AGENTS.md'] as const;
let worker = '';
let dir = '';

beforeAll(async () => {
  // One bundle of the worker (the SDK's sources included, packages external) starts in ~0.1 s instead of
  // ~0.5 s through tsx, which is what makes 200 kills affordable in `npm test`.
  const out = join(ROOT, 'node_modules', '.cache', 'minara-crash');
  mkdirSync(out, { recursive: true });
  worker = join(out, `worker-${process.pid}.mjs`);
  await build({
    entryPoints: [join(import.meta.dirname, 'fixtures', 'crash-worker.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    tsconfig: join(ROOT, 'tsconfig.json'),
    outfile: worker,
    logLevel: 'warning',
  });
  dir = mkdtempSync(join(tmpdir(), 'minara-crash-'));
});
afterAll(() => {
  rmSync(worker, { force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Line = { t: 'ready' | 'intent' | 'ack' | 'done'; op?: string; id?: number | string; content?: string; approvalId?: string; ref?: string; name?: string; version?: number; decision?: string };

/** Run one worker; kill it `killAfterMs` after it reports ready (never, when undefined). */
function runWorker(seed: number, killAfterMs: number | undefined, limit?: number): Promise<{ lines: Line[]; stderr: string; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const args = [worker, dir, String(seed), ...(limit === undefined ? [] : [String(limit)])];
    const child: ChildProcess = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stderr = '';
    let killed = false;
    let armed = false;
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (killAfterMs !== undefined && !armed && out.includes('"t":"ready"')) {
        armed = true;
        setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, killAfterMs);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('exit', () => {
      // Only whole lines count: a line cut by the kill was never acknowledged.
      const lines = out.split('\n').slice(0, -1).map((l) => JSON.parse(l) as Line);
      resolve({ lines, stderr, killed });
    });
  });
}


/** What must be true after each kill, carried from one run to the next. */
interface Expected {
  /** Memory id → contents it may hold (the acknowledged one plus later edits that may have landed). */
  memories: Map<number, Set<string>>;
  grants: Set<string>;
  requested: Set<string>;
  decided: Set<string>;
  executed: Map<string, string>;
  /** File → the lowest version it may hold. */
  files: Map<string, number>;
}

function apply(expected: Expected, lines: readonly Line[]): void {
  for (const line of lines) {
    if (line.t === 'intent' && line.op === 'mu') expected.memories.get(line.id as number)?.add(line.content as string);
    if (line.t !== 'ack') continue;
    if (line.op === 'mw' || line.op === 'mu') expected.memories.set(line.id as number, new Set([line.content as string]));
    else if (line.op === 'grant') expected.grants.add(line.id as string);
    else if (line.op === 'req') expected.requested.add(line.approvalId as string);
    else if (line.op === 'dec') expected.decided.add(line.approvalId as string);
    else if (line.op === 'exec' && line.decision !== 'blocked' && line.decision !== 'error') expected.executed.set(line.approvalId as string, line.ref as string);
    else if (line.op === 'file') expected.files.set(line.name as string, line.version as number);
  }
}

/** Check every promise against the files on disk; returns what was wrong (empty when all held). */
async function check(expected: Expected): Promise<string[]> {
  const wrong: string[] = [];
  // Opening is the "no repair" check: the same call any process makes, nothing else first.
  const storage = createSqliteStorage({ path: join(dir, 'agent.db'), logger: silentLogger });
  try {
    const report = await storage.verify();
    for (const p of report.problems) wrong.push(`verify ${p.check}: ${p.message}`);
    for (const [id, allowed] of expected.memories) {
      const row = storage.handle.db.prepare('SELECT content FROM memories WHERE id = ?').pluck().get(id) as string | undefined;
      if (row === undefined || !allowed.has(row)) wrong.push(`memory ${id}: ${row === undefined ? 'missing' : `holds ${JSON.stringify(row)}`}, expected one of ${JSON.stringify([...allowed])}`);
      else expected.memories.set(id, new Set([row]));
    }
    for (const id of expected.grants) if ((await storage.grants.get(id)) === undefined) wrong.push(`grant ${id} missing`);
    for (const id of expected.requested) {
      const approval = await storage.approvals.get(id);
      if (approval === undefined) wrong.push(`approval ${id} missing`);
      else if (expected.decided.has(id) && approval.status !== 'approved' && approval.status !== 'executed') wrong.push(`approval ${id} decided but ${approval.status}`);
      else if (expected.executed.has(id) && approval.status !== 'executed') wrong.push(`approval ${id} executed but ${approval.status}`);
    }
    const ledger = existsSync(join(dir, 'ledger.log')) ? readFileSync(join(dir, 'ledger.log'), 'utf8').split('\n').filter(Boolean) : [];
    const seen = new Set<string>();
    for (const ref of ledger) {
      if (seen.has(ref)) wrong.push(`payment ${ref} reached the broker twice`);
      seen.add(ref);
    }
    const audited = new Set(
      (await storage.audit.query({ toolName: 'pay', decision: 'executing', limit: 100_000 })).map((row) => (JSON.parse(row.argsJson) as { ref: string }).ref),
    );
    for (const ref of seen) if (!audited.has(ref)) wrong.push(`payment ${ref} reached the broker without an executing audit row`);
    for (const [id, ref] of expected.executed) if (!seen.has(ref)) wrong.push(`approval ${id} acknowledged as executed but ${ref} is not in the ledger`);
  } finally {
    await storage.close();
  }
  for (const name of FILES) {
    const path = join(dir, 'workspace', name);
    if (!existsSync(path)) continue;
    const text = readFileSync(path, 'utf8');
    const m = /^version=(\d+)\nbytes=(\d+)\n([\s\S]*)\nend=(\d+)\n$/.exec(text);
    if (m === null || m[1] !== m[4] || Number(m[2]) !== (m[3] as string).length) {
      wrong.push(`${name} is not whole (${text.length} bytes)`);
      continue;
    }
    const version = Number(m[1]);
    if (version < (expected.files.get(name) ?? 0)) wrong.push(`${name} holds version ${version}, acknowledged ${expected.files.get(name)}`);
    expected.files.set(name, version);
  }
  return wrong;
}

function tempFiles(root: string): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((name) => /(^|\/)\.[0-9a-f]{12}\.\d+\.tmp$/.test(name));
}

describe('crash: SIGKILL at seeded random points', () => {
  it(`keeps every acknowledged write, stays consistent and never pays twice across ${POINTS} kills`, async () => {
    const expected: Expected = { memories: new Map(), grants: new Set(), requested: new Set(), decided: new Set(), executed: new Map(), files: new Map() };
    const random = rng(20_261_124);
    const landed = new Map<string, number>();
    const problems: string[] = [];
    let acks = 0;
    for (let i = 0; i < POINTS; i++) {
      const killAfterMs = Math.floor(random() * 120);
      const run = await runWorker(1000 + i, killAfterMs);
      if (!run.lines.some((l) => l.t === 'ready')) throw new Error(`run ${i}: the worker did not start after the previous kill:\n${run.stderr}`);
      expect(run.killed).toBe(true);
      apply(expected, run.lines);
      acks += run.lines.filter((l) => l.t === 'ack').length;
      // Where the kill landed: the last operation announced and not acknowledged, else between operations.
      const last = [...run.lines].reverse().find((l) => l.t === 'intent' || l.t === 'ack');
      const where = last?.t === 'intent' ? (last.op as string) : 'between';
      landed.set(where, (landed.get(where) ?? 0) + 1);
      for (const w of await check(expected)) problems.push(`after kill ${i} (seed ${1000 + i}, +${killAfterMs} ms): ${w}`);
      if (problems.length > 20) break;
    }
    expect(problems).toEqual([]);

    // A last run to the end: it starts without repair, finishes what was approved, and leaves no temp file.
    const final = await runWorker(9999, undefined, 40);
    expect(final.lines.at(-1)?.t, final.stderr).toBe('done');
    apply(expected, final.lines);
    expect(await check(expected)).toEqual([]);
    expect(tempFiles(join(dir, 'workspace'))).toEqual([]);
    const stats = [...landed].map(([k, v]) => `${k} ${v}`).join(', ');
    console.log(`crash: ${POINTS} kills, ${acks} acknowledged writes, kills landed during: ${stats}; ${expected.memories.size} memories, ${expected.executed.size} executed payments`);
    expect(landed.size).toBeGreaterThan(3);
  }, 900_000);
});
