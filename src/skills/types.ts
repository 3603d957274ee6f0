import type { CallSource } from '../safety/permission-tier';
import type { AssetClass, LifecycleStage } from './taxonomy';

/** How a skill may be activated. `auto` skills appear in the catalogs; `manual` skills are activated by id only. */
export type SkillActivation = 'auto' | 'manual';

/** Routing metadata: when the L0 router should rank the skill. */
export interface SkillRouting {
  /** Words or phrases (any language) that signal the skill; +30 per hit, capped at +60. */
  readonly keywords?: readonly string[] | undefined;
  /** Any hit drops the skill from the catalog for the turn. */
  readonly negativeKeywords?: readonly string[] | undefined;
  /** Lifecycle stages the skill serves; a match with the message's stages adds +20. */
  readonly lifecycleStages?: readonly LifecycleStage[] | undefined;
  /** Asset classes the skill covers; a match with the message's asset classes adds +15. */
  readonly assetClasses?: readonly AssetClass[] | undefined;
  /** Skill ids to lift (+10) when this skill is hit (keyword or signal match). */
  readonly coActivate?: readonly string[] | undefined;
  /** Signal sources (`cron`, `webhook`, …), signal ids or `source:signal_id` that add +25 on signal turns. */
  readonly signalSources?: readonly string[] | undefined;
}

/** Graceful-degradation conditions; a failed condition hides the skill (score −∞). */
export interface SkillConditions {
  /** Environment variables that must be set and non-empty (checked at registration). */
  readonly requiresEnv?: readonly string[] | undefined;
  /** Tools that must be registered and visible (checked at routing time). */
  readonly requiresTools?: readonly string[] | undefined;
  /** Tool sets that must have at least one visible tool (checked at routing time). */
  readonly requiresToolsets?: readonly string[] | undefined;
  /** Surface the skill only when none of these tools is registered (checked at routing time). */
  readonly fallbackForTools?: readonly string[] | undefined;
  /** Surface the skill only when none of these tool sets has a visible tool (checked at routing time). */
  readonly fallbackForToolsets?: readonly string[] | undefined;
  /** Node platforms (`darwin`, `linux`, `win32`) the skill runs on (checked at registration). */
  readonly platforms?: readonly string[] | undefined;
  /** Executables that must all be on PATH (OpenClaw `requires.bins`; checked at registration). */
  readonly requiresBins?: readonly string[] | undefined;
  /** At least one of these executables must be on PATH (OpenClaw `requires.anyBins`). */
  readonly requiresAnyBins?: readonly string[] | undefined;
}

/** A reference file shipped beside a SKILL.md (`references/*.md`). */
export interface SkillReference {
  /** Path relative to the package, e.g. `references/methodology.md`. */
  readonly name: string;
  /** Absolute path on disk. */
  readonly path: string;
}

/** Where a skill came from. */
export interface SkillOrigin {
  readonly kind: 'builtin' | 'directory' | 'external';
  /** The SKILL.md file, for skills loaded from disk. */
  readonly file?: string | undefined;
  /** SPDX id of the licence, for external skills. */
  readonly license?: string | undefined;
  /** True when the licence is copyleft (GPL family, MPL). */
  readonly copyleft?: boolean | undefined;
}

