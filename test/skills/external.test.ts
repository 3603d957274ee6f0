import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createExternalSkillsManager, createSkillRegistry, detectLicense, MinaraError } from '@minara/agent';
import { toolRegistry } from './helpers';

const MIT = `MIT License\n\nCopyright (c) 2025 Acme\n\nPermission is hereby granted, free of charge, to any person obtaining a copy\nof this software... The above copyright notice and this permission notice shall be included in all\ncopies or substantial portions of the Software.\n`;
const BSD3 = `Copyright (c) 2024, Acme. All rights reserved.\n\nRedistribution and use in source and binary forms, with or without\nmodification, are permitted provided that ...\n3. Neither the name of the copyright holder nor the names of its contributors may be used\n`;
const GPL3 = `                    GNU GENERAL PUBLIC LICENSE\n                       Version 3, 29 June 2007\n`;
const PROPRIETARY = `Copyright (c) 2025 Anthropic, PBC. All rights reserved.\n\nLICENSE: Use of these materials is governed by your agreement with Anthropic.\n`;

const skillMd = (name: string, description = 'Watch a market and alert', extra = '') =>
  `---\nname: ${name}\ndescription: ${description}\n${extra}metadata:\n  minara:\n    routing:\n      keywords: [watch, alert]\n---\nWatch prices; alert on moves.\n`;

function tmp(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

function localPackage(name: string, license?: string, extra = ''): string {
  const dir = join(tmp('src-'), name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), skillMd(name, undefined, extra));
  if (license !== undefined) writeFileSync(join(dir, 'LICENSE'), license);
  return dir;
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], { cwd, stdio: 'pipe' }).toString();

