/**
 * Two processes on one data directory (one SQLite file), each with its own background runner and the same fake
 * time: the schedule's workflow slot runs once, a workflow trigger key runs once, and a price alert fires once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, silentLogger } from '@minara/agent';

const ROOT = path.join(import.meta.dirname, '..', '..');
const dir = mkdtempSync(path.join(tmpdir(), 'minara-auto-2p-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const START = '2026-03-02T00:00:30.000Z';

function worker(name: string, extra: string[] = []): { child: ChildProcess; next: () => Promise<string> } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'fixtures', 'automation-worker.ts'), dir, name, START, ...extra], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  return { child, next: async () => (await lines.next()).value as string };
}

describe('automation across two processes', () => {
  it('the schedule slot, a trigger key and each price alert run once between two processes', async () => {
    // Set up the data directory once: the workflow file, the schedule, and an alert that the pinned price fires.
    const setup = await createApp({ envFileDir: false, env: { MINARA_HEARTBEAT_EVERY: '0' }, logger: silentLogger, config: { dataDir: dir }, now: () => new Date(START) });
    const ws = setup.workspace!.dir;
    mkdirSync(path.join(ws, 'workflows'), { recursive: true });
    writeFileSync(path.join(ws, 'workflows', 'price-check.yaml'), 'steps:\n  - id: eth\n    tool: get_price\n    args: { symbol: ETH }\n');
    writeFileSync(path.join(ws, 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- every 1h: workflow price-check\n');
    for (const threshold of [3_000, 2_950]) {
      await setup.storage.alerts.create({ userId: 'default', asset: 'ETH', condition: 'below', threshold, basePrice: 3_100, createdAt: START, expiresAt: '2026-04-01T00:00:00.000Z' });
    }
    await setup.close();

    const a = worker('a', ['2900']);
    const b = worker('b', ['2900']);
    expect([await a.next(), await b.next()]).toEqual(['ready', 'ready']);
    a.child.stdin!.write('go\n');
    b.child.stdin!.write('go\n');
    const results = [JSON.parse(await a.next()), JSON.parse(await b.next())] as Array<{ name: string; started: string[]; manual: string | null; delivered: string[] }>;
    await Promise.all([a, b].map(({ child }) => new Promise((r) => (child.exitCode === null ? child.on('exit', r) : r(null)))));

    const check = await createApp({ envFileDir: false, env: { MINARA_HEARTBEAT_EVERY: '0' }, logger: silentLogger, config: { dataDir: dir }, now: () => new Date(Date.parse(START) + 3_700_000) });
    try {
      const runs = await check.workflows.runs({ workflowId: 'price-check' });
      expect(runs.map((r) => r.trigger).sort()).toEqual(['manual', 'schedule']);
      expect(runs.every((r) => r.status === 'ok')).toBe(true);
      // The schedule's slot was started by exactly one of the two runners; the shared key by exactly one process.
      expect(results.filter((r) => r.started.some((j) => j.startsWith('schedule:')))).toHaveLength(1);
      expect(results.filter((r) => r.manual !== null)).toHaveLength(1);
      // Each alert fired once between the two processes: delivered by one, recorded once, one message in its session.
      const delivered = results.flatMap((r) => r.delivered).sort();
      expect(delivered.map((id) => id.slice(0, 7))).toEqual(['alert-1', 'alert-2']);
      const alerts = await check.storage.alerts.list({ userId: 'default' });
      expect(alerts.map((a) => [a.id, a.status, a.firedPrice])).toEqual([[2, 'fired', 2_900], [1, 'fired', 2_900]]);
      expect(alerts.map((a) => a.deliverySessionId).sort()).toEqual(delivered);
      for (const id of delivered) expect((await check.storage.conversations.listMessages(id)).map((m) => m.role)).toEqual(['user', 'assistant']);
    } finally {
      await check.close();
    }
  }, 60_000);
});
