/**
 * The app's background work over a day of fake time: heartbeat turns only when HEARTBEAT.md has tasks, the
 * user's `## Schedule` entries as cron turns that are delivered, edits without restart, problems reported.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createApp, type CreateAppOptions, type Delivery, HEARTBEAT_OK, listDeliveries, type MinaraApp, parseSchedule, silentLogger } from '@minara/agent';
import { createScriptedModel, type ScriptEntry } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';

const T0 = Date.parse('2026-03-02T00:00:00.000Z');
const dirs: string[] = [];
let app: MinaraApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function setup(schedule: string, script: ScriptEntry[], background: CreateAppOptions['background'] = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-bg-'));
  dirs.push(dir);
  let t = T0;
  const model = createScriptedModel(script);
  const delivered: Delivery[] = [];
  app = await createApp({
    // The daily personalization rebuild, methodology synthesis and nightly memory extraction could take turns from the script: off here
    // (learning.md covers them).
    envFileDir: false, env: { MINARA_PERSONALIZATION_REBUILD: 'disabled', MEMORY_EXTRACTION: 'off', MINARA_METHODOLOGY_SYNTHESIS: 'disabled' }, logger: silentLogger, model, finance: false, config: { dataDir: dir },
    now: () => new Date(t),
    background: { deliver: (d) => void delivered.push(d), ...background },
  });
  const heartbeat = path.join(app.workspace!.dir, 'HEARTBEAT.md');
  const writeSchedule = (body: string) => writeFileSync(heartbeat, `# Heartbeat\n\n${body}`);
  writeSchedule(schedule);
  const a = app;
  /** Advance the clock in steps, ticking the runner and waiting for its runs at each step. */
  const run = async (totalMs: number, stepMs: number) => {
    for (let done = 0; done < totalMs; done += stepMs) {
      t += stepMs;
      await a.background.tick();
      await a.background.idle();
    }
  };
  return { app: a, model, delivered, run, writeSchedule };
}

describe('parseSchedule', () => {
  it('reads intervals, daily times and cron entries; untimed lines are heartbeat tasks; bad timed lines are problems', () => {
    const p = parseSchedule(`## Schedule
<!-- comments are ignored -->
- every 6h: check BTC funding
* daily 09:00 — morning brief
1. cron 0 9 * * 1-5: weekday brief
- 30 14 * * *: afternoon check
- watch my open positions
- every 10s: too often
- every week: no unit
- cron 61 * * * *: bad minute
`);
    expect(p.entries.map((e) => [e.every ?? e.cron, e.instruction])).toEqual([
      [21_600_000, 'check BTC funding'],
      ['0 9 * * *', 'morning brief'],
      ['0 9 * * 1-5', 'weekday brief'],
      ['30 14 * * *', 'afternoon check'],
    ]);
    expect(p.tasks).toEqual(['watch my open positions']);
    expect(p.problems.map((x) => x.line)).toEqual(['every 10s: too often', 'every week: no unit', 'cron 61 * * * *: bad minute']);
    expect(p.entries[0]!.id).toMatch(/^schedule:[0-9a-f]{8}$/);
    expect(parseSchedule('- every 6h: check BTC funding').entries[0]!.id).toBe(p.entries[0]!.id);
  });
});

