import { MinaraError } from '../errors/minara-error';
import type { ToolRegistry } from '../tools/types';
import { closestMatches } from '../util/suggest';
import { type Logger, silentLogger } from '../util/logger';
import { renderCatalog, renderRoutedCatalog, type CatalogRenderOptions } from './catalog';
import { defineSkill, isSkill, SkillDefinitionError } from './define-skill';
import { createToolConditionChecker, defaultHasBin, registrationGate } from './gating';
import { assembleSkillPrompt, type SkillPromptResult } from './prompt';
import { compareIds, createSkillRouter, type SkillRouter } from './router';
import type { RoutedCatalogEntry, RouteExplanation, Skill, SkillDefinition, TurnRoutingContext } from './types';

/** Options of {@link createSkillRegistry}. */
export interface SkillRegistryOptions {
  /** Skills to register (definitions are passed through `defineSkill`). @default [] */
  readonly skills?: readonly (Skill | SkillDefinition)[] | undefined;
  /** The tool registry: tool names are checked against it, and routing conditions read it. */
  readonly tools: ToolRegistry;
  /** Environment for `requiresEnv` gating. @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Platform for `platforms` gating. @default process.platform */
  readonly platform?: string | undefined;
  /** PATH lookup for `requiresBins` gating (never runs anything). @default a PATH scan */
  readonly hasBin?: ((name: string) => boolean) | undefined;
  /** Where warnings (long descriptions, hidden skills) go. @default silentLogger */
  readonly logger?: Logger | undefined;
}

/** A skill hidden at registration, and why (`requires_env:GLASSNODE_API_KEY`, `platform:win32`, …). */
export interface HiddenSkill {
  readonly id: string;
  readonly reason: string;
}

/**
 * The skill catalog. Stateless about activation (a {@link SkillSession} owns that): it gates skills at
 * registration, routes, renders catalog blocks, concatenates prompts and collects tool whitelists.
 */
export interface SkillRegistry {
  readonly tools: ToolRegistry;
  /** Register more skills (e.g. external ones). Throws `SKILL_INVALID` on a duplicate id or an unknown tool. */
  register(skills: Skill | SkillDefinition | readonly (Skill | SkillDefinition)[]): void;
  /** Remove a skill; true when it existed (visible or hidden). */
  unregister(id: string): boolean;
  /** A visible skill, or undefined when unknown or hidden. */
  get(id: string): Skill | undefined;
  has(id: string): boolean;
  /** Visible skills in catalog order (priority asc, then id). */
  list(): Skill[];
  /** Skills hidden by gating, sorted by id. */
  hidden(): HiddenSkill[];
  /** Warnings collected at registration. */
  warnings(): string[];
  /** Close matches for an unknown id. */
  suggest(id: string, max?: number): string[];
  /** L0 routing: kept skills with score and reasons, best first. */
  route(ctx: TurnRoutingContext): RoutedCatalogEntry[];
  /** Like `route`, including dropped skills (`-Infinity`, `neg:…` / `cond:…`). */
  explain(ctx: TurnRoutingContext): RouteExplanation[];
  /** The unrouted catalog block (every auto skill). */
  buildCatalog(options?: CatalogRenderOptions): string;
  /** The routed catalog block with inline reason hints, for a turn or for precomputed entries. */
  buildRoutedCatalog(input: TurnRoutingContext | readonly RoutedCatalogEntry[], options?: CatalogRenderOptions): string;
  /** Active skills' prompt bodies within the budget; lowest priority shed first. */
  promptFor(ids: readonly string[], options?: { budgetChars?: number | undefined }): SkillPromptResult;
  /** The union of the skills' tool whitelists, sorted by name (unknown ids are ignored). */
  toolsFor(ids: readonly string[]): string[];
}

/**
 * Create the skill registry.
 *
 * @example
 * ```ts
 * const skills = createSkillRegistry({ skills: [core, perps], tools });
 * const routed = skills.route({ message: 'long ETH 3x' });
 * const block = skills.buildRoutedCatalog(routed);
 * ```
 */
