import { MinaraError } from '../errors/minara-error';
import { isAssetClass, isLifecycleStage } from './taxonomy';
import type { NormalizedConditions, NormalizedRouting, Skill, SkillDefinition } from './types';

/** Recommended maximum description length; longer is a warning. */
export const SKILL_DESCRIPTION_MAX_CHARS = 80;
/** Recommended maximum prompt size (~800 tokens); larger is a warning. */
export const SKILL_PROMPT_MAX_CHARS = 3072;

const ID = /^[a-z0-9][a-z0-9._-]{0,63}$/;
const TOOL_NAME = /^[A-Za-z0-9_.:-]{1,128}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One problem found in a skill definition. */
export interface SkillIssue {
  /** Dotted path of the field (`routing.keywords[2]`). */
  readonly field: string;
  readonly message: string;
  readonly severity: 'error' | 'warning';
}

/** A skill definition is malformed; `issues` names every bad field. */
export class SkillDefinitionError extends MinaraError {
  readonly skillId: string;
  readonly issues: readonly SkillIssue[];
  constructor(skillId: string, issues: readonly SkillIssue[], where?: string) {
    const detail = issues.map((i) => `${i.field}: ${i.message}`).join('; ');
    super('SKILL_INVALID', `Invalid skill "${skillId}"${where ? ` (${where})` : ''}: ${detail}`);
    this.name = 'SkillDefinitionError';
    this.skillId = skillId;
    this.issues = issues;
  }
}

/**
 * Check a skill definition without throwing: every error and warning, each naming its field.
 * Tool names are checked against a registry later, by `createSkillRegistry`.
 */
export function validateSkillDefinition(def: SkillDefinition): SkillIssue[] {
  const issues: SkillIssue[] = [];
  const error = (field: string, message: string) => issues.push({ field, message, severity: 'error' });
  const warn = (field: string, message: string) => issues.push({ field, message, severity: 'warning' });
  const d = def as unknown as Record<string, unknown>;
  if (typeof d !== 'object' || d === null) return [{ field: '(skill)', message: 'expected an object', severity: 'error' }];

  if (typeof d.id !== 'string' || !ID.test(d.id)) {
    error('id', `expected 1–64 chars of lowercase letters, digits, ".", "_" or "-" starting with a letter or digit, got ${JSON.stringify(d.id)}`);
  }
  if (typeof d.description !== 'string' || d.description.trim() === '') error('description', 'expected a non-empty string');
  else if (d.description.length > SKILL_DESCRIPTION_MAX_CHARS) {
    warn('description', `is ${d.description.length} characters; keep it to ${SKILL_DESCRIPTION_MAX_CHARS} or fewer (the model chooses skills by it)`);
  }
  if (typeof d.prompt !== 'string' || d.prompt.trim() === '') error('prompt', 'expected a non-empty string');
  else if (d.prompt.length > SKILL_PROMPT_MAX_CHARS) {
    warn('prompt', `is ${d.prompt.length} characters; keep it under ~${SKILL_PROMPT_MAX_CHARS} (~800 tokens)`);
  }
  if (d.summary !== undefined && typeof d.summary !== 'string') error('summary', 'expected a string');
  if (d.priority !== undefined && (typeof d.priority !== 'number' || !Number.isFinite(d.priority) || d.priority < 0 || d.priority > 100)) {
    error('priority', `expected a number from 0 to 100, got ${JSON.stringify(d.priority)}`);
  }
  if (d.activation !== undefined && d.activation !== 'auto' && d.activation !== 'manual') {
    error('activation', `expected "auto" or "manual", got ${JSON.stringify(d.activation)}`);
  }
  if (d.sandbox !== undefined && typeof d.sandbox !== 'boolean') error('sandbox', 'expected a boolean');
  stringList(d.toolNames, 'toolNames', error, (v) => TOOL_NAME.test(v), 'a tool name');

  const routing = d.routing;
  if (routing !== undefined) {
    if (typeof routing !== 'object' || routing === null) error('routing', 'expected an object');
    else {
      const r = routing as Record<string, unknown>;
      unknownKeys(r, ['keywords', 'negativeKeywords', 'lifecycleStages', 'assetClasses', 'coActivate', 'signalSources'], 'routing', error);
      stringList(r.keywords, 'routing.keywords', error);
      stringList(r.negativeKeywords, 'routing.negativeKeywords', error);
      stringList(r.lifecycleStages, 'routing.lifecycleStages', error, isLifecycleStage, 'one of discover, evaluate, decide, manage');
      stringList(r.assetClasses, 'routing.assetClasses', error, isAssetClass, 'a known asset class (see ASSET_CLASSES)');
      stringList(r.coActivate, 'routing.coActivate', error, (v) => ID.test(v), 'a skill id');
      stringList(r.signalSources, 'routing.signalSources', error);
    }
  }
  const cond = d.conditions;
  if (cond !== undefined) {
    if (typeof cond !== 'object' || cond === null) error('conditions', 'expected an object');
    else {
      const c = cond as Record<string, unknown>;
      const keys = ['requiresEnv', 'requiresTools', 'requiresToolsets', 'fallbackForTools', 'fallbackForToolsets', 'platforms', 'requiresBins', 'requiresAnyBins'];
      unknownKeys(c, keys, 'conditions', error);
      stringList(c.requiresEnv, 'conditions.requiresEnv', error, (v) => ENV_NAME.test(v), 'an environment variable name');
      for (const k of keys.slice(1)) stringList(c[k], `conditions.${k}`, error);
    }
  }
  unknownKeys(
    d,
    ['id', 'description', 'prompt', 'summary', 'toolNames', 'priority', 'activation', 'sandbox', 'routing', 'conditions', 'references', 'category', 'origin', 'kind', 'warnings'],
    '',
    error,
  );
  return issues;
}