describe('app.background over a day of fake time', () => {
  it('heartbeat fires 48 times but calls the model only when HEARTBEAT.md has tasks', async () => {
    const { app: a, model, run } = await setup('## Schedule\n\n<!-- nothing yet -->\n', []);
    expect(a.background.describe()).toContain('heartbeat (every 30m');
    await run(24 * 3_600_000, 30 * 60_000);
    const runs = await a.background.runs({ jobId: 'heartbeat', limit: 100 });
    expect(runs).toHaveLength(48);
    expect(new Set(runs.map((r) => `${r.outcome}:${r.detail}`))).toEqual(new Set(['skipped:no tasks in HEARTBEAT.md ## Schedule']));
    expect(model.calls).toHaveLength(0);
  });

  it('heartbeat turns work the standing tasks as autonomous turns; HEARTBEAT_OK is not delivered', async () => {
    const { app: a, model, delivered, run } = await setup('## Schedule\n\n- watch BTC funding\n', [
      { text: HEARTBEAT_OK },
      { text: 'BTC funding flipped negative: shorts are paying.' },
      { text: HEARTBEAT_OK },
      { text: HEARTBEAT_OK },
    ]);
    await run(2 * 3_600_000, 30 * 60_000);
    expect(model.calls).toHaveLength(4);
    expect(JSON.stringify(model.calls[0]!.prompt)).toContain('watch BTC funding');
    expect(delivered.map((d) => [d.jobId, d.source, d.text])).toEqual([['heartbeat', 'heartbeat', 'BTC funding flipped negative: shorts are paying.']]);
    const runs = await a.background.runs({ jobId: 'heartbeat' });
    expect(runs.map((r) => r.outcome).sort()).toEqual(['ok', 'skipped', 'skipped', 'skipped']);
    // The turns ran as the autonomous source, in one session per day.
    const audit = await a.storage.audit.query({ sessionId: 'heartbeat-2026-03-02' });
    expect(audit.every((r) => r.source === 'heartbeat')).toBe(true);
    expect((await a.storage.conversations.listMessages('heartbeat-2026-03-02')).length).toBeGreaterThan(0);
  });

  it('a ## Schedule entry every 6 h gives 4 cron turns in a day, each delivered; edits apply without restart', async () => {
    const answers = Array.from({ length: 6 }, (_, i) => ({ text: `Funding report ${i + 1}.` }));
    const { app: a, delivered, run, writeSchedule } = await setup('## Schedule\n\n- every 6h: report BTC funding\n- every now and then: broken\n', answers, { heartbeatEveryMs: 0 });
    await run(24 * 3_600_000, 15 * 60_000);
    expect(delivered.map((d) => d.text)).toEqual(['Funding report 1.', 'Funding report 2.', 'Funding report 3.', 'Funding report 4.']);
    expect(delivered.every((d) => d.source === 'cron' && d.jobId.startsWith('schedule:'))).toBe(true);
    expect(a.background.schedule().problems).toEqual([{ line: 'every now and then: broken', reason: expect.stringContaining('expected "every') }]);
    // Edit the file: the old entry's job goes, the new one comes, at the next tick.
    writeSchedule('## Schedule\n\n- every 12h: report ETH funding\n');
    await run(12 * 3_600_000, 15 * 60_000);
    const jobs = a.background.status().map((j) => j.id).filter((id) => id.startsWith('schedule:'));
    expect(jobs).toHaveLength(1);
    expect(a.background.status().find((j) => j.id === jobs[0])!.description).toContain('report ETH funding');
    expect(delivered.at(-1)!.text).toBe('Funding report 5.');
  });

  it('deliveries read back from storage: cron and heartbeat answers (not HEARTBEAT_OK), newest first, per user, after a time; GET /v1/deliveries', async () => {
    const { app: a, run, writeSchedule } = await setup('## Schedule\n\n- every 6h: report BTC funding\n', [{ text: 'Funding report 1.' }, { text: HEARTBEAT_OK }, { text: 'Whale alert on ETH.' }], { heartbeatEveryMs: 0 });
    await run(6 * 3_600_000, 15 * 60_000);
    writeSchedule('## Schedule\n\n- watch the majors\n');
    await run(60_000, 60_000);
    await a.runtime.generate({ sessionId: 'heartbeat-2026-03-02', source: 'heartbeat', surface: 'background', message: 'tasks' });
    await run(60_000, 60_000);
    await a.runtime.generate({ sessionId: 'heartbeat-2026-03-03', source: 'heartbeat', surface: 'background', message: 'tasks' });
    await run(60_000, 60_000);
    await a.runtime.generate({ sessionId: 'chat-1', message: 'a chat is not a delivery' }).catch(() => undefined);
    const list = await a.background.deliveries({ userId: 'default' });
    expect(list.map((d) => [d.source, d.text])).toEqual([['heartbeat', 'Whale alert on ETH.'], ['cron', 'Funding report 1.']]);
    expect(await a.background.deliveries({ userId: 'someone-else' })).toEqual([]);
    expect(await listDeliveries(a.storage, { userId: 'default' })).toEqual(list);
    expect(await a.background.deliveries({ userId: 'default', after: list[1]!.at })).toHaveLength(1);
    await expect(a.background.deliveries({ userId: 'default', limit: 0 })).rejects.toThrow(/limit must be an integer from 1 to 100/);
    const { createGateway } = await import('@minara/agent/gateway');
    const gateway = createGateway({ runtime: a.runtime, storage: a.storage, tools: a.tools, logger: silentLogger, background: a.background });
    const body = (await (await gateway.fetch(new Request('http://127.0.0.1/v1/deliveries?limit=1'))).json()) as { deliveries: Array<{ text: string }> };
    expect(body.deliveries.map((d) => d.text)).toEqual(['Whale alert on ETH.']);
    expect((await gateway.fetch(new Request('http://127.0.0.1/v1/deliveries?after=yesterday'))).status).toBe(400);
    expect(await (await gateway.fetch(new Request('http://127.0.0.1/v1/info'))).json()).toMatchObject({ features: { deliveries: true } });
  });

  it('a schedule line the runner ignores is told to the user in their next own turn, once; not in autonomous or other users\' turns', async () => {
    const { app: a, model } = await setup('## Schedule\n\n- every 5s: too often\n', [{ text: 'ok' }, { text: 'ok' }, { text: 'ok' }], { heartbeatEveryMs: 0 });
    await a.background.syncSchedule();
    const notices = (i: number) => model.calls[i]!.prompt.filter((m) => m.role === 'system').map((m) => String(m.content)).find((t) => t.startsWith('## Notices'));
    await a.runtime.generate({ sessionId: 'other-user', userId: 'someone-else', message: 'hi' });
    expect(notices(0)).toBeUndefined();
    await a.runtime.generate({ sessionId: 's1', message: 'hi' });
    expect(notices(1)).toContain('HEARTBEAT.md ## Schedule: the line "every 5s: too often" is ignored (the shortest interval is 1 minute)');
    await a.runtime.generate({ sessionId: 's1', message: 'and now?' });
    expect(notices(2)).toBeUndefined();
    // The job list still shows it.
    expect(a.background.schedule().problems).toHaveLength(1);
  });

  it('respects active hours; refuses a bad MINARA_HEARTBEAT_EVERY naming it', async () => {
    const { app: a, model, run } = await setup('## Schedule\n\n- check positions\n', [{ text: HEARTBEAT_OK }, { text: HEARTBEAT_OK }], { activeHours: { start: '01:00', end: '02:00' } });
    await run(3 * 3_600_000, 30 * 60_000);
    expect(model.calls).toHaveLength(2); // 01:00 and 01:30
    const skipped = await a.background.runs({ jobId: 'heartbeat', outcome: 'skipped' });
    expect(skipped.filter((r) => r.detail?.startsWith('outside active hours'))).toHaveLength(4);
    await expect(createApp({ envFileDir: false, env: { MINARA_HEARTBEAT_EVERY: 'often' }, logger: silentLogger, finance: false, config: { dataDir: mkdtempSync(path.join(tmpdir(), 'minara-bg-')) } })).rejects.toThrow(
      /MINARA_HEARTBEAT_EVERY: expected a duration like 30m/,
    );
  });
});

