/**
 * External (vendored) skills: add a SKILL.md package from a local path or a git URL, check its licence,
 * record it in `.minara-skill.json`, list, upgrade and remove. Nothing from a package is executed:
 * git runs with hooks disabled and the `ext::` transport forbidden, and symlinks are removed.
 */
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import { MinaraError } from '../errors/minara-error';
import { compareIds } from './router';
import { detectPackageLicense } from './external-license';
import type { LicenseDetection } from './license';
import { loadSkillDirectories, loadSkillPackage, type SkillLoadResult } from './skill-md';

/** `git`, run only by `skills add`/`upgrade`: node:child_process loads then, not with the package. */
async function execFileAsync(file: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; timeout: number; windowsHide?: boolean }): Promise<{ stdout: string; stderr: string }> {
  const { execFile } = await import('node:child_process');
  return promisify(execFile)(file, args, { ...options, encoding: 'utf8' });
}
const RECORD = '.minara-skill.json';
const SAFE_ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** Where a package came from. */
export type ExternalSkillSource =
  | { readonly kind: 'git'; readonly url: string; readonly subdir?: string | undefined; readonly commit?: string | undefined }
  | { readonly kind: 'path'; readonly path: string };

/** The `.minara-skill.json` record of one vendored package. */
export interface ExternalSkillRecord {
  readonly id: string;
  readonly name: string;
  readonly description: string;
  readonly source: ExternalSkillSource;
  readonly license: { readonly spdx: string; readonly category: 'permissive' | 'copyleft'; readonly copyleft: boolean; readonly file?: string | undefined };
  readonly installedAt: string;
  readonly updatedAt: string;
  /** Symlinks removed from the package on install (never followed). */
  readonly removedLinks?: readonly string[] | undefined;
}

/** Options of {@link createExternalSkillsManager}. */
export interface ExternalSkillsManagerOptions {
  /** The external-skills directory, e.g. `${dataDir}/skills/external`. */
  readonly dir: string;
  /** The git executable. @default 'git' */
  readonly git?: string | undefined;
  /** Clock for the record's timestamps. @default () => new Date() */
  readonly now?: (() => Date) | undefined;
  /** Git timeout in ms. @default 120000 */
  readonly timeoutMs?: number | undefined;
}

/** Manage vendored SKILL.md packages. */
export interface ExternalSkillsManager {
  readonly dir: string;
  /**
   * Add from a local folder or a git URL (`https://…`, `git@host:repo`, `file://…`; append `#sub/dir` for
   * a package inside a repository). Refuses proprietary or unknown licences (`SKILL_LICENSE_REFUSED`)
   * and invalid packages (`SKILL_INVALID`).
   */
  add(source: string, options?: { force?: boolean | undefined }): Promise<ExternalSkillRecord>;
  /** Installed packages, sorted by id. */
  list(): ExternalSkillRecord[];
  /** Re-fetch from the recorded source, re-check the licence and the package, then swap atomically. */
  upgrade(id: string): Promise<ExternalSkillRecord>;
  /** Delete an installed package; true when it existed. */
  remove(id: string): boolean;
  /** Load the installed packages as skills (same registry, router and gate as built-ins). */
  load(options?: { config?: Readonly<Record<string, unknown>> | undefined }): SkillLoadResult;
}

/**
 * Create the external-skills manager.
 *
 * @example
 * ```ts
 * const external = createExternalSkillsManager({ dir: `${dataDir}/skills/external` });
 * await external.add('https://github.com/acme/skills.git#deep-research');
 * skills.register(external.load().skills);
 * ```
 */
