import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ConfigError,
  createWorkspace,
  extractScheduleSection,
  hasBootstrapDoneToken,
  parseHeartbeat,
  resolveWorkspaceDir,
  stripBootstrapDoneToken,
  workspaceConfigFromEnv,
} from '@minara/agent';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, FIXED_NOW, fixedNow, tempDir } from './helpers';

afterEach(cleanupTempDirs);

const SCHEDULE = `## Schedule

<!-- operator comment: keep me -->
- daily 08:00 Europe/Berlin: summarise overnight moves


- weekly Mon: review positions   
custom_field: { weird: true }
\`\`\`
## not a heading inside a fence
\`\`\`
`;

describe('heartbeat', () => {
  it('writes state at turn end and preserves ## Schedule byte for byte', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'HEARTBEAT.md'), `# HEARTBEAT.md\n\n## State\n\n- last_seen: old\n\n${SCHEDULE}`);
    const ws = createWorkspace({ dir, now: fixedNow });
    const r = await ws.onTurnEnd({ sessionId: 's1', surface: 'repl', turnCount: 3, openLoops: ['check ETH funding', 'rebalance\nnext week'] });
    expect(r).toEqual({ heartbeatWritten: true, errors: [] });
    const text = await readFile(join(dir, 'HEARTBEAT.md'), 'utf8');
    expect(extractScheduleSection(text)).toBe(SCHEDULE);
    expect(text.endsWith(SCHEDULE)).toBe(true);
    const parsed = parseHeartbeat(text);
    expect(parsed).toMatchObject({ lastSeen: FIXED_NOW.toISOString(), sessionId: 's1', surface: 'repl', turnCount: 3 });
    expect(parsed.openLoops).toEqual(['check ETH funding', 'rebalance next week']);
    // Undefined openLoops keeps the list; the schedule survives repeated writes.
    await ws.writeHeartbeat({ sessionId: 's2', surface: 'http', turnCount: 1 });
    const again = await readFile(join(dir, 'HEARTBEAT.md'), 'utf8');
    expect(parseHeartbeat(again).openLoops).toEqual(['check ETH funding', 'rebalance next week']);
    expect(extractScheduleSection(again)).toBe(SCHEDULE);
  });

  it('keeps a schedule that sat between other sections, and adds a default one when absent', async () => {
    const dir = await tempDir();
    const middle = '## Schedule\n- hourly: ping\n\n';
    await writeFile(join(dir, 'HEARTBEAT.md'), `# H\n\n${middle}## Open Loops\n\n- a\n`);
    const ws = createWorkspace({ dir, now: fixedNow });
    await ws.writeHeartbeat({ sessionId: 's', surface: 'repl', turnCount: 1 });
    expect(extractScheduleSection(await readFile(join(dir, 'HEARTBEAT.md'), 'utf8'))).toBe(middle);
    const fresh = createWorkspace({ dir: await tempDir(), now: fixedNow });
    await fresh.writeHeartbeat({ sessionId: 's', surface: 'repl', turnCount: 1, openLoops: [] });
    const text = await readFile(join(fresh.dir, 'HEARTBEAT.md'), 'utf8');
    expect(text).toContain('## Schedule');
    expect(parseHeartbeat(text).openLoops).toEqual([]);
  });

  it('is not written when disabled, nor by sub-agent turns', async () => {
    const off = createWorkspace({ dir: await tempDir(), now: fixedNow, heartbeat: false });
    expect((await off.onTurnEnd({ sessionId: 's', surface: 'repl', turnCount: 1 })).heartbeatWritten).toBe(false);
    expect(await readdir(off.dir)).toEqual([]);
    const on = createWorkspace({ dir: await tempDir(), now: fixedNow });
    expect((await on.onTurnEnd({ sessionId: 's', surface: 'repl', turnCount: 1, source: 'subagent' })).heartbeatWritten).toBe(false);
  });
});