/** What `defineSkill` accepts. Only `id`, `description` and `prompt` are required. */
export interface SkillDefinition {
  /** Unique id, lowercase, dotted or dashed (`minara.core`, `deep-research`). */
  readonly id: string;
  /** One line the model chooses by (≤ 80 characters recommended). */
  readonly description: string;
  /** The playbook loaded into the prompt on activation (≤ ~3 KB recommended). */
  readonly prompt: string;
  /** Mid-detail guidance shown in the catalog when the body is shed for budget. */
  readonly summary?: string | undefined;
  /** Tools the skill surfaces when active. Each must be registered (unless listed in `conditions.requiresTools`). */
  readonly toolNames?: readonly string[] | undefined;
  /** 0–100; lower ranks first (fallback score is `100 − priority`) and is shed last. @default 50 */
  readonly priority?: number | undefined;
  /** @default 'auto' */
  readonly activation?: SkillActivation | undefined;
  /** Sandbox-class skill (spins up an isolated VM): refused from an autonomous source unless operator-authored. @default false */
  readonly sandbox?: boolean | undefined;
  readonly routing?: SkillRouting | undefined;
  readonly conditions?: SkillConditions | undefined;
  /** Reference files (filled by the SKILL.md loader). */
  readonly references?: readonly SkillReference[] | undefined;
  /** Category for the catalog page (Hermes `metadata.hermes.category`). */
  readonly category?: string | undefined;
  /** Origin of the skill. @default { kind: 'builtin' } */
  readonly origin?: SkillOrigin | undefined;
}

/** Normalised routing: every list present. */
export interface NormalizedRouting {
  readonly keywords: readonly string[];
  readonly negativeKeywords: readonly string[];
  readonly lifecycleStages: readonly LifecycleStage[];
  readonly assetClasses: readonly AssetClass[];
  readonly coActivate: readonly string[];
  readonly signalSources: readonly string[];
}

/** Normalised conditions: every list present. */
export interface NormalizedConditions {
  readonly requiresEnv: readonly string[];
  readonly requiresTools: readonly string[];
  readonly requiresToolsets: readonly string[];
  readonly fallbackForTools: readonly string[];
  readonly fallbackForToolsets: readonly string[];
  readonly platforms: readonly string[];
  readonly requiresBins: readonly string[];
  readonly requiresAnyBins: readonly string[];
}

/** A validated, frozen skill as `defineSkill` returns it. */
export interface Skill {
  readonly kind: 'skill';
  readonly id: string;
  readonly description: string;
  readonly prompt: string;
  readonly summary?: string | undefined;
  readonly toolNames: readonly string[];
  readonly priority: number;
  readonly activation: SkillActivation;
  readonly sandbox: boolean;
  readonly routing: NormalizedRouting;
  readonly conditions: NormalizedConditions;
  readonly references: readonly SkillReference[];
  readonly category?: string | undefined;
  readonly origin: SkillOrigin;
  /** Non-fatal findings (long description, long prompt). */
  readonly warnings: readonly string[];
}

/** Input of one routing pass (the spec's `TurnRoutingContext`). */
export interface TurnRoutingContext {
  /** The user message (or signal text) to route. */
  readonly message: string;
  /** Where the turn came from. @default 'user' */
  readonly source?: CallSource | undefined;
  /** The signal that started an autonomous turn, if any. */
  readonly signal?: SignalContext | undefined;
}

/** One ranked skill in the routed catalog. */
export interface RoutedCatalogEntry {
  readonly id: string;
  readonly score: number;
  /** Why it scored, in a fixed order: `kw:buy`, `stage:decide`, `asset:perps`, `co:minara.core`, `signal:cron`. */
  readonly reasons: readonly string[];
}

/** A skill's routing verdict including dropped ones (score `-Infinity`, reasons say why). */
export interface RouteExplanation extends RoutedCatalogEntry {
  readonly dropped: boolean;
}

/** Severity of a signal. */
export type SignalSeverity = 'info' | 'warn' | 'critical';

/**
 * The context a cron fire or webhook delivery builds for an autonomous turn. Wire shape, keys as the
 * spec writes them (snake_case), so a webhook payload can be validated and passed through unchanged.
 */
export interface SignalContext {
  readonly source: CallSource;
  readonly signal_id: string;
  readonly asset?: { readonly symbol: string; readonly asset_class?: AssetClass | undefined } | undefined;
  readonly severity?: SignalSeverity | undefined;
  /** Skills to activate without waiting for the model (prose only; never bypasses the tier gate). */
  readonly preload_skills?: readonly string[] | undefined;
  /** Stages the router adds to those inferred from the message. */
  readonly suggested_stages?: readonly LifecycleStage[] | undefined;
  readonly trace_id?: string | undefined;
}
