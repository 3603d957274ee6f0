/**
 * Load skills from SKILL.md packages: `<root>/<name>/SKILL.md` (and Hermes' `<root>/<category>/<name>/`),
 * with `references/*.md` beside it. Nothing in a package is ever executed. A malformed file yields an
 * issue naming the file and field and never stops the other packages from loading.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join, relative, sep } from 'node:path';
import { yaml } from '../util/lazy-yaml';
import { defineSkill, SkillDefinitionError } from './define-skill';
import type { HiddenSkill } from './registry';
import { compareIds } from './router';
import { diskField, mapFrontmatter } from './skill-md-frontmatter';
import type { Skill, SkillOrigin, SkillReference } from './types';

/** Largest SKILL.md read. */
const MAX_SKILL_MD_BYTES = 256 * 1024;

/** A problem found while loading one package. */
export interface SkillLoadIssue {
  /** The SKILL.md (or folder) it concerns. */
  readonly file: string;
  /** The on-disk field (`metadata.minara.routing.keywords[2]`), `frontmatter`, or `(file)`. */
  readonly field: string;
  readonly message: string;
  readonly severity: 'error' | 'warning';
}

/** Options of the loaders. */
export interface SkillLoadOptions {
  /** Origin kind recorded on each skill. @default 'directory' */
  readonly origin?: SkillOrigin['kind'] | undefined;
  /** Host config for OpenClaw `requires.config` (dotted paths must be truthy). @default {} */
  readonly config?: Readonly<Record<string, unknown>> | undefined;
  /** Licence per package folder (filled by the external-skills manager). */
  readonly licenseFor?: ((dir: string) => { spdx: string; copyleft: boolean } | undefined) | undefined;
}

/** The result of parsing one SKILL.md text. */
export interface ParsedSkillMd {
  readonly skill?: Skill | undefined;
  readonly issues: SkillLoadIssue[];
  /** Set when the package is valid but gated out at load time (`requires_config:…`). */
  readonly hiddenReason?: string | undefined;
  /** Frontmatter `license`, when present. */
  readonly license?: string | undefined;
}

/** The result of loading folders of packages. */
export interface SkillLoadResult {
  /** Valid skills, sorted by id; the first root wins on a duplicate id. */
  readonly skills: Skill[];
  readonly issues: SkillLoadIssue[];
  /** Valid packages gated out at load time. */
  readonly hidden: HiddenSkill[];
}

/**
 * Parse one SKILL.md text. `file` names it in issues; `dir` is its package folder (for `{baseDir}`).
 *
 * @example
 * ```ts
 * const { skill, issues } = parseSkillMd(readFileSync(file, 'utf8'), { file, dir });
 * ```
 */
