import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const fixture = new URL('./fixtures/approval-process.ts', import.meta.url).pathname;
const child = async (...args: string[]) => {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', fixture, ...args], { cwd: process.cwd() });
  return JSON.parse(stdout) as { ok: boolean; code?: string; approval?: { approvalId: string } };
};

describe('approvals across processes', () => {
  it('request in one process, approve and execute in another, replay refused in a third', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-restart-'));
    const db = path.join(dir, 'minara.db');
    const marker = path.join(dir, 'executed.log');
    const requested = await child('request', db, marker);
    expect(requested).toMatchObject({ ok: false, code: 'APPROVAL_REQUIRED' });
    expect(existsSync(marker)).toBe(false);
    const approvalId = requested.approval!.approvalId;
    const executed = await child('approve-and-execute', db, marker, approvalId);
    expect(executed.ok).toBe(true);
    expect(readFileSync(marker, 'utf8')).toMatch(/^sent 3 to 0xabc/);
    const replay = await child('execute', db, marker, approvalId);
    expect(replay).toMatchObject({ ok: false, code: 'APPROVAL_ALREADY_USED' });
    expect(readFileSync(marker, 'utf8').trim().split('\n')).toHaveLength(1);
  }, 60_000);
});
