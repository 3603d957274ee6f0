import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ToolRegistry } from '../tools/types';
import type { Skill } from './types';

/** What registration-time gates look at. */
export interface GateEnvironment {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly platform: string;
  readonly hasBin: (name: string) => boolean;
}

/**
 * Why a skill is hidden at registration (missing env key, wrong platform, missing executable), or
 * undefined when it passes. A hidden skill is never routed, listed or activatable.
 */
export function registrationGate(skill: Skill, gate: GateEnvironment): string | undefined {
  const c = skill.conditions;
  const missingEnv = c.requiresEnv.filter((k) => (gate.env[k] ?? '') === '');
  if (missingEnv.length > 0) return `requires_env:${missingEnv.join(',')}`;
  if (c.platforms.length > 0 && !c.platforms.map(normalizePlatform).includes(normalizePlatform(gate.platform))) {
    return `platform:${gate.platform}`;
  }
  const missingBins = c.requiresBins.filter((b) => !gate.hasBin(b));
  if (missingBins.length > 0) return `requires_bins:${missingBins.join(',')}`;
  if (c.requiresAnyBins.length > 0 && !c.requiresAnyBins.some((b) => gate.hasBin(b))) {
    return `requires_any_bins:${c.requiresAnyBins.join(',')}`;
  }
  return undefined;
}

/** Map Hermes / human platform names (`macos`, `windows`) to Node's (`darwin`, `win32`). */
export function normalizePlatform(p: string): string {
  const v = p.trim().toLowerCase();
  if (v === 'macos' || v === 'mac' || v === 'osx') return 'darwin';
  if (v === 'windows' || v === 'win') return 'win32';
  return v;
}

/**
 * A per-pass checker for routing-time conditions (tools and tool sets can change as tools register
 * or their `checkFn` flips). Memoises tool lookups within one pass.
 */
export function createToolConditionChecker(tools: ToolRegistry): (skill: Skill) => string | undefined {
  const toolMemo = new Map<string, boolean>();
  const setMemo = new Map<string, boolean>();
  const hasTool = (name: string) => {
    let v = toolMemo.get(name);
    if (v === undefined) toolMemo.set(name, (v = tools.has(name)));
    return v;
  };
  const hasSet = (name: string) => {
    let v = setMemo.get(name);
    if (v === undefined) setMemo.set(name, (v = tools.list({ toolSets: [name] }).length > 0));
    return v;
  };
  return (skill) => {
    const c = skill.conditions;
    for (const t of c.requiresTools) if (!hasTool(t)) return `requires_tools:${t}`;
    for (const s of c.requiresToolsets) if (!hasSet(s)) return `requires_toolsets:${s}`;
    for (const t of c.fallbackForTools) if (hasTool(t)) return `fallback_for_tools:${t}`;
    for (const s of c.fallbackForToolsets) if (hasSet(s)) return `fallback_for_toolsets:${s}`;
    return undefined;
  };
}

/** True when an executable named `name` is on PATH (never runs it). */
export function defaultHasBin(name: string): boolean {
  if (name.includes('/') || name.includes('\\')) return isExecutable(name);
  const exts = process.platform === 'win32' ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    for (const ext of exts) if (isExecutable(join(dir, name + ext))) return true;
  }
  return false;
}

function isExecutable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
