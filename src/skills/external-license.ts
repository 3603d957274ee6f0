import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { yaml } from '../util/lazy-yaml';
import { classifySpdx, detectLicense, LICENSE_FILE_NAMES, type LicenseDetection } from './license';

/**
 * The licence of a package: its own licence file, else the repository root's; the SKILL.md `license`
 * field refuses on its own when it says proprietary (or similar), and decides when no file exists.
 */
export function detectPackageLicense(pkgDir: string, repoRoot: string = pkgDir): LicenseDetection {
  const field = frontmatterLicense(pkgDir);
  const fieldDetection = field === undefined ? undefined : { ...classifySpdx(field), file: 'SKILL.md#license' };
  if (fieldDetection && fieldDetection.spdx === 'Proprietary') return fieldDetection;
  if (field !== undefined) {
    const asText = detectLicense(field, 'SKILL.md#license');
    if (asText.spdx === 'Proprietary') return asText;
  }
  for (const dir of pkgDir === repoRoot ? [pkgDir] : [pkgDir, repoRoot]) {
    for (const name of LICENSE_FILE_NAMES) {
      const path = join(dir, name);
      if (!existsSync(path) || !statSync(path).isFile()) continue;
      const text = readFileSync(path, 'utf8').slice(0, 64 * 1024);
      return detectLicense(text, dir === pkgDir ? name : `${name} (repository root)`);
    }
  }
  if (fieldDetection) return fieldDetection;
  return { spdx: 'UNKNOWN', category: 'refused', evidence: 'no licence file' };
}

function frontmatterLicense(pkgDir: string): string | undefined {
  try {
    const src = readFileSync(join(pkgDir, 'SKILL.md'), 'utf8').replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
    if (!src.startsWith('---\n')) return undefined;
    const end = src.indexOf('\n---', 3);
    if (end < 0) return undefined;
    const fm: unknown = yaml().parse(src.slice(4, end + 1), { logLevel: 'silent' });
    const v = typeof fm === 'object' && fm !== null ? (fm as Record<string, unknown>).license : undefined;
    return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
  } catch {
    return undefined;
  }
}
