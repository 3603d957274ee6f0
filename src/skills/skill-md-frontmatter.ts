/**
 * Map SKILL.md frontmatter (Agent Skills format, NOTES §7) to a {@link SkillDefinition}:
 * top-level `name`/`description`, this project's extras under `metadata.minara`, OpenClaw gating under
 * `metadata.openclaw` (aliases `clawdbot`, `clawdis`), Hermes `platforms` and `metadata.hermes`.
 * On-disk keys stay snake_case; every problem names its on-disk field.
 */
import type { SkillConditions, SkillDefinition, SkillRouting } from './types';

/** A problem in one field of one file. */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
  readonly severity: 'error' | 'warning';
}

/** The frontmatter mapped to a definition, plus load-time gates the registry cannot evaluate. */
export interface MappedFrontmatter {
  readonly definition?: Omit<SkillDefinition, 'prompt'> | undefined;
  readonly problems: FieldProblem[];
  /** OpenClaw `requires.config` paths (truthy in the host config), unless `always`. */
  readonly requiresConfig: readonly string[];
  /** `license` from the frontmatter, when present. */
  readonly license?: string | undefined;
  readonly name?: string | undefined;
}

const PORTABLE_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Map parsed frontmatter. `dirName` is the package folder (portable names match it). */
export function mapFrontmatter(fm: Obj, dirName: string): MappedFrontmatter {
  const problems: FieldProblem[] = [];
  const error = (field: string, message: string) => problems.push({ field, message, severity: 'error' });
  const warn = (field: string, message: string) => problems.push({ field, message, severity: 'warning' });

  const str = (v: unknown, field: string): string | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v;
    if (typeof v === 'number' || typeof v === 'boolean') return String(v);
    error(field, `expected a string, got ${Array.isArray(v) ? 'a list' : typeof v}`);
    return undefined;
  };
  const list = (v: unknown, field: string): string[] | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter(Boolean);
    if (!Array.isArray(v)) {
      error(field, `expected a list of strings, got ${typeof v}`);
      return undefined;
    }
    const out: string[] = [];
    v.forEach((x: unknown, i) => {
      if (typeof x === 'string' || typeof x === 'number') out.push(String(x));
      else error(`${field}[${i}]`, `expected a string, got ${JSON.stringify(x)}`);
    });
    return out;
  };
  const obj = (v: unknown, field: string): Obj | undefined => {
    if (v === undefined || v === null) return undefined;
    if (isObj(v)) return v;
    error(field, `expected a mapping, got ${Array.isArray(v) ? 'a list' : typeof v}`);
    return undefined;
  };

  const name = str(fm.name, 'name');
  if (name === undefined || name.trim() === '') error('name', 'is required (1–64 chars, lowercase letters, digits and hyphens)');
  else if (!PORTABLE_NAME.test(name) || name.length > 64) warn('name', `"${name}" is not a portable skill name (lowercase letters, digits, hyphens; ≤ 64 chars)`);
  else if (dirName && name !== dirName) warn('name', `"${name}" does not match its folder "${dirName}"`);
  const description = str(fm.description, 'description');
  if (description === undefined || description.trim() === '') error('description', 'is required');

  let metadata: Obj | undefined;
  if (typeof fm.metadata === 'string') {
    // The classic OpenClaw parser kept `metadata` as single-line JSON.
    try {
      const parsed: unknown = JSON.parse(fm.metadata);
      metadata = obj(parsed, 'metadata');
    } catch (e) {
      error('metadata', `is a string but not valid JSON (${e instanceof Error ? e.message : String(e)})`);
    }
  } else metadata = obj(fm.metadata, 'metadata');

  const minara = obj(metadata?.minara, 'metadata.minara') ?? {};
  const m = 'metadata.minara';
  const ocKey = ['openclaw', 'clawdbot', 'clawdis'].find((k) => metadata?.[k] !== undefined);
  const openclaw = ocKey ? (obj(metadata?.[ocKey], `metadata.${ocKey}`) ?? {}) : {};
  const oc = `metadata.${ocKey ?? 'openclaw'}`;
  const hermes = obj(metadata?.hermes, 'metadata.hermes') ?? {};
  const h = 'metadata.hermes';

  const routingIn = obj(minara.routing, `${m}.routing`) ?? {};
  const condIn = obj(minara.conditions, `${m}.conditions`) ?? {};
  const ocRequires = obj(openclaw.requires, `${oc}.requires`) ?? {};
  const always = openclaw.always === true;
  if (openclaw.always !== undefined && typeof openclaw.always !== 'boolean') error(`${oc}.always`, 'expected true or false');

  const keywords = list(routingIn.keywords, `${m}.routing.keywords`);
  const routing: SkillRouting = {
    keywords: keywords ?? (name ? [name.replace(/-/g, ' ')] : []),
    ...opt('negativeKeywords', list(routingIn.negative_keywords, `${m}.routing.negative_keywords`)),
    ...opt('lifecycleStages', list(routingIn.lifecycle_stages, `${m}.routing.lifecycle_stages`) as SkillRouting['lifecycleStages']),
    ...opt('assetClasses', list(routingIn.asset_classes, `${m}.routing.asset_classes`) as SkillRouting['assetClasses']),
    ...opt('coActivate', list(routingIn.co_activate, `${m}.routing.co_activate`)),
    ...opt('signalSources', list(routingIn.signal_sources, `${m}.routing.signal_sources`)),
  };
  const merge = (...lists: Array<string[] | undefined>): string[] | undefined => {
    const all = lists.flatMap((l) => l ?? []);
    return all.length > 0 ? [...new Set(all)] : undefined;
  };
  const platforms = merge(
    list(condIn.platforms, `${m}.conditions.platforms`),
    list(fm.platforms, 'platforms'),
    always ? undefined : list(openclaw.os, `${oc}.os`),
  );
  const conditions: SkillConditions = {
    ...opt('requiresEnv', merge(list(minara.requires_env, `${m}.requires_env`), list(condIn.requires_env, `${m}.conditions.requires_env`), always ? undefined : list(ocRequires.env, `${oc}.requires.env`))),
    ...opt('requiresTools', merge(list(condIn.requires_tools, `${m}.conditions.requires_tools`), list(hermes.requires_tools, `${h}.requires_tools`))),
    ...opt('requiresToolsets', merge(list(condIn.requires_toolsets, `${m}.conditions.requires_toolsets`), list(hermes.requires_toolsets, `${h}.requires_toolsets`))),
    ...opt('fallbackForTools', merge(list(condIn.fallback_for_tools, `${m}.conditions.fallback_for_tools`), list(hermes.fallback_for_tools, `${h}.fallback_for_tools`))),
    ...opt('fallbackForToolsets', merge(list(condIn.fallback_for_toolsets, `${m}.conditions.fallback_for_toolsets`), list(hermes.fallback_for_toolsets, `${h}.fallback_for_toolsets`))),
    ...opt('platforms', platforms),
    ...opt('requiresBins', always ? undefined : list(ocRequires.bins, `${oc}.requires.bins`)),
    ...opt('requiresAnyBins', always ? undefined : list(ocRequires.anyBins, `${oc}.requires.anyBins`)),
  };
  const requiresConfig = always ? [] : (list(ocRequires.config, `${oc}.requires.config`) ?? []);

  let priority: number | undefined;
  if (minara.priority !== undefined) {
    if (typeof minara.priority === 'number') priority = minara.priority;
    else error(`${m}.priority`, `expected a number from 0 to 100, got ${JSON.stringify(minara.priority)}`);
  }
  let activation: 'auto' | 'manual' | undefined;
  if (minara.activation !== undefined) {
    if (minara.activation === 'auto' || minara.activation === 'manual') activation = minara.activation;
    else error(`${m}.activation`, `expected "auto" or "manual", got ${JSON.stringify(minara.activation)}`);
  } else if (fm['disable-model-invocation'] === true) activation = 'manual';
  if (minara.sandbox !== undefined && typeof minara.sandbox !== 'boolean') error(`${m}.sandbox`, 'expected true or false');

  // Without metadata.minara.id the id is the name, lower-cased to a valid id.
  const id = str(minara.id, `${m}.id`) ?? (name === undefined ? undefined : toId(name));
  const summary = str(minara.summary, `${m}.summary`);
  const category = str(minara.category, `${m}.category`) ?? str(hermes.category, `${h}.category`);
  const toolNames = list(minara.tool_names, `${m}.tool_names`);
  const license = str(fm.license, 'license');

  if (problems.some((p) => p.severity === 'error') || id === undefined || description === undefined) {
    return { problems, requiresConfig, license, name };
  }
  const definition: Omit<SkillDefinition, 'prompt'> = {
    id,
    description,
    ...opt('summary', summary),
    ...opt('toolNames', toolNames),
    ...opt('priority', priority),
    ...opt('activation', activation),
    ...(minara.sandbox === true ? { sandbox: true } : {}),
    routing,
    conditions,
    ...opt('category', category),
  };
  return { definition, problems, requiresConfig, license, name };
}

