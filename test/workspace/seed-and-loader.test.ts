import { mkdir, readFile, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createWorkspace,
  DEFAULT_MAX_FILE_CHARS,
  seedWorkspaceIfMissing,
  truncateForPrompt,
  WORKSPACE_TEMPLATES,
} from '@minara/agent';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, fixedNow, tempDir } from './helpers';

afterEach(cleanupTempDirs);

describe('seedWorkspaceIfMissing', () => {
  it('seeds the full set (no HEARTBEAT.md) plus BOOTSTRAP.md into a brand-new workspace', async () => {
    const dir = join(await tempDir(), 'ws');
    const result = await seedWorkspaceIfMissing(dir);
    expect(result.brandNew).toBe(true);
    expect([...result.created].sort()).toEqual(['AGENTS.md', 'BOOTSTRAP.md', 'IDENTITY.md', 'MEMORY.md', 'SOUL.md', 'TOOLS.md', 'USER.md']);
    await expect(readFile(join(dir, 'HEARTBEAT.md'))).rejects.toThrow();
    const memory = await readFile(join(dir, 'MEMORY.md'), 'utf8');
    expect(memory).toContain('## Facts');
    expect(memory).toContain('## Preferences');
    expect(memory).toContain('## Decisions');
    for (const name of result.created) expect((await readFile(join(dir, name), 'utf8')).startsWith('---')).toBe(false);
  });

  it('is idempotent, never overwrites, and skips BOOTSTRAP.md in an existing workspace', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'SOUL.md'), 'my soul\n');
    const first = await seedWorkspaceIfMissing(dir);
    expect(first.brandNew).toBe(false);
    expect(first.created).not.toContain('BOOTSTRAP.md');
    expect(first.existing).toEqual(['SOUL.md']);
    expect(await readFile(join(dir, 'SOUL.md'), 'utf8')).toBe('my soul\n');
    await writeFile(join(dir, 'USER.md'), 'edited\n');
    const second = await seedWorkspaceIfMissing(dir);
    expect(second.created).toEqual([]);
    expect(await readFile(join(dir, 'USER.md'), 'utf8')).toBe('edited\n');
  });

  it('sweeps temp files left by crashed writers (only old ones)', async () => {
    const dir = await tempDir();
    const old = join(dir, '.0123456789ab.4242.tmp');
    const fresh = join(dir, '.ba9876543210.4242.tmp');
    await writeFile(old, 'half');
    await writeFile(fresh, 'in flight');
    const past = Date.now() / 1000 - 3600;
    await utimes(old, past, past);
    expect((await seedWorkspaceIfMissing(dir)).sweptOrphans).toBe(1);
    await expect(readFile(old)).rejects.toThrow();
    expect(await readFile(fresh, 'utf8')).toBe('in flight');
  });

  it('seed() through the workspace gives the bootstrap block until BOOTSTRAP.md goes away', async () => {
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow });
    await ws.seed();
    const blocks = await ws.loadPromptBlocks({ source: 'user', sessionId: 's1' });
    expect(blocks.bootstrap).toContain('BOOTSTRAP_DONE');
    expect(blocks.bootstrap).toContain(WORKSPACE_TEMPLATES['BOOTSTRAP.md'].split('\n')[0]);
  });
});

async function fullWorkspace(): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, 'SOUL.md'), '# SOUL\nsoul text\n');
  await writeFile(join(dir, 'AGENTS.md'), '# AGENTS\nagents text\n');
  await writeFile(join(dir, 'TOOLS.md'), '# TOOLS\ntools text\n');
  await writeFile(join(dir, 'IDENTITY.md'), '# IDENTITY\n- **Name:** Mina\n');
  await writeFile(join(dir, 'USER.md'), '# USER\nuser text\n');
  await writeFile(join(dir, 'MEMORY.md'), '# MEMORY\nmemory text\n');
  await writeFile(join(dir, 'HEARTBEAT.md'), '# HEARTBEAT\n- last_seen: x\n');
  await mkdir(join(dir, 'memory'));
  await writeFile(join(dir, 'memory', '2026-03-02-s1.md'), 'journal today s1\n');
  await writeFile(join(dir, 'memory', '2026-03-01.md'), 'legacy aggregate yesterday\n');
  await writeFile(join(dir, 'memory', '2026-02-20-s1.md'), 'old journal\n');
  return dir;
}

