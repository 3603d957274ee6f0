import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createWorkspace, type ImportedMemoryRow, importHermesMemory, importOpenClawWorkspace, parseHermesEntries } from '@minara/agent';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupTempDirs, fixedNow, tempDir } from './helpers';

afterEach(cleanupTempDirs);

async function openclawWorkspace(): Promise<string> {
  const dir = await tempDir('openclaw-');
  for (const f of ['AGENTS.md', 'SOUL.md', 'TOOLS.md', 'IDENTITY.md', 'USER.md', 'MEMORY.md', 'BOOTSTRAP.md', 'HEARTBEAT.md']) {
    await writeFile(join(dir, f), `openclaw ${f}\n`);
  }
  await mkdir(join(dir, 'memory'));
  await writeFile(join(dir, 'memory', '2026-02-01.md'), 'legacy log\n');
  await writeFile(join(dir, 'memory', '2026-02-02-abc.md'), 'session log\n');
  await writeFile(join(dir, 'memory', 'notes.txt'), 'not a log\n');
  return dir;
}

describe('importOpenClawWorkspace', () => {
  it('copies the files and daily logs, skipping BOOTSTRAP.md and HEARTBEAT.md', async () => {
    const from = await openclawWorkspace();
    const to = join(await tempDir(), 'minara');
    const { files } = await importOpenClawWorkspace({ from, to });
    const copied = files.filter((f) => f.action === 'copied').map((f) => f.file).sort();
    expect(copied).toEqual(['AGENTS.md', 'IDENTITY.md', 'MEMORY.md', 'SOUL.md', 'TOOLS.md', 'USER.md', 'memory/2026-02-01.md', 'memory/2026-02-02-abc.md']);
    expect(files.filter((f) => f.action === 'skipped-by-design').map((f) => f.file)).toEqual(['BOOTSTRAP.md', 'HEARTBEAT.md']);
    const names = await readdir(to);
    expect(names).not.toContain('BOOTSTRAP.md');
    expect(names).not.toContain('HEARTBEAT.md');
    expect(await readFile(join(to, 'SOUL.md'), 'utf8')).toBe('openclaw SOUL.md\n');
  });

  it('never overwrites operator files without the flag, but replaces untouched seeded templates', async () => {
    const from = await openclawWorkspace();
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow });
    await ws.seed();
    await writeFile(join(ws.dir, 'USER.md'), 'my own user file\n');
    const first = await importOpenClawWorkspace({ from, to: ws.dir });
    expect(first.files.find((f) => f.file === 'USER.md')?.action).toBe('skipped-exists');
    expect(first.files.find((f) => f.file === 'SOUL.md')?.action).toBe('replaced-template');
    expect(await readFile(join(ws.dir, 'USER.md'), 'utf8')).toBe('my own user file\n');
    const forced = await importOpenClawWorkspace({ from, to: ws.dir, overwrite: true });
    expect(forced.files.find((f) => f.file === 'USER.md')?.action).toBe('overwritten');
    expect(await readFile(join(ws.dir, 'USER.md'), 'utf8')).toBe('openclaw USER.md\n');
  });

  it('refuses source files that are symlinks out of the OpenClaw workspace', async () => {
    const from = await openclawWorkspace();
    const outside = await tempDir();
    await writeFile(join(outside, 'x'), 'outside secret');
    await writeFile(join(from, 'SOUL.md'), '');
    await (await import('node:fs/promises')).rm(join(from, 'SOUL.md'));
    await symlink(join(outside, 'x'), join(from, 'SOUL.md'));
    const to = await tempDir();
    const { files } = await importOpenClawWorkspace({ from, to });
    expect(files.find((f) => f.file === 'SOUL.md')?.action).toBe('refused');
    expect(await readdir(to)).not.toContain('SOUL.md');
  });
});

describe('Hermes importer', () => {
  const MEMORY = 'Operator runs a BTC basis trade\n§\nPrefers Binance for spot\nand OKX for perps\n§\nOperator runs a BTC basis trade\n§\nAPI key sk-abcdefghijklmnopqrstuvwxyz123456\n';
  const USER = 'Name: Dana\n§\nTimezone: Europe/Berlin\n';

  async function hermesHome(): Promise<string> {
    const home = await tempDir('hermes-');
    await mkdir(join(home, 'memories'));
    await writeFile(join(home, 'memories', 'MEMORY.md'), MEMORY);
    await writeFile(join(home, 'memories', 'USER.md'), USER);
    return home;
  }

  it('splits entries on § lines', () => {
    expect(parseHermesEntries('a\n§\nb\nc\n§\n\n§\nd')).toEqual(['a', 'b\nc', 'd']);
    expect(parseHermesEntries('§\nonly\n')).toEqual(['only']);
  });

  it('appends deduplicated entries to MEMORY.md sections and refuses secrets', async () => {
    const home = await hermesHome();
    const ws = createWorkspace({ dir: await tempDir(), now: fixedNow });
    await ws.seed();
    const before = await readFile(join(ws.dir, 'MEMORY.md'), 'utf8');
    const r = await importHermesMemory({ from: home, to: ws.dir, now: fixedNow });
    expect(r.imported).toBe(4);
    expect(r.refused).toEqual([{ source: 'hermes:MEMORY.md', pattern: 'openai_key' }]);
    const after = await readFile(join(ws.dir, 'MEMORY.md'), 'utf8');
    expect(after.startsWith(before)).toBe(true);
    expect(after).toContain('## Imported from Hermes 2026-03-02');
    expect(after).toContain('### Notes (Hermes MEMORY.md)\n\n- Operator runs a BTC basis trade\n- Prefers Binance for spot\n  and OKX for perps');
    expect(after).toContain('### User profile (Hermes USER.md)\n\n- Name: Dana\n- Timezone: Europe/Berlin');
    expect(after).not.toContain('sk-abc');
    const again = await importHermesMemory({ from: join(home, 'memories'), to: ws.dir, now: fixedNow });
    expect(again).toMatchObject({ imported: 0, duplicates: 4 });
    expect(await readFile(join(ws.dir, 'MEMORY.md'), 'utf8')).toBe(after);
  });

  it('writes memory rows through a sink', async () => {
    const rows: ImportedMemoryRow[] = [];
    const r = await importHermesMemory({ from: await hermesHome(), sink: { write: (row) => void rows.push(row) } });
    expect(r.imported).toBe(4);
    expect(rows).toContainEqual({ category: 'fact', content: 'Prefers Binance for spot\nand OKX for perps', source: 'hermes:MEMORY.md' });
    expect(rows).toContainEqual({ category: 'profile', content: 'Timezone: Europe/Berlin', source: 'hermes:USER.md' });
    await expect(importHermesMemory({ from: '/nowhere' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});
