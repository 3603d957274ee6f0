import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { silentLogger } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { auditEntry } from './contract';
import { recordingLogger, tempDir } from './helpers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** A child running a TypeScript fixture through tsx, with its stdout split into protocol lines. */
interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  /** Resolves when the child prints a line starting with `prefix`; returns the rest of the line. */
  line(prefix: string): Promise<string>;
  /** Resolves with the exit code and everything written to stderr. */
  readonly exit: Promise<{ code: number | null; stderr: string }>;
  go(): void;
}

function spawnFixture(script: string, args: readonly string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', join(FIXTURES, script), ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: Array<{ prefix: string; resolve: (rest: string) => void }> = [];
  let buffered = '';
  let stderr = '';
  const flush = () => {
    for (const waiter of [...waiters]) {
      const hit = lines.find((l) => l.startsWith(waiter.prefix));
      if (hit !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(hit.slice(waiter.prefix.length).trim());
      }
    }
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop() ?? '';
    lines.push(...parts);
    flush();
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exit = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('close', (code) => resolve({ code, stderr })));
  return {
    process: child,
    exit,
    go: () => child.stdin.end('go\n'),
    line: (prefix) =>
      Promise.race([
        new Promise<string>((resolve) => {
          waiters.push({ prefix, resolve });
          flush();
        }),
        exit.then(({ code, stderr: err }) => {
          throw new Error(`${script} exited (${String(code)}) before printing "${prefix}": ${err}`);
        }),
      ]),
  };
}

interface WorkerResult {
  workerId: string;
  instanceId: string;
  keyHex: string;
  created: string[];
  approved: string[];
  executed: string[];
  retries: number;
}

const cleanups: Array<() => void> = [];
const children: Child[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.process.exitCode === null) c.process.kill();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('SQLite shared by two OS processes', () => {
  it('opens one fresh file from two processes at once and keeps every write', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const path = join(dir, 'shared.db');
    const AUDIT = 600; // 1,200 rows in all: past one batch of the trace and tool lookups (AUDIT_LOOKUP_BATCH = 1024)
    const MESSAGES = 150;
    const APPROVALS = 20;
    const workers = ['a', 'b'].map((id) => spawnFixture('concurrent-worker.ts', [path, id, String(AUDIT), String(MESSAGES), String(APPROVALS)]));
    children.push(...workers);

    await Promise.all(workers.map((w) => w.line('ready')));
    for (const w of workers) w.go(); // start barrier: both open the fresh file at the same moment
    const results = (await Promise.all(workers.map((w) => w.line('result')))).map((json) => JSON.parse(json) as WorkerResult);
    const exits = await Promise.all(workers.map((w) => w.exit));

    for (const { code, stderr } of exits) {
      expect(stderr).not.toMatch(/SQLITE_BUSY|STORAGE_BUSY|database is locked/);
      expect(code, stderr).toBe(0);
    }

    // Both processes ended up with the same instance key (created once, atomically).
    expect(results[0]!.keyHex).toHaveLength(64);
    expect(results[1]!.keyHex).toBe(results[0]!.keyHex);
    expect(results[1]!.instanceId).toBe(results[0]!.instanceId);

    const db = new Database(path, { readonly: true });
    try {
      // Migrations were applied once.
      expect(db.prepare("SELECT COUNT(*) FROM schema_migrations WHERE domain = 'core'").pluck().get()).toBe(2);
      expect(db.prepare('SELECT COUNT(*) FROM instance_meta').pluck().get()).toBe(1);

      // Every audit row of both processes is there.
      expect(db.prepare('SELECT COUNT(*) FROM audit_log').pluck().get()).toBe(2 * AUDIT);
      for (const id of ['a', 'b']) expect(db.prepare('SELECT COUNT(*) FROM audit_log WHERE tool_name = ?').pluck().get(`worker_${id}`)).toBe(AUDIT);

      // The two processes really interleaved (otherwise this test would prove little).
      const writers = db.prepare('SELECT tool_name FROM audit_log ORDER BY id').pluck().all() as string[];
      const switches = writers.filter((w, i) => i > 0 && w !== writers[i - 1]).length;
      expect(switches, 'audit writers alternated').toBeGreaterThanOrEqual(2);
      // …and the hash chain never forked: one contiguous chain, each row linked to the one before (BEGIN IMMEDIATE).
      expect(db.prepare('SELECT seq FROM audit_log ORDER BY id').pluck().all()).toEqual(Array.from({ length: 2 * AUDIT }, (_, i) => i + 1));

      // Message seqs are exactly 1..N; each batch landed contiguously; each worker's messages kept their order.
      const messages = db.prepare("SELECT seq, json FROM messages WHERE session_id = 'shared' ORDER BY seq").all() as Array<{ seq: number; json: string }>;
      expect(messages.map((m) => m.seq)).toEqual(Array.from({ length: 2 * MESSAGES }, (_, i) => i + 1));
      const parsed = messages.map((m) => JSON.parse(m.json) as { worker: string; n: number });
      for (let i = 0; i < parsed.length; i += 3) {
        expect(new Set(parsed.slice(i, i + 3).map((p) => p.worker)).size).toBe(1);
      }
      for (const id of ['a', 'b']) {
        expect(parsed.filter((p) => p.worker === id).map((p) => p.n)).toEqual(Array.from({ length: MESSAGES }, (_, i) => i));
      }

      // Each approval was created once, approved once and executed once, across both processes.
      const all = (key: 'created' | 'approved' | 'executed') => results.flatMap((r) => r[key]).sort();
      const ids = Array.from({ length: APPROVALS }, (_, i) => `apr_${i}`).sort();
      expect(all('created')).toEqual(ids);
      expect(all('approved')).toEqual(ids);
      expect(all('executed')).toEqual(ids);
      expect(db.prepare("SELECT COUNT(*) FROM approvals WHERE status = 'executed'").pluck().get()).toBe(APPROVALS);
    } finally {
      db.close();
    }
    const verifier = createSqliteStorage({ path, logger: silentLogger });
    try {
      expect(await verifier.audit.verify()).toMatchObject({ ok: true, checked: 2 * AUDIT, head: { seq: 2 * AUDIT } });
      // The lookups by tool and trace, indexed in a batch by whichever process crossed it, find every row.
      for (const id of ['a', 'b']) {
        expect(await verifier.audit.count({ toolName: `worker_${id}` })).toBe(AUDIT);
        for (const t of [0, Math.floor(AUDIT / 6), AUDIT / 3 - 1]) {
          const rows = await verifier.audit.query({ traceId: `trace_${id}_${t}`, order: 'oldest' });
          expect(rows.map((r) => JSON.parse(r.argsJson) as { i: number }).map((a) => a.i)).toEqual([3 * t, 3 * t + 1, 3 * t + 2]);
        }
      }
    } finally {
      await verifier.close();
    }
    const raw = new Database(path, { readonly: true });
    try {
      expect(raw.prepare('SELECT through FROM audit_lookup_state').pluck().get()).toBeGreaterThanOrEqual(1024);
    } finally {
      raw.close();
    }
  });

  it('retries a write while another process holds the lock longer than busy_timeout, then succeeds', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const path = join(dir, 'held.db');
    const logger = recordingLogger();
    const storage = createSqliteStorage({ path, logger, busyTimeoutMs: 150 });
    try {
      const holder = spawnFixture('hold-write-lock.ts', [path, '300']);
      children.push(holder);
      await holder.line('ready');
      holder.go();
      await holder.line('locked');
      const started = Date.now();
      await storage.audit.append(auditEntry()); // busy_timeout (150 ms) < hold (300 ms) < deadline (600 ms)
      const waited = Date.now() - started;
      expect(await storage.audit.count()).toBe(1);
      expect(await storage.meta.get('held')).toBe('yes'); // the holder committed first
      expect(logger.lines.filter((l) => l.level === 'debug' && l.message.includes('retrying')).length).toBeGreaterThanOrEqual(1);
      expect(waited).toBeGreaterThanOrEqual(100);
      expect((await holder.exit).code).toBe(0);
    } finally {
      await storage.close();
    }
  });

  it('a fresh open does not take the write lock once the schema is current', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const path = join(dir, 'ro-open.db');
    await createSqliteStorage({ path, logger: silentLogger }).close();
    const holder = spawnFixture('hold-write-lock.ts', [path, '1000']);
    children.push(holder);
    await holder.line('ready');
    holder.go();
    await holder.line('locked');
    const started = Date.now();
    const storage = createSqliteStorage({ path, logger: silentLogger, busyTimeoutMs: 50 });
    expect(Date.now() - started).toBeLessThan(800); // had it needed the write lock, it would have failed with STORAGE_BUSY
    expect(await storage.audit.count()).toBe(0); // WAL readers are not blocked by the writer
    await storage.close();
    expect((await holder.exit).code).toBe(0);
  });
});