describe('exclusive workspace (one writer: a backtest scratch workspace)', () => {
  it('serves prompt files from memory between its own writes, and still writes the heartbeat and edits to disk in call order', async () => {
    const dir = await tempDir();
    const ws = createWorkspace({ dir, now: fixedNow, exclusive: true });
    expect(ws.settings.exclusive).toBe(true);
    expect(createWorkspace({ dir, now: fixedNow }).settings.exclusive).toBe(false);
    await ws.seed();
    await writeFile(join(dir, 'USER.md'), '# USER.md\n\nfirst-version\n');
    await ws.seed(); // seed forgets everything it had cached
    expect((await ws.loadPromptBlocks()).dynamic).toContain('first-version');
    // A change behind the workspace's back is not seen: the contract is that nothing else writes.
    await writeFile(join(dir, 'USER.md'), '# USER.md\n\nsecond-version\n');
    expect((await ws.loadPromptBlocks()).dynamic).toContain('first-version');
    // A write through the workspace is.
    const current = await ws.readFile('USER.md');
    await ws.writeFile('USER.md', '# USER.md\n\nthird-version\n', { expectedSha256: current.sha256 });
    expect((await ws.loadPromptBlocks()).dynamic).toContain('third-version');
    // Concurrent heartbeat writes land in call order, on disk and in the next prompt; no lock file is left.
    await Promise.all([1, 2, 3, 4, 5].map((turnCount) => ws.writeHeartbeat({ sessionId: `s${turnCount}`, surface: 'backtest', turnCount })));
    expect(parseHeartbeat(await readFile(join(dir, 'HEARTBEAT.md'), 'utf8'))).toMatchObject({ sessionId: 's5', turnCount: 5 });
    expect((await ws.loadPromptBlocks()).dynamic).toContain('s5');
    expect((await readdir(dir)).filter((f) => f.endsWith('.lock') || f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('daily journal', () => {
  it('appends every N turns into a per-session file, redacting secrets', async () => {
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow, heartbeat: false, dailyLog: { enabled: true, interval: 2 } });
    const turn = (n: number, userText: string) => ws.onTurnEnd({ sessionId: 'abc/1', surface: 'repl', turnCount: n, userText, replyText: `reply ${n}` });
    expect((await turn(1, 'hello')).journalAppended).toBeUndefined();
    expect((await turn(2, 'my key is sk-ant-abcdefghijklmnopqrstuvwxyz')).journalAppended).toBe('memory/2026-03-02-abc_1.md');
    await turn(3, 'third');
    await turn(4, 'fourth');
    const text = await readFile(join(ws.dir, 'memory', '2026-03-02-abc_1.md'), 'utf8');
    expect(text.match(/^## 12:00 UTC/gm)).toHaveLength(2);
    expect(text).toContain('turns 1–2');
    expect(text).toContain('[REDACTED:anthropic_key]');
    expect(text).not.toContain('sk-ant-');
    expect(text).toContain('reply 4');
  });

  it('is off by default; the loader reads both the per-session and the legacy aggregate shape', async () => {
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow });
    expect(ws.settings.dailyLog.enabled).toBe(false);
    expect((await ws.onTurnEnd({ sessionId: 's', surface: 'repl', turnCount: 5 })).journalAppended).toBeUndefined();
    await mkdir(join(ws.dir, 'memory'));
    await writeFile(join(ws.dir, 'memory', '2026-03-02.md'), 'aggregate entry');
    await ws.appendDailyLog({ sessionId: 's9', surface: 'http', summary: 'summary entry' });
    const b = await ws.loadPromptBlocks({ sessionId: 's9' });
    expect(b.dynamic).toContain('aggregate entry');
    expect(b.dynamic).toContain('summary entry');
  });
});

describe('SOUL.md change disclosure', () => {
  it('baselines silently, announces a change once, then re-baselines', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'SOUL.md'), 'soul v1');
    const ws = createWorkspace({ dir, now: fixedNow });
    expect((await ws.loadPromptBlocks()).notices).toEqual([]);
    expect(JSON.parse(await readFile(join(dir, '.soul-state.json'), 'utf8')).sha256).toMatch(/^[0-9a-f]{64}$/);
    await writeFile(join(dir, 'SOUL.md'), 'soul v2');
    // A cron turn neither shows nor consumes the notice.
    expect((await ws.loadPromptBlocks({ source: 'cron' })).notices).toEqual([]);
    const fresh = createWorkspace({ dir, now: fixedNow }); // "next session": another process
    const first = await fresh.loadPromptBlocks({ source: 'user' });
    expect(first.notices.map((n) => n.kind)).toEqual(['soul-changed']);
    expect((await fresh.loadPromptBlocks()).notices).toEqual([]);
    expect((await createWorkspace({ dir }).loadPromptBlocks()).notices).toEqual([]);
  });
});

describe('BOOTSTRAP two-stage onboarding', () => {
  it('archives BOOTSTRAP.md on BOOTSTRAP_DONE and drops the bootstrap block next turn', async () => {
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow });
    await ws.seed();
    expect((await ws.loadPromptBlocks()).bootstrap).toBeDefined();
    const t1 = await ws.onTurnEnd({ sessionId: 's', surface: 'repl', turnCount: 1, replyText: 'Hi! What is your name? (I will say BOOTSTRAP_DONE later)' });
    expect(t1.bootstrapArchivedAs).toBeUndefined();
    const t2 = await ws.onTurnEnd({ sessionId: 's', surface: 'repl', turnCount: 2, replyText: 'Saved USER.md.\n\nBOOTSTRAP_DONE\n' });
    expect(t2.bootstrapArchivedAs).toBe('BOOTSTRAP.md.done.2026-03-02T12-00-00.000Z');
    const files = await readdir(ws.dir);
    expect(files).toContain('BOOTSTRAP.md.done.2026-03-02T12-00-00.000Z');
    expect(files).not.toContain('BOOTSTRAP.md');
    expect((await ws.loadPromptBlocks()).bootstrap).toBeUndefined();
    // Seeding again never brings BOOTSTRAP.md back.
    expect((await ws.seed()).created).toEqual([]);
  });

  it('detects the token only on its own last line', () => {
    expect(hasBootstrapDoneToken('done\nBOOTSTRAP_DONE')).toBe(true);
    expect(hasBootstrapDoneToken('done\n  BOOTSTRAP_DONE  \n\n')).toBe(true);
    expect(hasBootstrapDoneToken('BOOTSTRAP_DONE\nmore text')).toBe(false);
    expect(hasBootstrapDoneToken('I will emit BOOTSTRAP_DONE')).toBe(false);
    expect(stripBootstrapDoneToken('Saved.\nBOOTSTRAP_DONE\n')).toBe('Saved.');
  });
});