export function createSkillRegistry(options: SkillRegistryOptions): SkillRegistry {
  const { tools, env = process.env, platform = process.platform, hasBin = defaultHasBin, logger = silentLogger } = options;
  if (!tools || typeof tools.has !== 'function') {
    throw new MinaraError('CONFIG_INVALID', 'createSkillRegistry: options.tools must be a ToolRegistry (createToolRegistry)');
  }
  const visible = new Map<string, Skill>();
  const hiddenMap = new Map<string, string>();
  const hiddenSkills = new Map<string, Skill>();
  const warningList: string[] = [];
  let router: SkillRouter | undefined;
  let currentCheck: ((s: Skill) => string | undefined) | undefined;

  function register(input: Skill | SkillDefinition | readonly (Skill | SkillDefinition)[]): void {
    const batch = (Array.isArray(input) ? input : [input]) as readonly (Skill | SkillDefinition)[];
    const prepared: Skill[] = [];
    const ids = new Set<string>();
    for (const item of batch) {
      const skill = isSkill(item) ? item : defineSkill(item);
      if (visible.has(skill.id) || hiddenMap.has(skill.id) || ids.has(skill.id)) {
        throw new SkillDefinitionError(skill.id, [{ field: 'id', message: 'duplicate skill id (already registered)', severity: 'error' }], skill.origin.file);
      }
      ids.add(skill.id);
      prepared.push(skill);
    }
    // Validate the whole batch before changing anything.
    const decisions: Array<{ skill: Skill; hiddenBy?: string }> = [];
    for (const skill of prepared) {
      const hiddenBy = registrationGate(skill, { env, platform, hasBin });
      if (hiddenBy === undefined) checkToolNames(skill);
      decisions.push(hiddenBy === undefined ? { skill } : { skill, hiddenBy });
    }
    for (const { skill, hiddenBy } of decisions) {
      for (const w of skill.warnings) {
        warningList.push(w);
        logger.warn(w, { skill: skill.id });
      }
      if (hiddenBy !== undefined) {
        hiddenMap.set(skill.id, hiddenBy);
        hiddenSkills.set(skill.id, skill);
        logger.debug(`skill "${skill.id}" hidden: ${hiddenBy}`, { skill: skill.id });
      } else visible.set(skill.id, skill);
    }
    router = undefined;
  }

  function checkToolNames(skill: Skill): void {
    const optional = new Set(skill.conditions.requiresTools);
    const issues = skill.toolNames.flatMap((name, i) => {
      if (tools.has(name) || optional.has(name)) return [];
      const near = closestMatches(name, tools.list().map((t) => t.name));
      const hint = near.length > 0 ? ` (did you mean ${near.join(', ')}?)` : '';
      return [{ field: `toolNames[${i}]`, message: `unknown tool "${name}"${hint}; register it first or list it in conditions.requiresTools`, severity: 'error' as const }];
    });
    if (issues.length > 0) throw new SkillDefinitionError(skill.id, issues, skill.origin.file);
  }

  function getRouter(): SkillRouter {
    // Condition checks memoise tool lookups per pass, so build the checker per route call.
    router ??= createSkillRouter([...visible.values()], { checkConditions: (s) => currentCheck?.(s) });
    return router;
  }
  const withChecker = <T>(fn: () => T): T => {
    currentCheck = createToolConditionChecker(tools);
    try {
      return fn();
    } finally {
      currentCheck = undefined;
    }
  };

  const registry: SkillRegistry = {
    tools,
    register,
    unregister(id) {
      const had = visible.delete(id) || hiddenMap.delete(id);
      hiddenSkills.delete(id);
      if (had) router = undefined;
      return had;
    },
    get: (id) => visible.get(id),
    has: (id) => visible.has(id),
    list: () => [...visible.values()].sort((a, b) => a.priority - b.priority || compareIds(a.id, b.id)),
    hidden: () => [...hiddenMap].map(([id, reason]) => ({ id, reason })).sort((a, b) => compareIds(a.id, b.id)),
    warnings: () => [...warningList],
    suggest: (id, max = 3) => closestMatches(id, [...visible.keys()].sort(compareIds), max),
    route: (ctx) => withChecker(() => getRouter().route(ctx)),
    explain: (ctx) => withChecker(() => getRouter().explain(ctx)),
    buildCatalog: (opts = {}) => renderCatalog([...visible.values()], opts),
    buildRoutedCatalog(input, opts = {}) {
      const entries = Array.isArray(input) ? (input as readonly RoutedCatalogEntry[]) : registry.route(input as TurnRoutingContext);
      return renderRoutedCatalog(entries, visible, opts);
    },
    promptFor(ids, opts = {}) {
      const skills = ids.map((id) => visible.get(id)).filter((s): s is Skill => s !== undefined);
      return assembleSkillPrompt(skills, opts.budgetChars);
    },
    toolsFor(ids) {
      const names = new Set<string>();
      for (const id of ids) for (const t of visible.get(id)?.toolNames ?? []) names.add(t);
      return [...names].sort(compareIds);
    },
  };
  register(options.skills ?? []);
  return registry;
}

/** Why an id is not activatable: unknown (with close matches) or hidden by gating. */
export function describeMissingSkill(registry: SkillRegistry, id: string): string {
  const hidden = registry.hidden().find((h) => h.id === id);
  if (hidden) return `Skill "${id}" is unavailable here (${hidden.reason}).`;
  const near = registry.suggest(id);
  return `Unknown skill id "${id}".${near.length > 0 ? ` Did you mean: ${near.join(', ')}?` : ''}`;
}