/** On-disk field for a `defineSkill` field path (`routing.keywords[1]` → `metadata.minara.routing.keywords[1]`). */
export function diskField(field: string): string {
  const table: Array<[RegExp, string]> = [
    [/^id\b/, 'metadata.minara.id'],
    [/^description\b/, 'description'],
    [/^prompt\b/, '(body)'],
    [/^summary\b/, 'metadata.minara.summary'],
    [/^toolNames/, 'metadata.minara.tool_names'],
    [/^priority\b/, 'metadata.minara.priority'],
    [/^activation\b/, 'metadata.minara.activation'],
    [/^routing\.negativeKeywords/, 'metadata.minara.routing.negative_keywords'],
    [/^routing\.lifecycleStages/, 'metadata.minara.routing.lifecycle_stages'],
    [/^routing\.assetClasses/, 'metadata.minara.routing.asset_classes'],
    [/^routing\.coActivate/, 'metadata.minara.routing.co_activate'],
    [/^routing\.signalSources/, 'metadata.minara.routing.signal_sources'],
    [/^routing\.keywords/, 'metadata.minara.routing.keywords'],
    [/^conditions\.requiresEnv/, 'metadata.minara.conditions.requires_env'],
    [/^conditions\./, 'metadata.minara.conditions.'],
  ];
  for (const [re, disk] of table) if (re.test(field)) return disk.endsWith('.') ? `${disk}${field.slice('conditions.'.length)}` : field.replace(re, disk);
  return field;
}

function toId(name: string): string {
  return name.trim().toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[^a-z0-9]+/, '').slice(0, 64) || 'skill';
}

function opt<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
