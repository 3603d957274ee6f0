/**
 * Vitest setup file: with `MINARA_SQL_PLAN_LOG=<dir>` set (CI sets it for the full run), record every distinct SQL
 * statement the SDK's own code prepares on SQLite (`better-sqlite3`), one JSON line per statement in
 * `<dir>/<pid>.jsonl`. Statements a test prepares itself (tampering with a table, checking a row) are left out: the
 * first caller outside better-sqlite3 must be under `src/`. `npm run check:query-plans -- <dir>` then EXPLAINs each
 * on a freshly migrated database and fails on a full scan of a table that grows (scripts/check-query-plans.ts).
 * Unset, this file does nothing.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = process.env.MINARA_SQL_PLAN_LOG;
const flag = Symbol.for('minara.sqlPlanRecorder');
const state = globalThis as { [flag]?: boolean };

if (dir !== undefined && dir !== '' && state[flag] !== true) {
  state[flag] = true;
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${process.pid}.jsonl`);
  const Database = createRequire(import.meta.url)('better-sqlite3') as { prototype: { prepare(this: unknown, sql: unknown, ...rest: unknown[]): unknown } };
  const prepare = Database.prototype.prepare;
  /** Statements recorded by this process. One a test prepared first is still recorded when the SDK prepares it. */
  const recorded = new Set<string>();
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
  const sdkSource = `${path.join(root, 'src')}${path.sep}`;
  /** Whether the first caller of `prepare` inside this repository (not its node_modules) is the SDK's source. */
  const fromSdk = (): boolean => {
    const first = (new Error().stack ?? '')
      .split('\n')
      .slice(1)
      .find((l) => l.includes(root) && !l.includes(`${path.sep}node_modules${path.sep}`) && !l.includes('sql-plan-recorder'));
    return first?.includes(sdkSource) === true;
  };
  Database.prototype.prepare = function recordingPrepare(this: unknown, sql: unknown, ...rest: unknown[]): unknown {
    if (typeof sql === 'string' && !recorded.has(sql) && fromSdk()) {
      recorded.add(sql);
      appendFileSync(file, `${JSON.stringify({ sql })}\n`);
    }
    return prepare.call(this, sql, ...rest);
  };
}