export function parseSkillMd(
  text: string,
  where: { file: string; dir?: string | undefined; references?: readonly SkillReference[] | undefined },
  options: SkillLoadOptions = {},
): ParsedSkillMd {
  const file = where.file;
  const issue = (field: string, message: string, severity: 'error' | 'warning' = 'error'): SkillLoadIssue => ({ file, field, message, severity });
  const src = text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (!src.startsWith('---\n')) return { issues: [issue('frontmatter', 'missing: the file must start with a "---" line, YAML frontmatter, and a closing "---" line')] };
  const end = src.indexOf('\n---', 3);
  const after = end < 0 ? undefined : src[end + 4];
  if (end < 0 || (after !== undefined && after !== '\n')) return { issues: [issue('frontmatter', 'not closed: add a "---" line after the frontmatter')] };
  let fm: unknown;
  try {
    // parseDocument, not parse: `parse` prints what it warns about (an unknown tag such as `!!js/function`) to the
    // host process's stderr. Here a warning is an issue of the file, and an error refuses it as before.
    const doc = yaml().parseDocument(src.slice(4, end + 1), { prettyErrors: true, uniqueKeys: true });
    const [error] = doc.errors;
    if (error) throw error;
    const [warning] = doc.warnings;
    if (warning) return { issues: [issue('frontmatter', `YAML: ${warning.message.split('\n')[0]} (only plain YAML is read: no custom tags)`)] };
    fm = doc.toJS();
  } catch (e) {
    return { issues: [issue('frontmatter', `invalid YAML: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`)] };
  }
  if (typeof fm !== 'object' || fm === null || Array.isArray(fm)) return { issues: [issue('frontmatter', 'expected a YAML mapping with name and description')] };
  const dir = where.dir ?? '';
  const mapped = mapFrontmatter(fm as Record<string, unknown>, dir ? basename(dir) : '');
  const issues = mapped.problems.map((p) => issue(p.field, p.message, p.severity));
  if (!mapped.definition) return { issues, license: mapped.license };
  const body = src.slice(end + 4).replace(/^\n+/, '').trimEnd();
  if (body === '') return { issues: [...issues, issue('(body)', 'is empty: the body after the frontmatter is the playbook')], license: mapped.license };
  const prompt = dir ? body.split('{baseDir}').join(dir) : body;
  const lic = options.licenseFor?.(dir);
  const origin: SkillOrigin = {
    kind: options.origin ?? 'directory',
    file,
    ...(lic ? { license: lic.spdx, copyleft: lic.copyleft } : {}),
  };
  let skill: Skill;
  try {
    skill = defineSkill({ ...mapped.definition, prompt, references: where.references ?? [], origin });
  } catch (e) {
    if (e instanceof SkillDefinitionError) {
      return { issues: [...issues, ...e.issues.map((i) => issue(diskField(i.field), i.message, i.severity))], license: mapped.license };
    }
    throw e;
  }
  issues.push(...skill.warnings.map((w) => issue(diskField(w.replace(/^skill "[^"]*": /, '').split(' ')[0] ?? ''), w, 'warning')));
  const missingConfig = mapped.requiresConfig.filter((path) => !truthyPath(options.config ?? {}, path));
  return {
    skill,
    issues,
    license: mapped.license,
    ...(missingConfig.length > 0 ? { hiddenReason: `requires_config:${missingConfig.join(',')}` } : {}),
  };
}

/** Load one package folder (its SKILL.md and `references/*.md`). */
export function loadSkillPackage(dir: string, options: SkillLoadOptions = {}): ParsedSkillMd {
  const file = join(dir, 'SKILL.md');
  const fail = (field: string, message: string): ParsedSkillMd => ({ issues: [{ file, field, message, severity: 'error' }] });
  let real: string;
  let realDir: string;
  try {
    realDir = realpathSync(dir);
    real = realpathSync(file);
  } catch {
    return fail('(file)', 'not found');
  }
  if (!isInside(realDir, real)) return fail('(file)', 'is a link that resolves outside its package folder; refused');
  const st = statSync(real);
  if (!st.isFile()) return fail('(file)', 'is not a regular file');
  if (st.size > MAX_SKILL_MD_BYTES) return fail('(file)', `is ${st.size} bytes; the limit is ${MAX_SKILL_MD_BYTES}`);
  let text: string;
  try {
    text = readFileSync(real, 'utf8');
  } catch (e) {
    return fail('(file)', `cannot be read: ${e instanceof Error ? e.message : String(e)}`);
  }
  return parseSkillMd(text, { file, dir, references: listReferences(dir, realDir) }, options);
}

function listReferences(dir: string, realDir: string): SkillReference[] {
  const refDir = join(dir, 'references');
  if (!existsSync(refDir)) return [];
  const out: SkillReference[] = [];
  try {
    for (const name of readdirSync(refDir).sort(compareIds)) {
      if (!/\.(md|markdown|txt)$/i.test(name)) continue;
      const path = join(refDir, name);
      try {
        const real = realpathSync(path);
        if (isInside(realDir, real) && statSync(real).isFile()) out.push({ name: `references/${name}`, path });
      } catch {
        /* a dangling link is skipped */
      }
    }
  } catch {
    return [];
  }
  return out;
}

/**
 * Load every package under `dirs`: a root that is itself a package, its child folders, and grandchild
 * folders (Hermes categories). Sorted by path, so the result does not depend on the file system's order.
 *
 * @example
 * ```ts
 * const { skills, issues } = loadSkillDirectories(['./skills', `${dataDir}/skills/external`]);
 * for (const i of issues) console.warn(`${i.file}: ${i.field}: ${i.message}`);
 * registry.register(skills);
 * ```
 */
export function loadSkillDirectories(dirs: readonly string[], options: SkillLoadOptions = {}): SkillLoadResult {
  const skills = new Map<string, Skill>();
  const issues: SkillLoadIssue[] = [];
  const hidden: HiddenSkill[] = [];
  for (const root of dirs) {
    if (!existsSync(root)) continue;
    for (const dir of findPackages(root)) {
      const r = loadSkillPackage(dir, options);
      issues.push(...r.issues);
      if (!r.skill) continue;
      if (skills.has(r.skill.id) || hidden.some((h) => h.id === r.skill?.id)) {
        issues.push({ file: join(dir, 'SKILL.md'), field: 'metadata.minara.id', message: `duplicate skill id "${r.skill.id}"; the earlier package wins`, severity: 'warning' });
      } else if (r.hiddenReason) hidden.push({ id: r.skill.id, reason: r.hiddenReason });
      else skills.set(r.skill.id, r.skill);
    }
  }
  return {
    skills: [...skills.values()].sort((a, b) => compareIds(a.id, b.id)),
    issues,
    hidden: hidden.sort((a, b) => compareIds(a.id, b.id)),
  };
}

function findPackages(root: string): string[] {
  if (existsSync(join(root, 'SKILL.md'))) return [root];
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    return [];
  }
  const out: string[] = [];
  const children = (dir: string) => {
    try {
      return readdirSync(dir, { withFileTypes: true })
        .filter((d) => (d.isDirectory() || d.isSymbolicLink()) && !d.name.startsWith('.') && d.name !== 'node_modules')
        .map((d) => join(dir, d.name))
        .sort(compareIds);
    } catch {
      return [];
    }
  };
  for (const child of children(root)) {
    if (!safeDir(realRoot, child)) continue;
    if (existsSync(join(child, 'SKILL.md'))) out.push(child);
    else for (const grand of children(child)) if (safeDir(realRoot, grand) && existsSync(join(grand, 'SKILL.md'))) out.push(grand);
  }
  return out;
}

function safeDir(realRoot: string, dir: string): boolean {
  try {
    const real = realpathSync(dir);
    return isInside(realRoot, real) && statSync(real).isDirectory();
  } catch {
    return false;
  }
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith(sep) && !/^[A-Za-z]:/.test(rel));
}

function truthyPath(config: Readonly<Record<string, unknown>>, path: string): boolean {
  let cur: unknown = config;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return false;
    cur = (cur as Record<string, unknown>)[part];
  }
  return Boolean(cur);
}