async function rejection(p: Promise<unknown>): Promise<MinaraError> {
  try {
    await p;
  } catch (e) {
    if (MinaraError.isInstance(e)) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('detectLicense', () => {
  it.each([
    [MIT, 'MIT', 'permissive'],
    [BSD3, 'BSD-3-Clause', 'permissive'],
    ['                                 Apache License\n                           Version 2.0, January 2004\n', 'Apache-2.0', 'permissive'],
    ['Permission to use, copy, modify, and/or distribute this software for any purpose with or without fee is hereby granted, provided that the above copyright notice and this permission notice appear in all copies.', 'ISC', 'permissive'],
    ['This is free and unencumbered software released into the public domain.', 'Unlicense', 'permissive'],
    ['Creative Commons Legal Code\n\nCC0 1.0 Universal', 'CC0-1.0', 'permissive'],
    ['Mozilla Public License Version 2.0\n==================================', 'MPL-2.0', 'copyleft'],
    [GPL3, 'GPL-3.0', 'copyleft'],
    ['GNU AFFERO GENERAL PUBLIC LICENSE\nVersion 3, 19 November 2007', 'AGPL-3.0', 'copyleft'],
    ['GNU LESSER GENERAL PUBLIC LICENSE\nVersion 3, 29 June 2007', 'LGPL-3.0', 'copyleft'],
    ['// SPDX-License-Identifier: MIT OR Apache-2.0', 'MIT OR Apache-2.0', 'permissive'],
    [PROPRIETARY, 'Proprietary', 'refused'],
    ['Licensed for non-commercial use only.', 'Proprietary', 'refused'],
    ['Do whatever, but ask me first.', 'UNKNOWN', 'refused'],
  ])('%#: %s…', (text, spdx, category) => {
    expect(detectLicense(text)).toMatchObject({ spdx, category });
  });
});

describe('external skills from a local path', () => {
  it('adds, records the licence, lists, loads into the registry, removes', async () => {
    const dir = tmp('ext-');
    const manager = createExternalSkillsManager({ dir, now: () => new Date('2026-01-02T03:04:05Z') });
    const src = localPackage('market-watch', MIT);
    symlinkSync('/etc/passwd', join(src, 'passwd-link'));
    const record = await manager.add(src);
    expect(record).toMatchObject({
      id: 'market-watch',
      source: { kind: 'path', path: src },
      license: { spdx: 'MIT', category: 'permissive', copyleft: false, file: 'LICENSE' },
      installedAt: '2026-01-02T03:04:05.000Z',
      removedLinks: ['passwd-link'],
    });
    expect(existsSync(join(dir, 'market-watch', 'passwd-link'))).toBe(false);
    expect(JSON.parse(readFileSync(join(dir, 'market-watch', '.minara-skill.json'), 'utf8'))).toEqual(record);
    expect(manager.list()).toEqual([record]);

    // External skills go through the same registry and router as built-ins.
    const loaded = manager.load();
    expect(loaded.issues).toEqual([]);
    expect(loaded.skills[0]?.origin).toMatchObject({ kind: 'external', license: 'MIT', copyleft: false });
    const registry = createSkillRegistry({ skills: loaded.skills, tools: toolRegistry() });
    expect(registry.route({ message: 'alert me on BTC' })[0]).toMatchObject({ id: 'market-watch', reasons: ['kw:alert'] });

    await expect(manager.add(src)).rejects.toThrow(/already installed/);
    expect(manager.remove('market-watch')).toBe(true);
    expect(manager.remove('market-watch')).toBe(false);
    expect(manager.list()).toEqual([]);
  });

  it('allows GPL-family licences but flags them copyleft', async () => {
    const manager = createExternalSkillsManager({ dir: tmp('ext-') });
    const r = await manager.add(localPackage('gpl-skill', GPL3));
    expect(r.license).toMatchObject({ spdx: 'GPL-3.0', category: 'copyleft', copyleft: true });
  });

  it('refuses proprietary, unknown and missing licences with a clear message', async () => {
    const dir = tmp('ext-');
    const manager = createExternalSkillsManager({ dir });
    const proprietary = await rejection(manager.add(localPackage('office-docx', PROPRIETARY)));
    expect(proprietary.code).toBe('SKILL_LICENSE_REFUSED');
    expect(proprietary.message).toMatch(/licence is Proprietary \(LICENSE says ".*All rights reserved\."\)/);
    const field = await rejection(manager.add(localPackage('office-pptx', MIT, 'license: Proprietary. LICENSE.txt has complete terms\n')));
    expect(field.message).toMatch(/SKILL.md#license/);
    const none = await rejection(manager.add(localPackage('no-licence')));
    expect(none.message).toMatch(/not recognised \(no LICENSE file and no license field in SKILL.md\)/);
    expect(manager.list()).toEqual([]);
    // A permissive SPDX id in the frontmatter is enough without a file.
    expect((await manager.add(localPackage('spdx-only', undefined, 'license: Apache-2.0\n'))).license.spdx).toBe('Apache-2.0');
  });

  it('refuses an invalid package and names the field', async () => {
    const src = join(tmp('src-'), 'bad');
    mkdirSync(src);
    writeFileSync(join(src, 'SKILL.md'), '---\nname: bad\n---\nbody\n');
    writeFileSync(join(src, 'LICENSE'), MIT);
    const e = await rejection(createExternalSkillsManager({ dir: tmp('ext-') }).add(src));
    expect(e.code).toBe('SKILL_INVALID');
    expect(e.message).toMatch(/description: is required/);
  });

  it('refuses non-git transports and option-like sources', async () => {
    const manager = createExternalSkillsManager({ dir: tmp('ext-') });
    await expect(manager.add('ext::sh -c touch% /tmp/pwned')).rejects.toThrow(/not a plain git URL/);
    await expect(manager.add('--upload-pack=evil')).rejects.toThrow(/not a plain git URL/);
  });
});

describe('external skills from git', () => {
  function makeRepo(): string {
    const repo = tmp('repo-');
    git(repo, 'init', '--quiet');
    writeFileSync(join(repo, 'LICENSE'), MIT);
    mkdirSync(join(repo, 'skills', 'alpha'), { recursive: true });
    writeFileSync(join(repo, 'skills', 'alpha', 'SKILL.md'), skillMd('alpha', 'Alpha v1'));
    git(repo, 'add', '-A');
    git(repo, 'commit', '--quiet', '-m', 'v1');
    return repo;
  }

  it('clones with the system git, records the commit, upgrades and re-checks the licence', async () => {
    const repo = makeRepo();
    let clock = 0;
    const manager = createExternalSkillsManager({ dir: tmp('ext-'), now: () => new Date(Date.UTC(2026, 0, 1) + clock++ * 1000) });

    const noRoot = await rejection(manager.add(`file://${repo}`));
    expect(noRoot.message).toContain(`file://${repo}#skills/alpha`);

    const v1 = await manager.add(`file://${repo}#skills/alpha`);
    expect(v1).toMatchObject({ id: 'alpha', description: 'Alpha v1', source: { kind: 'git', url: `file://${repo}`, subdir: 'skills/alpha' }, license: { spdx: 'MIT', file: 'LICENSE (repository root)' } });
    expect((v1.source as { commit?: string }).commit).toMatch(/^[0-9a-f]{40}$/);
    expect(existsSync(join(manager.dir, 'alpha', '.git'))).toBe(false);

    writeFileSync(join(repo, 'skills', 'alpha', 'SKILL.md'), skillMd('alpha', 'Alpha v2'));
    git(repo, 'commit', '--quiet', '-am', 'v2');
    const v2 = await manager.upgrade('alpha');
    expect(v2.description).toBe('Alpha v2');
    expect(v2.installedAt).toBe(v1.installedAt);
    expect(v2.updatedAt > v1.updatedAt).toBe(true);
    expect((v2.source as { commit?: string }).commit).not.toBe((v1.source as { commit?: string }).commit);

    // Upstream goes proprietary: the upgrade is refused and the installed version stays.
    writeFileSync(join(repo, 'LICENSE'), PROPRIETARY);
    git(repo, 'commit', '--quiet', '-am', 'relicense');
    const refused = await rejection(manager.upgrade('alpha'));
    expect(refused.code).toBe('SKILL_LICENSE_REFUSED');
    expect(manager.list()[0]?.description).toBe('Alpha v2');
    expect(manager.load().skills.map((s) => s.description)).toEqual(['Alpha v2']);

    await expect(manager.upgrade('nope')).rejects.toThrow(/No external skill "nope" is installed.*Installed: alpha/);
  });

  it('reports a failed clone clearly', async () => {
    const manager = createExternalSkillsManager({ dir: tmp('ext-') });
    await expect(manager.add(`file://${tmp('missing-')}/nothing.git`)).rejects.toThrow(/git clone of .* failed/);
  });
});