export function createExternalSkillsManager(options: ExternalSkillsManagerOptions): ExternalSkillsManager {
  const { git = 'git', now = () => new Date(), timeoutMs = 120_000 } = options;
  const dir = resolve(options.dir);

  async function fetchSource(src: ExternalSkillSource, into: string): Promise<{ pkgDir: string; repoRoot: string; commit?: string }> {
    if (src.kind === 'path') {
      if (!existsSync(join(src.path, 'SKILL.md'))) throw invalid(src.path, 'no SKILL.md in this folder');
      cpSync(src.path, into, { recursive: true, verbatimSymlinks: true, filter: (from) => !/[/\\]\.git$/.test(from) });
      return { pkgDir: into, repoRoot: into };
    }
    const env = { ...process.env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo', GIT_CONFIG_NOSYSTEM: '1' };
    const args = ['-c', 'protocol.ext.allow=never', '-c', 'core.hooksPath=/dev/null', '-c', 'core.symlinks=false', 'clone', '--depth', '1', '--no-recurse-submodules', '--quiet', '--', src.url, into];
    try {
      await execFileAsync(git, args, { env, timeout: timeoutMs, windowsHide: true });
    } catch (e) {
      const msg = (e as { stderr?: string }).stderr?.trim() || (e instanceof Error ? e.message : String(e));
      throw new MinaraError('SKILL_INVALID', `git clone of ${src.url} failed: ${msg}`);
    }
    let commit: string | undefined;
    try {
      commit = (await execFileAsync(git, ['-C', into, 'rev-parse', 'HEAD'], { env, timeout: timeoutMs })).stdout.trim();
    } catch {
      commit = undefined;
    }
    rmSync(join(into, '.git'), { recursive: true, force: true });
    const pkgDir = src.subdir ? resolve(into, src.subdir) : into;
    if (pkgDir !== into && !pkgDir.startsWith(into + sep)) throw invalid(src.url, `subdir "${src.subdir}" escapes the repository`);
    if (!existsSync(join(pkgDir, 'SKILL.md'))) {
      const found = findSkillMds(into).map((p) => p.slice(into.length + 1) || '.');
      const hint = found.length > 0 ? ` Packages found: ${found.map((f) => `${src.url}#${f}`).join(', ')}` : '';
      throw invalid(src.url, `no SKILL.md at ${src.subdir ?? 'the repository root'}.${hint}`);
    }
    return { pkgDir, repoRoot: into, ...(commit ? { commit } : {}) };
  }

  async function install(src: ExternalSkillSource, mode: { force: boolean; previous?: ExternalSkillRecord }): Promise<ExternalSkillRecord> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const tmp = mkdtempSync(join(dir, '.tmp-'));
    try {
      const fetched = await fetchSource(src, join(tmp, 'src'));
      const removedLinks = removeSymlinks(fetched.pkgDir);
      const license = checkLicense(fetched.pkgDir, fetched.repoRoot, describe(src));
      const parsed = loadSkillPackage(fetched.pkgDir);
      if (!parsed.skill) {
        const errors = parsed.issues.filter((i) => i.severity === 'error').map((i) => `${i.field}: ${i.message}`);
        throw invalid(describe(src), errors.join('; ') || 'invalid SKILL.md');
      }
      const id = parsed.skill.id;
      if (!SAFE_ID.test(id)) throw invalid(describe(src), `skill id "${id}" cannot be used as a folder name`);
      if (mode.previous && mode.previous.id !== id) throw invalid(describe(src), `the package id changed from "${mode.previous.id}" to "${id}"; remove and add it instead`);
      const target = join(dir, id);
      if (existsSync(target) && !mode.force && !mode.previous) {
        throw new MinaraError('SKILL_INVALID', `External skill "${id}" is already installed in ${target}; use upgrade or remove it first.`);
      }
      const at = now().toISOString();
      const source: ExternalSkillSource = src.kind === 'git' && fetched.commit ? { ...src, commit: fetched.commit } : src;
      const record: ExternalSkillRecord = {
        id,
        name: parsed.skill.id,
        description: parsed.skill.description,
        source,
        license: {
          spdx: license.spdx,
          category: license.category === 'copyleft' ? 'copyleft' : 'permissive',
          copyleft: license.category === 'copyleft',
          ...(license.file !== undefined ? { file: license.file } : {}),
        },
        installedAt: mode.previous?.installedAt ?? at,
        updatedAt: at,
        ...(removedLinks.length > 0 ? { removedLinks } : {}),
      };
      writeFileSync(join(fetched.pkgDir, RECORD), `${JSON.stringify(record, null, 2)}\n`);
      // Swap: old → backup, new → target, drop backup.
      const backup = join(tmp, 'old');
      if (existsSync(target)) renameSync(target, backup);
      try {
        renameSync(fetched.pkgDir, target);
      } catch (e) {
        if (existsSync(backup)) renameSync(backup, target);
        throw e;
      }
      return record;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  const manager: ExternalSkillsManager = {
    dir,
    add: async (source, opts = {}) => install(parseSource(source), { force: opts.force === true }),
    list() {
      if (!existsSync(dir)) return [];
      return readdirSync(dir)
        .filter((n) => !n.startsWith('.') && existsSync(join(dir, n, RECORD)))
        .map((n) => readRecord(join(dir, n)))
        .filter((r): r is ExternalSkillRecord => r !== undefined)
        .sort((a, b) => compareIds(a.id, b.id));
    },
    async upgrade(id) {
      const previous = recordOf(id);
      return install(previous.source.kind === 'git' ? { kind: 'git', url: previous.source.url, subdir: previous.source.subdir } : previous.source, { force: true, previous });
    },
    remove(id) {
      if (!SAFE_ID.test(id)) return false;
      const target = join(dir, id);
      if (!existsSync(join(target, RECORD))) return false;
      rmSync(target, { recursive: true, force: true });
      return true;
    },
    load(opts = {}) {
      const records = new Map(manager.list().map((r) => [join(dir, r.id), r] as const));
      return loadSkillDirectories(existsSync(dir) ? [dir] : [], {
        origin: 'external',
        ...(opts.config ? { config: opts.config } : {}),
        licenseFor: (d) => {
          const r = records.get(d);
          return r ? { spdx: r.license.spdx, copyleft: r.license.copyleft } : undefined;
        },
      });
    },
  };

  function recordOf(id: string): ExternalSkillRecord {
    const r = SAFE_ID.test(id) ? readRecord(join(dir, id)) : undefined;
    if (!r) {
      const ids = manager.list().map((x) => x.id);
      throw new MinaraError('SKILL_NOT_FOUND', `No external skill "${id}" is installed in ${dir}.${ids.length ? ` Installed: ${ids.join(', ')}` : ''}`);
    }
    return r;
  }
  return manager;
}

/** Parse `source` as a git URL (`#subdir` allowed) or a local folder. */
function parseSource(source: string): ExternalSkillSource {
  const s = source.trim();
  if (s.startsWith('-') || /^ext::/i.test(s) || /^fd::/i.test(s)) throw new MinaraError('INVALID_ARGUMENT', `Refusing source "${s}": not a plain git URL or folder.`);
  const isGit = /^(https?|ssh|git|file):\/\//i.test(s) || /^[\w.-]+@[\w.-]+:/.test(s) || /\.git(#.*)?$/.test(s);
  if (isGit && !(isAbsolute(s) && existsSync(s))) {
    const [url = '', subdir] = s.split('#', 2);
    return subdir ? { kind: 'git', url, subdir } : { kind: 'git', url };
  }
  const path = resolve(s);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new MinaraError('INVALID_ARGUMENT', `Skill source "${s}" is neither a folder nor a git URL.`);
  return { kind: 'path', path };
}

function checkLicense(pkgDir: string, repoRoot: string, label: string): LicenseDetection {
  const d = detectPackageLicense(pkgDir, repoRoot);
  if (d.category === 'refused') {
    const where = d.file ? `${d.file} says ${JSON.stringify(d.evidence)}` : 'no LICENSE file and no license field in SKILL.md';
    throw new MinaraError(
      'SKILL_LICENSE_REFUSED',
      `Refusing to add ${label}: its licence is ${d.spdx === 'UNKNOWN' ? 'not recognised' : d.spdx} (${where}). Only permissive (MIT, Apache-2.0, BSD, ISC, MPL-2.0, Unlicense, CC0) or GPL-family licences are accepted.`,
    );
  }
  return d;
}

function removeSymlinks(root: string): string[] {
  const removed: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isSymbolicLink()) {
        unlinkSync(p);
        removed.push(p.slice(root.length + 1));
      } else if (e.isDirectory()) walk(p);
    }
  };
  walk(root);
  return removed.sort(compareIds);
}

function findSkillMds(root: string, depth = 3): string[] {
  const out: string[] = [];
  const walk = (d: string, left: number) => {
    if (existsSync(join(d, 'SKILL.md'))) out.push(d);
    if (left === 0) return;
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory() && !e.name.startsWith('.')) walk(join(d, e.name), left - 1);
  };
  walk(root, depth);
  return out.sort(compareIds);
}

function readRecord(pkgDir: string): ExternalSkillRecord | undefined {
  try {
    if (!lstatSync(pkgDir).isDirectory()) return undefined;
    return JSON.parse(readFileSync(join(pkgDir, RECORD), 'utf8')) as ExternalSkillRecord;
  } catch {
    return undefined;
  }
}

function describe(src: ExternalSkillSource): string {
  return src.kind === 'git' ? `${src.url}${src.subdir ? `#${src.subdir}` : ''}` : src.path;
}

function invalid(where: string, message: string): MinaraError {
  return new MinaraError('SKILL_INVALID', `Cannot add skill from ${where}: ${message}`);
}
