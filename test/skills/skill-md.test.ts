import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSkillRegistry, loadSkillDirectories, loadSkillPackage, parseSkillMd } from '@minara/agent';
import { toolRegistry } from './helpers';

const PERPS = `---
name: minara-perps
description: "Perps: open, close, monitor positions on Hyperliquid"
license: MIT
metadata:
  minara:
    id: minara.perps
    priority: 40
    tool_names: [open_perps_position, get_price]
    summary: Preview, quote funding and liquidation price, then confirm.
    routing:
      keywords: [perp, perps, long, short, 合约, 做多]
      negative_keywords: [paper trade]
      lifecycle_stages: [decide, manage]
      asset_classes: [perps, crypto_major]
      co_activate: [market.watch]
    conditions:
      requires_tools: [open_perps_position]
---
# Perps

Always preview first. Files live in {baseDir}/references.
`;

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'skills-md-'));
});
afterEach(() => {
  /* temp dirs are left to the OS */
});

function pkg(name: string, text: string, at = root): string {
  const dir = join(at, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), text);
  return dir;
}

describe('parseSkillMd', () => {
  it('maps frontmatter (snake_case on disk) to a camelCase skill', () => {
    const dir = pkg('minara-perps', PERPS);
    mkdirSync(join(dir, 'references'));
    writeFileSync(join(dir, 'references', 'funding.md'), '# Funding');
    writeFileSync(join(dir, 'references', 'script.sh'), 'rm -rf /');
    const { skill, issues } = loadSkillPackage(dir);
    expect(issues).toEqual([]);
    expect(skill).toMatchObject({
      id: 'minara.perps',
      description: 'Perps: open, close, monitor positions on Hyperliquid',
      priority: 40,
      toolNames: ['open_perps_position', 'get_price'],
      summary: 'Preview, quote funding and liquidation price, then confirm.',
      routing: {
        keywords: ['perp', 'perps', 'long', 'short', '合约', '做多'],
        negativeKeywords: ['paper trade'],
        lifecycleStages: ['decide', 'manage'],
        assetClasses: ['perps', 'crypto_major'],
        coActivate: ['market.watch'],
      },
      conditions: { requiresTools: ['open_perps_position'] },
      origin: { kind: 'directory', file: join(dir, 'SKILL.md') },
    });
    expect(skill?.prompt).toBe(`# Perps\n\nAlways preview first. Files live in ${dir}/references.`);
    expect(skill?.references).toEqual([{ name: 'references/funding.md', path: join(dir, 'references', 'funding.md') }]);
  });

  it('honours OpenClaw gating: requires.env/bins, os, always, and JSON metadata', () => {
    const text = (meta: string) => `---\nname: weather\ndescription: Weather lookups\nmetadata: ${meta}\n---\nUse curl.\n`;
    const gated = parseSkillMd(text('{"openclaw":{"requires":{"bins":["curl"],"env":["WEATHER_KEY"]},"os":["darwin","linux"]}}'), { file: 'x/SKILL.md' }).skill!;
    expect(gated.conditions).toMatchObject({ requiresBins: ['curl'], requiresEnv: ['WEATHER_KEY'], platforms: ['darwin', 'linux'] });
    const always = parseSkillMd(text('{"clawdbot":{"always":true,"requires":{"bins":["curl"],"config":["browser.enabled"]}}}'), { file: 'x/SKILL.md' });
    expect(always.skill?.conditions.requiresBins).toEqual([]);
    expect(always.hiddenReason).toBeUndefined();
    const config = parseSkillMd(text('{"openclaw":{"requires":{"config":["browser.enabled"]}}}'), { file: 'x/SKILL.md' });
    expect(config.hiddenReason).toBe('requires_config:browser.enabled');
    expect(parseSkillMd(text('{"openclaw":{"requires":{"config":["browser.enabled"]}}}'), { file: 'x' }, { config: { browser: { enabled: true } } }).hiddenReason).toBeUndefined();
    // The registry applies env / bins / os.
    const tools = toolRegistry();
    expect(createSkillRegistry({ skills: [gated], tools, env: {}, platform: 'linux', hasBin: () => true }).hidden()).toEqual([{ id: 'weather', reason: 'requires_env:WEATHER_KEY' }]);
    expect(createSkillRegistry({ skills: [gated], tools, env: { WEATHER_KEY: 'k' }, platform: 'win32', hasBin: () => true }).hidden()[0]?.reason).toBe('platform:win32');
    expect(createSkillRegistry({ skills: [gated], tools, env: { WEATHER_KEY: 'k' }, platform: 'linux', hasBin: () => false }).hidden()[0]?.reason).toBe('requires_bins:curl');
    expect(createSkillRegistry({ skills: [gated], tools, env: { WEATHER_KEY: 'k' }, platform: 'linux', hasBin: () => true }).has('weather')).toBe(true);
  });

  it('honours Hermes platforms and metadata.hermes conditions', () => {
    const { skill } = parseSkillMd(
      `---\nname: pdf-tools\ndescription: PDF helpers\nversion: 1.2.0\nplatforms: [macos, linux]\nmetadata:\n  hermes:\n    category: documents\n    tags: [pdf]\n    requires_toolsets: [documents]\n    fallback_for_tools: [pdf_extract]\n---\n## When to Use\nPDFs.\n`,
      { file: 'pdf-tools/SKILL.md' },
    );
    expect(skill).toMatchObject({ id: 'pdf-tools', category: 'documents', conditions: { platforms: ['macos', 'linux'], requiresToolsets: ['documents'], fallbackForTools: ['pdf_extract'] } });
    expect(skill?.routing.keywords).toEqual(['pdf tools']);
    const reg = createSkillRegistry({ skills: [skill!], tools: toolRegistry(), platform: 'darwin' });
    expect(reg.has('pdf-tools')).toBe(true);
    expect(reg.explain({ message: 'pdf' })[0]?.reasons).toEqual(['cond:requires_toolsets:documents']);
  });

  it('maps disable-model-invocation to manual activation', () => {
    const { skill } = parseSkillMd('---\nname: deploy\ndescription: Deploy\ndisable-model-invocation: true\n---\nDeploy.\n', { file: 'f' });
    expect(skill?.activation).toBe('manual');
  });

  it.each([
    ['no frontmatter', '# Hello\n', 'frontmatter', /missing/],
    ['unclosed', '---\nname: a\ndescription: b\n', 'frontmatter', /not closed/],
    ['bad yaml', '---\nname: [a\ndescription: b\n---\nx\n', 'frontmatter', /invalid YAML/],
    ['no name', '---\ndescription: b\n---\nx\n', 'name', /required/],
    ['no description', '---\nname: a\n---\nx\n', 'description', /required/],
    ['empty body', '---\nname: a\ndescription: b\n---\n\n', '(body)', /empty/],
    ['bad keywords', '---\nname: a\ndescription: b\nmetadata:\n  minara:\n    routing:\n      keywords: 5\n---\nx\n', 'metadata.minara.routing.keywords', /list of strings/],
    ['bad stage', '---\nname: a\ndescription: b\nmetadata:\n  minara:\n    routing:\n      lifecycle_stages: [browse]\n---\nx\n', 'metadata.minara.routing.lifecycle_stages[0]', /one of discover/],
    ['bad priority', '---\nname: a\ndescription: b\nmetadata:\n  minara:\n    priority: high\n---\nx\n', 'metadata.minara.priority', /number/],
    ['bad metadata json', '---\nname: a\ndescription: b\nmetadata: "{oops"\n---\nx\n', 'metadata', /not valid JSON/],
  ])('%s → names the field', (_label, text, field, message) => {
    const r = parseSkillMd(text, { file: '/skills/a/SKILL.md' });
    expect(r.skill).toBeUndefined();
    const e = r.issues.find((i) => i.severity === 'error');
    expect(e).toMatchObject({ file: '/skills/a/SKILL.md', field });
    expect(e?.message).toMatch(message);
  });

  it('refuses a custom YAML tag as an issue of the file, and prints nothing to stderr', () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.message);
    process.on('warning', onWarning);
    try {
      const r = parseSkillMd('---\nname: tagged\ndescription: !!js/function "function () { return 1 }"\n---\nBody.\n', { file: '/tmp/tagged/SKILL.md', dir: '/tmp/tagged' });
      expect(r.skill).toBeUndefined();
      expect(r.issues).toEqual([expect.objectContaining({ field: 'frontmatter', severity: 'error', message: expect.stringMatching(/^YAML: .*js\/function.*no custom tags/) })]);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).toEqual([]);
  });

  it('warns about non-portable names and long descriptions', () => {
    const r = parseSkillMd(`---\nname: My_Skill\ndescription: ${'d'.repeat(90)}\n---\nx\n`, { file: 'f', dir: '/s/other' });
    expect(r.skill).toBeDefined();
    expect(r.issues.map((i) => [i.field, i.severity])).toEqual([
      ['name', 'warning'],
      ['description', 'warning'],
    ]);
  });
});