describe('a USD-per-day limit shared by two OS processes on one SQLite file', () => {
  it('turns racing from both processes take the spend past the limit by at most one turn', async () => {
    const { dir, cleanup } = tempDir();
    cleanups.push(cleanup);
    const path = join(dir, 'quota.db');
    const LIMIT = 95;
    const TURN = 10;
    // The file exists and is migrated before the race.
    await createSqliteStorage({ path, logger: silentLogger }).close();
    const workers = ['a', 'b'].map((id) => spawnFixture('usage-race-worker.ts', [path, id, '60', String(LIMIT), String(TURN)]));
    children.push(...workers);
    await Promise.all(workers.map((w) => w.line('ready')));
    for (const w of workers) w.go();
    const results = (await Promise.all(workers.map((w) => w.line('result')))).map((json) => JSON.parse(json) as { admitted: number; refused: number });
    for (const { code, stderr } of await Promise.all(workers.map((w) => w.exit))) expect(code, stderr).toBe(0);

    const db = new Database(path, { readonly: true });
    try {
      const spent = db.prepare("SELECT COALESCE(SUM(cost_usd), 0) FROM usage_ledger WHERE user_id = 'alice'").pluck().get() as number;
      const admitted = results.reduce((n, r) => n + r.admitted, 0);
      expect(spent).toBe(admitted * TURN);
      expect(spent).toBeLessThanOrEqual(LIMIT + TURN);
      expect(spent).toBeGreaterThanOrEqual(LIMIT);
      // Both processes got turns in (the race was real), and every reservation was released.
      for (const r of results) expect(r.admitted + r.refused).toBe(60);
      expect(db.prepare('SELECT COUNT(*) FROM usage_reservations').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
  });
});