describe('surfaces', () => {
  it('GET /v1/jobs shows operators the jobs and recent runs (others get 403); /jobs and minara jobs print them', async () => {
    const { app: a, run } = await setup('## Schedule\n\n- every 6h: report funding\n- every fortnight: nope\n', [{ text: 'Report.' }], { heartbeatEveryMs: 0 });
    await run(6 * 3_600_000, 30 * 60_000);
    const { createGateway } = await import('@minara/agent/gateway');
    const gateway = createGateway({
      runtime: a.runtime, storage: a.storage, tools: a.tools, logger: silentLogger, background: a.background,
      authenticate: (r) => (r.headers.get('authorization') === 'Bearer op' ? { userId: 'ops', roles: ['operator'] } : { userId: 'alice' }),
    });
    const ok = await gateway.fetch(new Request('http://127.0.0.1/v1/jobs?limit=5', { headers: { authorization: 'Bearer op' } }));
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { started: boolean; jobs: Array<{ id: string; schedule: string }>; runs: Array<{ jobId: string; outcome: string }> };
    expect(body.started).toBe(false);
    expect(body.jobs.map((j) => j.schedule)).toEqual(['every 30m', 'every 6h']);
    expect(body.runs.map((r) => [r.jobId.startsWith('schedule:'), r.outcome])).toContainEqual([true, 'ok']);
    expect((await gateway.fetch(new Request('http://127.0.0.1/v1/jobs', { headers: { authorization: 'Bearer alice' } }))).status).toBe(403);
    const { formatJobs } = await import('../../cli/slash-commands');
    const text = await formatJobs(a);
    expect(text).toContain('Background runner: not started in this process.');
    expect(text).toMatch(/schedule:[0-9a-f]{8}\s+every 6h/);
    expect(text).toContain('! HEARTBEAT.md: "every fortnight: nope" is ignored');
  });
});
