import { mkdir, readdir, readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createWorkspace, DREAMING_LOG_MODULE, type LogFields, NOTHING_TO_PROMOTE, TRUNCATED_HEAD_PREFIX } from '@minara/agent';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, failingModel, lastJson, runFixture, tempDir, textModel } from './helpers';

afterEach(cleanupTempDirs);

const NOW = new Date('2026-03-02T12:00:00.000Z');

function recordingLogger() {
  const lines: Array<{ level: string; msg: string; fields: LogFields }> = [];
  const at = (level: string) => (msg: string, fields: LogFields = {}) => void lines.push({ level, msg, fields });
  return { lines, logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') } };
}

async function workspaceWithLogs(logs: Record<string, string>): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, 'MEMORY.md'), '# MEMORY.md\n\n## Facts\n- operator-curated fact\n');
  await mkdir(join(dir, 'memory'));
  let t = Date.parse('2026-03-01T00:00:00Z') / 1000;
  for (const [name, content] of Object.entries(logs)) {
    await writeFile(join(dir, 'memory', name), content);
    await utimes(join(dir, 'memory', name), t, t);
    t += 60;
  }
  return dir;
}

const state = async (dir: string) => JSON.parse(await readFile(join(dir, '.dreamed-state.json'), 'utf8')) as { last_processed_mtime: number; last_run_at: string; last_outcome: string };

