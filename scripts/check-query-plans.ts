/**
 * `npm run check:query-plans -- <dir>`: the SQLite statements a test run recorded (MINARA_SQL_PLAN_LOG=<dir>,
 * test/support/sql-plan-recorder.ts), EXPLAINed on a freshly migrated database. Fails on a full scan of a table
 * that grows with use unless an allowance below names the statement and says why (docs/storage.md, "Query plans").
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { createSqliteStorage } from '../src/storage/sqlite/index';
import { findFullScans, type ScanAllowance } from './query-plans';

/** Statements that may scan a growing table: operators' whole-table reads and maintenance, never a turn or a call. */
export const ALLOWANCES: readonly ScanAllowance[] = [
  { pattern: /^SELECT COUNT\(\*\) AS turns, .* FROM usage_ledger$/s, reason: 'usage totals over all time (an operator report): every row is read' },
  { pattern: /FROM audit_log( WHERE [^;]*)? ORDER BY id (DESC|ASC)? ?LIMIT/s, reason: 'audit listing: walks the rowid from the newest (or oldest) end and stops at the limit' },
  { pattern: /^SELECT COUNT\(\*\)( AS n)? FROM audit_log/s, reason: 'audit counts for an operator report' },
  { pattern: /FROM (approvals|grants|job_runs|workflow_runs)\b[^;]*ORDER BY/s, reason: 'operator listings of approvals, grants, job and workflow runs, newest first' },
  { pattern: /^DELETE FROM usage_reservations WHERE expires_at <= \?$/, reason: 'expired holds: the table holds only turns in flight' },
  { pattern: /\bmemory_vectors\b[^;]*\bmemories\b|\bmemories\b[^;]*\bmemory_vectors\b|^SELECT memory_id, embedding, bits FROM memory_vectors$/s, reason: 'vector index maintenance (doctor, rebuild, load at open)' },
];

const dir = process.argv[2] ?? process.env.MINARA_SQL_PLAN_LOG;
if (dir === undefined || dir === '') {
  console.error('usage: npm run check:query-plans -- <dir the test run recorded into (MINARA_SQL_PLAN_LOG)>');
  process.exit(2);
}
const statements = readdirSync(dir)
  .filter((f) => f.endsWith('.jsonl'))
  .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l !== ''))
  .map((l) => (JSON.parse(l) as { sql: string }).sql);
if (statements.length === 0) {
  console.error(`check:query-plans: no statements recorded under ${dir}`);
  process.exit(1);
}
const tmp = mkdtempSync(path.join(tmpdir(), 'minara-plans-'));
const file = path.join(tmp, 'plans.db');
await createSqliteStorage({ path: file, backgroundCheckpoints: false }).close();
const db = new Database(file, { readonly: true });
try {
  const report = findFullScans(db, statements, ALLOWANCES);
  for (const a of report.allowed) console.log(`allowed  ${a.table}: ${a.reason}`);
  for (const u of report.unexplained) console.log(`not explained here (${u.error}): ${u.sql.replace(/\s+/g, ' ').slice(0, 160)}`);
  for (const s of report.scans) console.error(`FULL SCAN of ${s.table} (${s.detail}): ${s.sql.replace(/\s+/g, ' ')}`);
  console.log(`check:query-plans: ${report.explained} statements explained, ${report.scans.length} full scans of growing tables, ${report.allowed.length} allowed, ${report.unexplained.length} not explained`);
  if (report.scans.length > 0) process.exitCode = 1;
} finally {
  db.close();
  rmSync(tmp, { recursive: true, force: true });
}
