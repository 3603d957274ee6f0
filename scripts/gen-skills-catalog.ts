/**
 * Writes docs/skills-catalog.md from the skills, so the page never drifts from the code.
 *
 * Sources (all optional, combined, first wins on a duplicate id):
 *   --module <file>   a module exporting `skills` (or a default export): Skill / SkillDefinition[]
 *   --dir <folder>    a folder of SKILL.md packages (repeatable); vendored packages keep their licence
 *   default (no --module/--dir): the `skills/` folder when it exists
 *   --out <file>      default docs/skills-catalog.md
 *   --check           exit 1 when the file on disk differs (for CI)
 *
 * Run: npx tsx scripts/gen-skills-catalog.ts [--check]
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { defineSkill, isSkill, loadSkillDirectories, renderSkillsCatalogPage, type Skill, type SkillDefinition } from '../src/index';

const args = process.argv.slice(2);
const values = (flag: string) => args.flatMap((a, i) => (a === flag && args[i + 1] ? [args[i + 1] as string] : []));
const out = resolve(values('--out')[0] ?? 'docs/skills-catalog.md');
const check = args.includes('--check');

const skills = new Map<string, Skill>();
const add = (s: Skill) => {
  if (!skills.has(s.id)) skills.set(s.id, s);
};
let problems = 0;

for (const mod of values('--module')) {
  const m = (await import(pathToFileURL(resolve(mod)).href)) as { skills?: unknown; default?: unknown };
  const list = (m.skills ?? m.default) as ReadonlyArray<Skill | SkillDefinition> | undefined;
  if (!Array.isArray(list)) throw new Error(`${mod}: expected an exported "skills" array (or a default export)`);
  for (const item of list) add(isSkill(item) ? item : defineSkill(item as SkillDefinition));
}
const dirs = values('--dir');
const defaults = dirs.length === 0 && values('--module').length === 0;
for (const dir of defaults ? ['skills'].filter((d) => existsSync(d)) : dirs) {
  const r = loadSkillDirectories([dir]);
  for (const i of r.issues) {
    console.error(`${i.severity}: ${i.file}: ${i.field}: ${i.message}`);
    if (i.severity === 'error') problems++;
  }
  r.skills.forEach(add);
}

const page = renderSkillsCatalogPage([...skills.values()], { generator: 'npm run docs:skills' });
if (check) {
  const current = existsSync(out) ? readFileSync(out, 'utf8') : '';
  if (current !== page) {
    console.error(`${out} is out of date; run npm run docs:skills`);
    process.exit(1);
  }
  console.log(`${out} is up to date (${skills.size} skills).`);
} else {
  writeFileSync(out, page);
  console.log(`Wrote ${out} (${skills.size} skills${problems ? `, ${problems} invalid package(s) skipped` : ''}).`);
}