/**
 * Define a skill: validate it (every bad field named at once) and return a frozen, normalised {@link Skill}.
 * Warnings (long description or prompt) are kept on `skill.warnings`; the registry logs them.
 *
 * @throws SkillDefinitionError (code `SKILL_INVALID`) when a field is malformed.
 * @example
 * ```ts
 * const perps = defineSkill({
 *   id: 'perps.hl',
 *   description: 'Perps: open, close, monitor positions on Hyperliquid',
 *   prompt: 'Always preview before opening. Quote funding and liquidation price.',
 *   toolNames: ['open_perps_position', 'close_perps_position'],
 *   priority: 40,
 *   routing: { keywords: ['perp', 'perps', 'long', 'short', '合约'], lifecycleStages: ['decide', 'manage'], assetClasses: ['perps'] },
 * });
 * ```
 */
export function defineSkill(def: SkillDefinition): Skill {
  const issues = validateSkillDefinition(def);
  const errors = issues.filter((i) => i.severity === 'error');
  const id = typeof def?.id === 'string' ? def.id : '(no id)';
  if (errors.length > 0) throw new SkillDefinitionError(id, errors, def?.origin?.file);
  const r = def.routing ?? {};
  const c = def.conditions ?? {};
  const routing: NormalizedRouting = Object.freeze({
    keywords: uniq(r.keywords),
    negativeKeywords: uniq(r.negativeKeywords),
    lifecycleStages: uniq(r.lifecycleStages),
    assetClasses: uniq(r.assetClasses),
    coActivate: uniq(r.coActivate).filter((x) => x !== def.id),
    signalSources: uniq(r.signalSources),
  });
  const conditions: NormalizedConditions = Object.freeze({
    requiresEnv: uniq(c.requiresEnv),
    requiresTools: uniq(c.requiresTools),
    requiresToolsets: uniq(c.requiresToolsets),
    fallbackForTools: uniq(c.fallbackForTools),
    fallbackForToolsets: uniq(c.fallbackForToolsets),
    platforms: uniq(c.platforms),
    requiresBins: uniq(c.requiresBins),
    requiresAnyBins: uniq(c.requiresAnyBins),
  });
  const skill: Skill = {
    kind: 'skill',
    id: def.id,
    description: def.description.trim(),
    prompt: def.prompt.trim(),
    ...(def.summary !== undefined && def.summary.trim() !== '' ? { summary: def.summary.trim() } : {}),
    toolNames: uniq(def.toolNames),
    priority: def.priority ?? 50,
    activation: def.activation ?? 'auto',
    sandbox: def.sandbox ?? false,
    routing,
    conditions,
    references: Object.freeze([...(def.references ?? [])]),
    ...(def.category !== undefined ? { category: def.category } : {}),
    origin: Object.freeze({ ...(def.origin ?? { kind: 'builtin' as const }) }),
    warnings: Object.freeze(issues.filter((i) => i.severity === 'warning').map((i) => `skill "${def.id}": ${i.field} ${i.message}`)),
  };
  return Object.freeze(skill);
}

/** True for a value `defineSkill` returned. */
export function isSkill(value: unknown): value is Skill {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'skill';
}

function uniq<T extends string>(list: readonly T[] | undefined): readonly T[] {
  if (!list) return Object.freeze([]);
  const out: T[] = [];
  const seen = new Set<string>();
  for (const raw of list) {
    const v = raw.trim() as T;
    if (v === '' || seen.has(v)) continue;
    seen.add(v);
    out.push(v);
  }
  return Object.freeze(out);
}

function stringList(
  value: unknown,
  field: string,
  error: (field: string, message: string) => void,
  check?: (v: string) => boolean,
  expected?: string,
): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) {
    error(field, `expected an array of strings, got ${typeof value}`);
    return;
  }
  value.forEach((v: unknown, i) => {
    if (typeof v !== 'string' || v.trim() === '') error(`${field}[${i}]`, `expected a non-empty string, got ${JSON.stringify(v)}`);
    else if (check && !check(v)) error(`${field}[${i}]`, `expected ${expected ?? 'a valid value'}, got ${JSON.stringify(v)}`);
  });
}

function unknownKeys(obj: Record<string, unknown>, known: readonly string[], prefix: string, error: (f: string, m: string) => void): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) error(prefix ? `${prefix}.${key}` : key, `unknown field (expected one of: ${known.join(', ')})`);
  }
}