describe('loadSkillDirectories', () => {
  it('loads every valid package, reports bad ones, and never stops on one', () => {
    pkg('minara-perps', PERPS);
    pkg('broken', '---\nname: broken\n---\nbody\n');
    pkg('deep-research', '---\nname: deep-research\ndescription: Deep research reports\n---\nPlan, search, cite.\n', join(root, 'research'));
    pkg('dup', '---\nname: deep-research\ndescription: Duplicate\n---\nx\n', join(root, 'zzz'));
    const r = loadSkillDirectories([root, join(root, 'missing')]);
    expect(r.skills.map((s) => s.id)).toEqual(['deep-research', 'minara.perps']);
    expect(r.issues.filter((i) => i.severity === 'error')).toEqual([
      { file: join(root, 'broken', 'SKILL.md'), field: 'description', message: 'is required', severity: 'error' },
    ]);
    expect(r.issues.some((i) => i.severity === 'warning' && i.message.includes('duplicate skill id "deep-research"'))).toBe(true);
  });

  it('refuses a SKILL.md that links outside its package', () => {
    const outside = mkdtempSync(join(tmpdir(), 'outside-'));
    writeFileSync(join(outside, 'SKILL.md'), PERPS);
    mkdirSync(join(root, 'evil'));
    symlinkSync(join(outside, 'SKILL.md'), join(root, 'evil', 'SKILL.md'));
    const r = loadSkillPackage(join(root, 'evil'));
    expect(r.skill).toBeUndefined();
    expect(r.issues[0]?.message).toMatch(/outside its package/);
  });
});
