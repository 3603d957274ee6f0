import { type CallSource, isAutonomousSource } from '../safety/permission-tier';
import { compareByImportance, SKILL_BODY_BUDGET_CHARS, type SkillPromptResult } from './prompt';
import { describeMissingSkill, type SkillRegistry } from './registry';
import { SkillActivationRefusedError, SkillNotFoundError } from './errors';
import { compareIds } from './router';
import type { Skill, TurnRoutingContext } from './types';

/** Name of the activation meta-tool. */
export const ACTIVATE_SKILLS_TOOL = 'activate_skills';
/** Name of the meta-tool that reaches any registered tool through dispatch. */
export const TOOL_INVOKE_TOOL = 'tool_invoke';

/**
 * The baseline tools the model sees on every turn with no skill active (when registered). An entry
 * ending in `*` is a prefix (`memory_*`). `activate_skills` and `tool_invoke` are always part of it.
 */
export const DEFAULT_ALWAYS_INCLUDE_TOOLS: readonly string[] = Object.freeze([
  ACTIVATE_SKILLS_TOOL,
  TOOL_INVOKE_TOOL,
  'get_price',
  'search_tokens',
  'memory_*',
  'clarify',
  'todo',
  'recommend_features',
]);

/** How an activation happened. */
export type ActivationVia = 'model' | 'signal' | 'host';

/** Who is activating. Activation never asks the user and never runs the tier gate. */
export interface ActivateOptions {
  /** Source of the turn; a sandbox-class skill is refused from an autonomous one. @default 'user' */
  readonly source?: CallSource | undefined;
  /** True when a human operator authored the turn (lifts the sandbox refusal). */
  readonly operatorAuthored?: boolean | undefined;
  /** @default 'host' */
  readonly via?: ActivationVia | undefined;
  readonly traceId?: string | undefined;
}

/** The loaded set after an activation. */
export interface SkillActivationResult {
  /** Active ids in importance order (priority asc, id). */
  readonly active: readonly string[];
  /** Active ids whose bodies are in the prompt. */
  readonly included: readonly string[];
  /** Active ids whose bodies were shed for budget (tools still callable). */
  readonly shed: readonly string[];
  readonly added: readonly string[];
  readonly removed: readonly string[];
  /** The provider-visible tool list after activation. */
  readonly tools: readonly string[];
}

/** What `onActivation` receives (for `skill-activated` events and audit). */
export interface SkillActivationRecord extends SkillActivationResult {
  readonly requested: readonly string[];
  readonly via: ActivationVia;
  readonly source: CallSource;
  readonly traceId?: string | undefined;
}

/** Options of {@link createSkillSession}. */
export interface SkillSessionOptions {
  readonly registry: SkillRegistry;
  /** Budget for active bodies. @default SKILL_BODY_BUDGET_CHARS (12,000) */
  readonly budgetChars?: number | undefined;
  /** Baseline tool names or `prefix*` patterns. @default DEFAULT_ALWAYS_INCLUDE_TOOLS */
  readonly alwaysInclude?: readonly string[] | undefined;
  /** Called after every successful activation. */
  readonly onActivation?: ((record: SkillActivationRecord) => void) | undefined;
}

/** Per-conversation activation state. The registry stays stateless; the session owns activation. */
export interface SkillSession {
  readonly registry: SkillRegistry;
  /**
   * Replace the loaded set with `ids` (an empty list clears it). Atomic: on an unknown id or a refusal
   * nothing changes. Throws `SkillNotFoundError` (with close matches) or `SkillActivationRefusedError`.
   */
  activate(ids: readonly string[], options?: ActivateOptions): SkillActivationResult;
  /** Clear the loaded set. */
  clear(): void;
  /** Active ids in importance order (ids unregistered since are dropped). */
  activeIds(): string[];
  isActive(id: string): boolean;
  /** Bodies within budget, plus which were shed. */
  prompt(): SkillPromptResult;
  /** The active-skills prompt block: bodies, then shed skills with their summaries. Empty when none active. */
  promptBlock(): string;
  /** The catalog with active / shed tags; routed when `routing` is given. */
  catalog(options?: { routing?: TurnRoutingContext | undefined; limit?: number | undefined }): string;
  /**
   * The provider-visible tool list (NOTES §3): the registered baseline sorted by name, then the active
   * skills' registered tools sorted by name, deduplicated, filtered to the allowed tool sets (default:
   * the ambient call context's). Same active set → identical array.
   */
  visibleToolNames(options?: { allowedToolSets?: readonly string[] | undefined }): string[];
  /** Plain state to persist between turns. */
  snapshot(): { readonly active: readonly string[] };
}

/** True when `name` matches a baseline entry (exact or `prefix*`). */
export function matchesToolPattern(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => (p.endsWith('*') ? name.startsWith(p.slice(0, -1)) : p === name));
}

/** Why a skill may not be activated from this source, or undefined when it may. */
export function activationRefusal(skill: Skill, source: CallSource, operatorAuthored: boolean): string | undefined {
  if (skill.sandbox && isAutonomousSource(source) && !operatorAuthored) {
    return `Skill "${skill.id}" starts a sandbox and may not be activated from an autonomous source (${source}) unless the turn is operator-authored.`;
  }
  return undefined;
}