describe('loadPromptBlocks', () => {
  it('orders identity (SOUL, AGENTS) and the dynamic snapshot (USER, MEMORY, HEARTBEAT, journal)', async () => {
    const ws = createWorkspace({ dir: await fullWorkspace(), now: fixedNow });
    const b = await ws.loadPromptBlocks({ source: 'user', sessionId: 's1' });
    const order = (text: string, parts: string[]) => parts.map((p) => text.indexOf(p));
    const idx = order(b.identity, ['## SOUL.md', '## AGENTS.md', '## TOOLS.md', '## IDENTITY.md']);
    expect(idx.every((v, i) => v >= 0 && (i === 0 || v > (idx[i - 1] ?? 0)))).toBe(true);
    const d = order(b.dynamic, ['## USER.md', '## MEMORY.md', '## HEARTBEAT.md', 'legacy aggregate yesterday', 'journal today s1']);
    expect(d.every((v, i) => v >= 0 && (i === 0 || v > (d[i - 1] ?? 0)))).toBe(true);
    expect(b.dynamic).not.toContain('old journal');
    expect(b.bootstrap).toBeUndefined();
    expect(b.layout).toBe('classic');
  });

  it('keeps the identity block byte-identical across calls and sessions while files are unchanged', async () => {
    const dir = await fullWorkspace();
    const ws = createWorkspace({ dir, now: fixedNow });
    const a = await ws.loadPromptBlocks({ source: 'user', sessionId: 's1' });
    await writeFile(join(dir, 'MEMORY.md'), '# MEMORY\nchanged memory\n');
    const b = await ws.loadPromptBlocks({ source: 'cron', sessionId: 's2' });
    expect(b.identity).toBe(a.identity);
    expect(b.identityHash).toBe(a.identityHash);
    await writeFile(join(dir, 'AGENTS.md'), '# AGENTS\nnew rules\n');
    const c = await ws.loadPromptBlocks({ source: 'user' });
    expect(c.identity).toContain('new rules');
    expect(c.identityHash).not.toBe(a.identityHash);
  });

  it('filters per source: cron sees no MEMORY.md or journal, sub-agents AGENTS only', async () => {
    const ws = createWorkspace({ dir: await fullWorkspace(), now: fixedNow });
    const cron = await ws.loadPromptBlocks({ source: 'cron' });
    expect(cron.dynamic).not.toContain('memory text');
    expect(cron.dynamic).not.toContain('journal today');
    expect(cron.dynamic).toContain('user text');
    expect(cron.files.find((f) => f.file === 'MEMORY.md')?.status).toBe('filtered');
    const sub = await ws.loadPromptBlocks({ source: 'subagent' });
    expect(sub.identity).toContain('agents text');
    expect(sub.identity).not.toContain('soul text');
    expect(sub.identity).not.toContain('tools text');
    expect(sub.dynamic).toBe('');
  });

  it('omits HEARTBEAT.md when the heartbeat is disabled', async () => {
    const ws = createWorkspace({ dir: await fullWorkspace(), now: fixedNow, heartbeat: false });
    expect((await ws.loadPromptBlocks()).dynamic).not.toContain('## HEARTBEAT.md');
  });

  it('truncates oversized files to head 70% / tail 20% with a marker naming the file', async () => {
    const dir = await fullWorkspace();
    const big = `HEAD${'x'.repeat(30_000)}TAIL`;
    await writeFile(join(dir, 'MEMORY.md'), big);
    const ws = createWorkspace({ dir, now: fixedNow });
    const b = await ws.loadPromptBlocks();
    expect(b.dynamic).toContain('[...truncated, read MEMORY.md for full content...]');
    expect(b.dynamic).toContain(`…(truncated MEMORY.md: kept 14000+4000 chars of ${big.length})…`);
    expect(b.dynamic).toContain('HEAD');
    expect(b.dynamic).toContain('TAIL');
    expect(b.files.find((f) => f.file === 'MEMORY.md')?.status).toBe('truncated');
    expect(b.notices.some((n) => n.kind === 'file-truncated' && n.file === 'MEMORY.md')).toBe(true);
    const t = truncateForPrompt('a'.repeat(DEFAULT_MAX_FILE_CHARS), 'X.md', DEFAULT_MAX_FILE_CHARS);
    expect(t.truncated).toBe(false);
  });

  it('applies configurable per-file and total caps', async () => {
    const dir = await fullWorkspace();
    for (const f of ['USER.md', 'MEMORY.md', 'HEARTBEAT.md']) await writeFile(join(dir, f), `${f}\n${'y'.repeat(900)}`);
    const ws = createWorkspace({ dir, now: fixedNow, caps: { maxFileChars: 1000, maxTotalChars: 1500 } });
    const b = await ws.loadPromptBlocks();
    expect(b.totalChars).toBeLessThanOrEqual(1500 + 200);
    expect(b.files.some((f) => f.status === 'skipped-budget')).toBe(true);
    expect(b.files.find((f) => f.file === 'SOUL.md')?.status).toBe('included');
  });

  it('reads the mid-2026 OpenClaw layout: frontmatter, TOOLS folded into AGENTS, dated USER directives', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'AGENTS.md'), '---\nsummary: agents\nread_when: always\n---\n# AGENTS.md - Your Workspace\n\n## Tools\n\n### Local notes\n\ncamera: porch\n');
    await writeFile(join(dir, 'SOUL.md'), '# SOUL.md - Who You Are\n');
    await writeFile(
      join(dir, 'USER.md'),
      '# USER.md - User Model\n\n## Directives\n\n<!-- observed: 2026-05-01 | status: superseded -->\nAlways quote prices in EUR.\n\n<!-- observed: 2026-06-01 | status: active -->\nAlways quote prices in USD.\n',
    );
    const b = await createWorkspace({ dir, now: fixedNow }).loadPromptBlocks();
    expect(b.layout).toBe('openclaw-2026');
    expect(b.identity).not.toContain('read_when');
    expect(b.identity).toContain('camera: porch');
    expect(b.dynamic).toContain('Always quote prices in USD.');
    expect(b.dynamic).not.toContain('EUR');
    expect(b.files.find((f) => f.file === 'TOOLS.md')?.status).toBe('missing');
    expect(b.files.find((f) => f.file === 'HEARTBEAT.md')?.status).toBe('missing');
  });

  it('reads the classic layout with a missing SOUL.md marked, missing optional files skipped', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'AGENTS.md'), '# AGENTS.md - Your Workspace\n');
    const b = await createWorkspace({ dir, now: fixedNow }).loadPromptBlocks();
    expect(b.identity).toContain('[MISSING] Expected at: <workspace>/SOUL.md');
    expect(b.dynamic).toBe('');
  });

  it('refuses symlinks that lead out of the workspace and files above the read cap', async () => {
    const dir = await tempDir();
    const outside = await tempDir();
    await writeFile(join(outside, 'secret.md'), 'TOP SECRET');
    await symlink(join(outside, 'secret.md'), join(dir, 'MEMORY.md'));
    await writeFile(join(dir, 'USER.md'), 'u'.repeat(5000));
    await writeFile(join(dir, 'SOUL.md'), 'soul');
    await symlink(join(dir, 'SOUL.md'), join(dir, 'AGENTS.md'));
    const b = await createWorkspace({ dir, now: fixedNow, caps: { maxReadBytes: 4096 } }).loadPromptBlocks();
    expect(b.dynamic).not.toContain('TOP SECRET');
    expect(b.files.find((f) => f.file === 'MEMORY.md')?.status).toBe('refused');
    expect(b.files.find((f) => f.file === 'USER.md')?.status).toBe('too-large');
    expect(b.files.find((f) => f.file === 'AGENTS.md')?.status).toBe('included');
    expect(b.notices.filter((n) => n.kind === 'file-unreadable')).toHaveLength(2);
  });

  it('refuses a memory/ directory symlinked out of the workspace', async () => {
    const dir = await tempDir();
    const outside = await tempDir();
    await writeFile(join(outside, '2026-03-02.md'), 'outside journal');
    await symlink(outside, join(dir, 'memory'));
    const b = await createWorkspace({ dir, now: fixedNow }).loadPromptBlocks();
    expect(b.dynamic).not.toContain('outside journal');
  });
});
