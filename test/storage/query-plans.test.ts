/**
 * The query-plan check CI runs over the statements the test run recorded (scripts/check-query-plans.ts): a full scan
 * of a table that grows is a finding, through an alias too; index lookups, bounded tables, CTEs and allowed
 * statements are not; a statement this database cannot plan is reported, not passed silently.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { findFullScans } from '../../scripts/query-plans';

describe('the SQLite query-plan check', () => {
  it('flags full scans of growing tables and nothing else', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'minara-qp-')), 'a.db');
    await createSqliteStorage({ path: file, backgroundCheckpoints: false }).close();
    const db = new Database(file, { readonly: true });
    try {
      const report = findFullScans(
        db,
        [
          'SELECT * FROM messages WHERE json LIKE ?',
          'SELECT m.seq FROM messages m WHERE m.role = ?',
          'SELECT * FROM messages WHERE session_id = ? ORDER BY seq',
          'SELECT * FROM sessions WHERE user_id = @user ORDER BY updated_at DESC',
          'SELECT * FROM schema_migrations',
          'WITH x AS (SELECT 1 AS a) SELECT a FROM x',
          'SELECT COUNT(*) FROM audit_log',
          'SELECT * FROM no_such_table',
          'PRAGMA data_version',
        ],
        [{ pattern: /^SELECT COUNT\(\*\) FROM audit_log$/, reason: 'a report' }],
      );
      expect(report.scans.map((s) => [s.table, s.sql])).toEqual([
        ['messages', 'SELECT * FROM messages WHERE json LIKE ?'],
        ['messages', 'SELECT m.seq FROM messages m WHERE m.role = ?'],
      ]);
      expect(report.allowed.map((a) => [a.table, a.reason])).toEqual([['audit_log', 'a report']]);
      expect(report.unexplained.map((u) => u.sql)).toEqual(['SELECT * FROM no_such_table']);
      expect(report.unexplained[0]!.error).toMatch(/no such table/);
      expect(report.explained).toBe(7);
    } finally {
      db.close();
    }
  });
});