/**
 * Create a skill session.
 *
 * @example
 * ```ts
 * const session = createSkillSession({ registry: skills });
 * session.activate(['minara.core'], { via: 'model' });
 * const tools = session.visibleToolNames(); // baseline then minara.core's tools
 * ```
 */
export function createSkillSession(options: SkillSessionOptions): SkillSession {
  const { registry, budgetChars = SKILL_BODY_BUDGET_CHARS, alwaysInclude = DEFAULT_ALWAYS_INCLUDE_TOOLS, onActivation } = options;
  const baselinePatterns = [...new Set([ACTIVATE_SKILLS_TOOL, TOOL_INVOKE_TOOL, ...alwaysInclude])];
  let active = new Set<string>();

  const activeSkills = (): Skill[] =>
    [...active].map((id) => registry.get(id)).filter((s): s is Skill => s !== undefined).sort(compareByImportance);

  const session: SkillSession = {
    registry,
    activate(ids, opts = {}) {
      const source = opts.source ?? 'user';
      const requested = [...new Set(ids.map((id) => id.trim()))];
      const missing = requested.filter((id) => !registry.has(id));
      if (missing.length > 0) {
        const suggestions = Object.fromEntries(missing.map((id) => [id, registry.suggest(id)]));
        throw new SkillNotFoundError(missing, suggestions, missing.map((id) => describeMissingSkill(registry, id)));
      }
      const refusals = requested.flatMap((id) => {
        const why = activationRefusal(registry.get(id) as Skill, source, opts.operatorAuthored === true);
        return why === undefined ? [] : [[id, why] as const];
      });
      if (refusals.length > 0) {
        throw new SkillActivationRefusedError(
          refusals.map(([id]) => id),
          `${refusals.map(([, why]) => why).join(' ')} Nothing was activated; the loaded set is unchanged.`,
        );
      }
      const previous = active;
      active = new Set(requested);
      const p = session.prompt();
      const result: SkillActivationResult = {
        active: session.activeIds(),
        included: p.included,
        shed: p.shed,
        added: requested.filter((id) => !previous.has(id)).sort(compareIds),
        removed: [...previous].filter((id) => !active.has(id)).sort(compareIds),
        tools: session.visibleToolNames(),
      };
      onActivation?.({ ...result, requested, via: opts.via ?? 'host', source, ...(opts.traceId !== undefined ? { traceId: opts.traceId } : {}) });
      return result;
    },
    clear() {
      active = new Set();
    },
    activeIds: () => activeSkills().map((s) => s.id),
    isActive: (id) => active.has(id) && registry.has(id),
    prompt: () => registry.promptFor([...active], { budgetChars }),
    promptBlock() {
      const p = session.prompt();
      const parts: string[] = [];
      if (p.text) parts.push(p.text);
      if (p.shed.length > 0) {
        const lines = p.shed.map((id) => {
          const s = registry.get(id);
          return `- ${id}: ${(s?.summary ?? s?.description ?? '').replace(/\s+/g, ' ').trim()}`;
        });
        parts.push(`## Active skills without their playbook (body shed for budget; tools still callable)\n${lines.join('\n')}`);
      }
      return parts.join('\n\n');
    },
    catalog(opts = {}) {
      const p = session.prompt();
      const state = { active: new Set([...p.included, ...p.shed]), shed: new Set(p.shed) };
      const render = { state, ...(opts.limit !== undefined ? { limit: opts.limit } : {}) };
      return opts.routing ? registry.buildRoutedCatalog(opts.routing, render) : registry.buildCatalog(render);
    },
    visibleToolNames(opts = {}) {
      const allowed = opts.allowedToolSets ?? registry.tools.currentContext()?.allowedToolSets;
      const registered = registry.tools.list(allowed ? { toolSets: allowed } : undefined).map((t) => t.name);
      const registeredSet = new Set(registered);
      const baseline = registered.filter((n) => matchesToolPattern(n, baselinePatterns)).sort(compareIds);
      const baselineSet = new Set(baseline);
      const fromSkills = new Set<string>();
      for (const s of activeSkills()) for (const t of s.toolNames) if (registeredSet.has(t) && !baselineSet.has(t)) fromSkills.add(t);
      return [...baseline, ...[...fromSkills].sort(compareIds)];
    },
    snapshot: () => ({ active: session.activeIds() }),
  };
  return session;
}

/** Sessions keyed by conversation session id, for `resolveSession` in the meta-tools. */
export interface SkillSessionStore {
  /** The session for `sessionId`, created on first use. */
  get(sessionId: string): SkillSession;
  delete(sessionId: string): boolean;
}

/** A small map of sessions (oldest evicted past `maxSessions`). */
export function createSkillSessionStore(options: SkillSessionOptions & { maxSessions?: number | undefined }): SkillSessionStore {
  const { maxSessions = 1000, ...sessionOptions } = options;
  const sessions = new Map<string, SkillSession>();
  return {
    get(sessionId) {
      let s = sessions.get(sessionId);
      if (!s) {
        s = createSkillSession(sessionOptions);
        sessions.set(sessionId, s);
        if (sessions.size > maxSessions) sessions.delete(sessions.keys().next().value as string);
      }
      return s;
    },
    delete: (sessionId) => sessions.delete(sessionId),
  };
}