describe('configuration', () => {
  it('has the spec defaults: heartbeat on, daily log off, dreaming off', () => {
    const s = createWorkspace({ dir: '/tmp/never-written' }).settings;
    expect([s.heartbeat, s.dailyLog.enabled, s.dreaming.enabled]).toEqual([true, false, false]);
    expect(s.dreaming).toMatchObject({ intervalHours: 24, totalInputBytes: 262144, maxFileBytes: 65536, lockTtlMs: 1_800_000 });
    expect(s.prompt).toMatchObject({ maxFileChars: 20_000, maxTotalChars: 60_000 });
  });

  it('reads the env names and rejects bad values with the variable named', () => {
    const cfg = workspaceConfigFromEnv({
      MINARA_WORKSPACE_DIR: '/srv/ws',
      WORKSPACE_HEARTBEAT_ENABLED: '0',
      WORKSPACE_DAILY_LOG_ENABLED: '1',
      WORKSPACE_DAILY_LOG_INTERVAL: '3',
      WORKSPACE_DREAM_ENABLED: 'false',
      WORKSPACE_DREAM_INTERVAL_HOURS: '0.5',
      WORKSPACE_DREAM_TOTAL_INPUT_BYTES: '1000',
      WORKSPACE_DREAM_LOCK_TTL_MS: '60000',
    });
    expect(cfg).toEqual({
      dir: '/srv/ws',
      heartbeat: false,
      dailyLog: { enabled: true, interval: 3 },
      dreaming: { enabled: false, intervalHours: 0.5, totalInputBytes: 1000, lockTtlMs: 60000 },
    });
    expect(createWorkspace(cfg).settings.dailyLog.interval).toBe(3);
    expect(workspaceConfigFromEnv({})).toEqual({});
    expect(() => workspaceConfigFromEnv({ WORKSPACE_DAILY_LOG_INTERVAL: 'ten' })).toThrow(/WORKSPACE_DAILY_LOG_INTERVAL/);
    expect(() => workspaceConfigFromEnv({ WORKSPACE_DREAM_ENABLED: 'maybe' })).toThrow(ConfigError);
    expect(() => workspaceConfigFromEnv({ WORKSPACE_DREAM_LOCK_TTL_MS: '-5' })).toThrow(/positive integer/);
    expect(() => createWorkspace({ dreaming: { enabled: true } })).toThrow(/dreaming\.model/);
    expect(() => createWorkspace({ caps: { maxFileChars: 0 } })).toThrow(/caps\.maxFileChars/);
  });

  it('resolves the directory: option, then --workspace, then MINARA_WORKSPACE_DIR, then ~/.minara/workspace', () => {
    const home = '/home/op';
    expect(resolveWorkspaceDir({ dir: '~/x', argv: ['--workspace', '/a'], home })).toBe('/home/op/x');
    expect(resolveWorkspaceDir({ argv: ['--workspace', '/a'], env: { MINARA_WORKSPACE_DIR: '/b' }, home })).toBe('/a');
    expect(resolveWorkspaceDir({ argv: ['--workspace=~/.openclaw/workspace'], home })).toBe('/home/op/.openclaw/workspace');
    expect(resolveWorkspaceDir({ env: { MINARA_WORKSPACE_DIR: '/b' }, home })).toBe('/b');
    expect(resolveWorkspaceDir({ home })).toBe('/home/op/.minara/workspace');
    expect(() => resolveWorkspaceDir({ argv: ['--workspace'] })).toThrow(ConfigError);
  });
});