describe('dreaming pipeline', () => {
  it('appends a ## Dreamed section, advances the watermark, logs "appended" and releases the lock', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'Operator said they only trade spot.\n' });
    const { lines, logger } = recordingLogger();
    const model = textModel('### Preferences\n- Trades spot only, no perps.');
    const ws = createWorkspace({ dir, now: () => NOW, logger, dreaming: { model } });
    const r = await ws.runDreamTick();
    expect(r.outcome).toBe('appended');
    expect(r.logs).toEqual(['memory/2026-03-01-s1.md']);
    const memory = await readFile(join(dir, 'MEMORY.md'), 'utf8');
    expect(memory).toBe('# MEMORY.md\n\n## Facts\n- operator-curated fact\n\n## Dreamed 2026-03-02\n\n### Preferences\n- Trades spot only, no perps.\n');
    const st = await state(dir);
    expect(st.last_processed_mtime).toBe((await stat(join(dir, 'memory', '2026-03-01-s1.md'))).mtimeMs);
    expect(st).toMatchObject({ last_run_at: NOW.toISOString(), last_outcome: 'appended' });
    expect(lines.find((l) => l.msg === 'appended')?.fields).toMatchObject({ module: DREAMING_LOG_MODULE, event: 'appended' });
    expect(await readdir(dir)).not.toContain('.dreaming.lock');
    // The prompt carried the MEMORY.md tail and the log; the next tick has nothing new.
    const prompt = JSON.stringify(model.doGenerateCalls[0]?.prompt);
    expect(prompt).toContain('operator-curated fact');
    expect(prompt).toContain('only trade spot');
    expect((await ws.runDreamTick()).outcome).toBe('no_new_logs');
    expect(model.doGenerateCalls).toHaveLength(1);
  });

  it('accepts NOTHING_TO_PROMOTE only as an exact match', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'small talk\n' });
    const { lines, logger } = recordingLogger();
    const ws = createWorkspace({ dir, now: () => NOW, logger, dreaming: { model: textModel(`  ${NOTHING_TO_PROMOTE}\n`) } });
    expect((await ws.runDreamTick()).outcome).toBe('nothing_to_promote');
    expect(await readFile(join(dir, 'MEMORY.md'), 'utf8')).not.toContain('Dreamed');
    expect((await state(dir)).last_processed_mtime).toBeGreaterThan(0);
    expect(lines.some((l) => l.msg === 'nothing_to_promote')).toBe(true);

    const dir2 = await workspaceWithLogs({ '2026-03-01-s1.md': 'we talked about the marker\n' });
    const mention = '### Facts\n- discussed the NOTHING_TO_PROMOTE marker behaviour';
    const ws2 = createWorkspace({ dir: dir2, now: () => NOW, dreaming: { model: textModel(mention) } });
    expect((await ws2.runDreamTick()).outcome).toBe('appended');
    expect(await readFile(join(dir2, 'MEMORY.md'), 'utf8')).toContain('discussed the NOTHING_TO_PROMOTE marker behaviour');
  });

  it('quarantines the source logs on a PII hit, leaves MEMORY.md and the watermark alone', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'wallet talk\n', '2026-03-02-s2.md': 'more\n' });
    const before = await readFile(join(dir, 'MEMORY.md'), 'utf8');
    const { lines, logger } = recordingLogger();
    const leaky = textModel('### Facts\n- Main wallet is 0x52908400098527886E0F7030069857D2E4169EE7');
    const ws = createWorkspace({ dir, now: () => NOW, logger, dreaming: { model: leaky } });
    const r = await ws.runDreamTick();
    expect(r).toMatchObject({ outcome: 'pii_detected_quarantine', pattern: 'evm_address' });
    expect(await readFile(join(dir, 'MEMORY.md'), 'utf8')).toBe(before);
    const q = JSON.parse(await readFile(join(dir, '.dreamed-quarantine.json'), 'utf8'));
    expect(q).toEqual([{ quarantined_at: NOW.toISOString(), pattern: 'evm_address', log_filenames: ['2026-03-01-s1.md', '2026-03-02-s2.md'], max_mtime: expect.any(Number) }]);
    expect((await state(dir)).last_processed_mtime).toBe(0);
    const line = lines.find((l) => l.msg === 'pii_detected_quarantine');
    expect(line?.level).toBe('error');
    expect(line?.fields).toMatchObject({ pattern: 'evm_address', log_filenames: ['2026-03-01-s1.md', '2026-03-02-s2.md'], workspace: dir });
    expect(JSON.stringify(line)).not.toContain('0x5290');
    expect(await readdir(dir)).not.toContain('.dreaming.lock');
    // Quarantined logs are filtered out by name until the operator clears the entry.
    expect((await ws.runDreamTick()).outcome).toBe('no_new_logs');
    await writeFile(join(dir, '.dreamed-quarantine.json'), '[]');
    const ok = createWorkspace({ dir, now: () => NOW, dreaming: { model: textModel('### Facts\n- fine') } });
    expect((await ok.runDreamTick()).logs).toHaveLength(2);
  });

  it('does not quarantine the deliberately omitted classes (Solana base58, 64-hex)', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'x\n' });
    const text = '### Facts\n- Tx 5f1d3c9a0b7e2d4c6a8f0e1d3c5b7a9f1e3d5c7b9a1f3e5d7c9b1a3f5e7d9c1b confirmed\n- SOL address 7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';
    const ws = createWorkspace({ dir, now: () => NOW, dreaming: { model: textModel(text) } });
    expect((await ws.runDreamTick()).outcome).toBe('appended');
  });

  it('quarantines a run of twelve BIP-39 words (a seed phrase), which it once let through', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'x\n' });
    const text = '### Facts\n- Words: abandon ability able about above absent absorb abstract absurd abuse access accident';
    const ws = createWorkspace({ dir, now: () => NOW, dreaming: { model: textModel(text) } });
    expect(await ws.runDreamTick()).toMatchObject({ outcome: 'pii_detected_quarantine', pattern: 'seed_phrase' });
  });

  it('logs llm_error, keeps the watermark and releases the lock when the model fails', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'x\n' });
    const { lines, logger } = recordingLogger();
    const ws = createWorkspace({ dir, now: () => NOW, logger, dreaming: { model: failingModel('provider down') } });
    const r = await ws.runDreamTick();
    expect(r.outcome).toBe('llm_error');
    expect(r.error).toContain('provider down');
    expect(lines.find((l) => l.msg === 'llm_error')?.level).toBe('error');
    expect((await state(dir)).last_processed_mtime).toBe(0);
    expect(await readdir(dir)).not.toContain('.dreaming.lock');
  });

  it('selects a contiguous newest-first run within the byte budget, tail-truncating big logs', async () => {
    const dir = await workspaceWithLogs({
      '2026-02-20-old.md': 'outside the window\n',
      '2026-02-27-a.md': 'A'.repeat(3000),
      '2026-02-28-b.md': 'B'.repeat(3000),
      '2026-03-01-c.md': 'C'.repeat(3000),
      '2026-03-02-d.md': `HEAD${'D'.repeat(5000)}`,
    });
    const model = textModel(NOTHING_TO_PROMOTE);
    const ws = createWorkspace({ dir, now: () => NOW, dreaming: { model, totalInputBytes: 8000, maxFileBytes: 4000 } });
    const r = await ws.runDreamTick();
    expect(r.logs).toEqual(['memory/2026-03-01-c.md', 'memory/2026-03-02-d.md']);
    const prompt = JSON.stringify(model.doGenerateCalls[0]?.prompt);
    expect(prompt).toContain(JSON.stringify(TRUNCATED_HEAD_PREFIX).slice(1, -1));
    expect(prompt).not.toContain('HEAD');
    expect(prompt).not.toContain('outside the window');
    // The newest log is always kept, even alone above the total budget.
    const dir2 = await workspaceWithLogs({ '2026-03-02-big.md': 'Z'.repeat(10_000) });
    const ws2 = createWorkspace({ dir: dir2, now: () => NOW, dreaming: { model, totalInputBytes: 1000, maxFileBytes: 4000 } });
    expect((await ws2.runDreamTick()).logs).toEqual(['memory/2026-03-02-big.md']);
  });

  it('skips while a live peer holds the lock and reclaims an age-stale lock from another host', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'x\n' });
    const { lines, logger } = recordingLogger();
    const live = { pid: process.pid, hostname: hostname(), started_at: NOW.toISOString(), token: 'peer' };
    await writeFile(join(dir, '.dreaming.lock'), JSON.stringify(live));
    const ws = createWorkspace({ dir, now: () => NOW, logger, dreaming: { model: textModel('### Facts\n- y') } });
    expect((await ws.runDreamTick())).toMatchObject({ outcome: 'lock_held_skip', holder: { token: 'peer' } });
    expect(lines.some((l) => l.msg === 'lock_held_skip')).toBe(true);
    expect(JSON.parse(await readFile(join(dir, '.dreaming.lock'), 'utf8')).token).toBe('peer');
    const old = { pid: 999_999, hostname: 'some-other-host', started_at: new Date(NOW.getTime() - 31 * 60_000).toISOString(), token: 'old' };
    await writeFile(join(dir, '.dreaming.lock'), JSON.stringify(old));
    expect((await ws.runDreamTick()).outcome).toBe('appended');
    expect(await readdir(dir)).not.toContain('.dreaming.lock');
  });
});

describe('dreaming across processes', () => {
  it('N processes racing one dream tick: exactly one appends', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'Operator trades BTC spot on weekdays.\n' });
    const startAt = String(Date.now() + 2000);
    const results = await Promise.all(Array.from({ length: 5 }, () => runFixture('dream-racer', [dir, startAt, '800', NOW.toISOString()])));
    const outcomes = results.map((r) => lastJson<{ outcome: string }>(r.stdout).outcome);
    expect(outcomes.filter((o) => o === 'appended')).toHaveLength(1);
    expect(outcomes).toContain('lock_held_skip');
    expect(outcomes.every((o) => ['appended', 'lock_held_skip', 'no_new_logs'].includes(o))).toBe(true);
    const memory = await readFile(join(dir, 'MEMORY.md'), 'utf8');
    expect(memory.match(/## Dreamed /g)).toHaveLength(1);
    expect(await readdir(dir)).not.toContain('.dreaming.lock');
  });

  it("reclaims a crashed holder's lock (dead pid on this host)", async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'Operator trades BTC spot on weekdays.\n' });
    const crashed = await runFixture('crashed-holder', [dir, NOW.toISOString()]);
    expect(crashed.signal).toBe('SIGKILL');
    expect(lastJson<{ holding: boolean }>(crashed.stdout).holding).toBe(true);
    const stale = JSON.parse(await readFile(join(dir, '.dreaming.lock'), 'utf8'));
    expect(stale.hostname).toBe(hostname());
    const { lines, logger } = recordingLogger();
    const ws = createWorkspace({ dir, now: () => NOW, logger, dreaming: { model: textModel('### Facts\n- reclaimed') } });
    expect((await ws.runDreamTick()).outcome).toBe('appended');
    expect(lines.find((l) => l.msg === 'stale_lock_reclaimed')?.fields).toMatchObject({ reason: 'dead_pid' });
    expect(await readdir(dir)).not.toContain('.dreaming.lock');
  });
});

describe('stale takeover under contention', () => {
  it('many ticks racing to take over one stale lock: exactly one appends', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'x\n' });
    const old = { pid: 999_999, hostname: hostname(), started_at: NOW.toISOString(), token: 'dead' };
    await writeFile(join(dir, '.dreaming.lock'), JSON.stringify(old));
    const model = textModel('### Facts\n- once', 100);
    const ticks = Array.from({ length: 8 }, () => createWorkspace({ dir, now: () => NOW, dreaming: { model } }).runDreamTick());
    const outcomes = (await Promise.all(ticks)).map((r) => r.outcome);
    expect(outcomes.filter((o) => o === 'appended')).toHaveLength(1);
    expect((await readFile(join(dir, 'MEMORY.md'), 'utf8')).match(/## Dreamed /g)).toHaveLength(1);
    expect((await readdir(dir)).filter((f) => f.includes('lock'))).toEqual([]);
  });
});

describe('dream scheduler', () => {
  it('is a no-op handle while dreaming is disabled and runs ticks when enabled', async () => {
    const dir = await workspaceWithLogs({ '2026-03-01-s1.md': 'x\n' });
    const off = createWorkspace({ dir, dreaming: { model: textModel('### Facts\n- z') } });
    expect(off.startDreamScheduler().running).toBe(false);
    const on = createWorkspace({ dir, now: () => NOW, dreaming: { enabled: true, model: textModel('### Facts\n- z'), intervalHours: 0.0003 } });
    on.startDreamScheduler();
    await new Promise((r) => setTimeout(r, 2500));
    on.close();
    expect(await readFile(join(dir, 'MEMORY.md'), 'utf8')).toContain('## Dreamed 2026-03-02');
  });
});
