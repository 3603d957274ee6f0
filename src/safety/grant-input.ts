import { MinaraError } from '../errors/minara-error';
import type { GrantArgLimit } from '../storage/types';
import type { StoredGrantInput } from '../tools/types';
import { AUTONOMOUS_SOURCES, PermissionTier } from './permission-tier';

/** What the grant service knows of the registry, to check a grant's tools and tool sets when it is created. */
export interface GrantCatalog {
  /** The tool's static tier, or undefined when no such tool is registered. A grant naming a MANUAL_ONLY tool is refused. */
  toolTier(name: string): number | undefined;
  /** True when a tool set of that name is known. */
  hasToolSet(name: string): boolean;
  /** The MANUAL_ONLY tools the sets cover (through `includes` too): a grant for such a set is refused. @default none known */
  manualOnlyIn?(toolSets: readonly string[]): readonly string[];
}

/**
 * The most a stored grant may allow, set by the operator: a cap per call and per UTC day in USD, and a longest
 * lifetime. A grant above any bound is refused (`INVALID_ARGUMENT` naming the field); a grant that leaves a cap or
 * its expiry out gets the bound. `createApp` takes the caps from the finance limits (`maxTradeUsd` per call,
 * `maxTotalExposureUsd` per day) and the lifetime from `MINARA_GRANT_MAX_DAYS`.
 */
export interface GrantBounds {
  /** Largest `capPerCallUsd`. @default no bound */
  readonly maxCapPerCallUsd?: number | undefined;
  /** Largest `capPerDayUsd`. @default no bound */
  readonly maxCapPerDayUsd?: number | undefined;
  /** Longest lifetime in ms from creation. @default {@link DEFAULT_GRANT_MAX_LIFETIME_MS} (90 days) */
  readonly maxLifetimeMs?: number | undefined;
}

/** The longest a stored grant lives unless the operator says otherwise: 90 days. */
export const DEFAULT_GRANT_MAX_LIFETIME_MS = 90 * 86_400_000;

/**
 * Check grant bounds (a registry's `grantBounds`): each a finite number > 0 when given.
 * @throws MinaraError `CONFIG_INVALID` naming `where` and the field
 */
export function checkGrantBounds(bounds: GrantBounds, where: string): GrantBounds {
  if (typeof bounds !== 'object' || bounds === null) throw new MinaraError('CONFIG_INVALID', `${where}: expected { maxCapPerCallUsd?, maxCapPerDayUsd?, maxLifetimeMs? }.`);
  for (const key of ['maxCapPerCallUsd', 'maxCapPerDayUsd', 'maxLifetimeMs'] as const) {
    const v = bounds[key];
    if (v !== undefined && !(typeof v === 'number' && Number.isFinite(v) && v > 0)) throw new MinaraError('CONFIG_INVALID', `${where}.${key}: expected a finite number > 0, got ${JSON.stringify(v)}.`);
  }
  return bounds;
}

const money = (n: number) => `$${n.toLocaleString('en-US', { maximumFractionDigits: 2 })}`;
const days = (ms: number) => (ms % 86_400_000 === 0 ? `${ms / 86_400_000} days` : `${Math.round(ms / 3_600_000)} hours`);

/** A grant input, checked: the fields a stored grant record takes. */
export interface CheckedGrantInput {
  readonly toolName: string;
  readonly tools?: readonly string[] | undefined;
  readonly toolSets?: readonly string[] | undefined;
  readonly userId?: string | undefined;
  readonly sources?: readonly string[] | undefined;
  readonly argLimits?: Readonly<Record<string, GrantArgLimit>> | undefined;
  readonly capPerCallUsd?: number | undefined;
  readonly capPerDayUsd?: number | undefined;
  readonly expiresAt?: string | undefined;
  readonly note?: string | undefined;
}

const USER_ID = /^[A-Za-z0-9._:@-]{1,128}$/;
const bad = (field: string, expected: string) => new MinaraError('INVALID_ARGUMENT', `grants.create: "${field}" ${expected}.`);

function names(value: unknown, field: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.length === 0 || value.some((v) => typeof v !== 'string' || v.trim() === '' || v.length > 128)) {
    throw bad(field, 'must be a non-empty array of names');
  }
  return [...new Set(value as string[])];
}

function usd(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw bad(field, `must be a finite number of USD ≥ 0, got ${JSON.stringify(value)}`);
  return value;
}

/** A cap within the operator's bound: above it is refused; left out, it is the bound. */
function bounded(cap: number | undefined, bound: number | undefined, field: string, per: string): number | undefined {
  if (bound === undefined) return cap;
  if (cap === undefined) return bound;
  if (cap > bound) throw bad(field, `(${money(cap)}) is above the operator's limit of ${money(bound)} ${per}; give at most ${bound}`);
  return cap;
}

function checkLimits(limits: Readonly<Record<string, GrantArgLimit>> | undefined): void {
  if (limits === undefined) return;
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) throw bad('argLimits', 'must be an object of field → { max?, min?, oneOf? }');
  for (const [field, limit] of Object.entries(limits)) {
    const wrong = (what: string) => bad(`argLimits.${field}.${what.split(' ')[0]}`, what.slice(what.indexOf(' ') + 1));
    if (limit.max !== undefined && !Number.isFinite(limit.max)) throw wrong('max must be a finite number');
    if (limit.min !== undefined && !Number.isFinite(limit.min)) throw wrong('min must be a finite number');
    if (limit.oneOf !== undefined && (!Array.isArray(limit.oneOf) || limit.oneOf.length === 0)) throw wrong('oneOf must be a non-empty array');
  }
}

/**
 * Check a stored grant's input and name the first bad field: at least one tool or tool set, every one known to
 * the registry, autonomous sources only, caps that are USD amounts ≥ 0,
 * an expiry in the future. Nothing is stored when it throws.
 */
export function checkGrantInput(input: StoredGrantInput, catalog: GrantCatalog | undefined, now: Date, bounds: GrantBounds = {}): CheckedGrantInput {
  if (typeof input !== 'object' || input === null) throw new MinaraError('INVALID_ARGUMENT', 'grants.create: expected an object { tools | toolSets | toolName, sources?, capPerCallUsd?, capPerDayUsd?, expiresAt?, userId? }.');
  if (input.toolName !== undefined && (typeof input.toolName !== 'string' || input.toolName === '')) throw bad('toolName', 'must be a non-empty string');
  const tools = names(input.tools, 'tools');
  const toolSets = names(input.toolSets, 'toolSets');
  const single = input.toolName !== undefined && input.toolName !== '*' ? input.toolName : undefined;
  const allTools = [...new Set([...(single !== undefined ? [single] : []), ...(tools ?? [])])];
  if (allTools.length === 0 && toolSets === undefined) throw bad('tools', 'or "toolSets" must name at least one tool or tool set');
  if (catalog) {
    for (const t of allTools) {
      const tier = catalog.toolTier(t);
      if (tier === undefined) throw bad(single === t && !tools?.includes(t) ? 'toolName' : 'tools', `names an unknown tool ${JSON.stringify(t)}`);
    }
    for (const s of toolSets ?? []) if (!catalog.hasToolSet(s)) throw bad('toolSets', `names an unknown tool set ${JSON.stringify(s)}`);
    // MANUAL_ONLY means a person approves every call: no grant stands in for that, named or through a set.
    for (const t of allTools) {
      if (catalog.toolTier(t) === PermissionTier.MANUAL_ONLY) {
        throw bad(single === t && !tools?.includes(t) ? 'toolName' : 'tools', `names ${JSON.stringify(t)}, a MANUAL_ONLY tool: it needs a person's approval on every call and can never be granted`);
      }
    }
    const manual = toolSets && catalog.manualOnlyIn ? catalog.manualOnlyIn(toolSets) : [];
    if (manual.length > 0) {
      throw bad('toolSets', `covers ${manual.map((t) => JSON.stringify(t)).join(', ')}, a MANUAL_ONLY tool (it needs a person's approval on every call and can never be granted); name the tools to grant in "tools" instead`);
    }
  }
  if (input.userId !== undefined && (typeof input.userId !== 'string' || !USER_ID.test(input.userId))) throw bad('userId', 'must be 1–128 letters, digits or . _ : @ -');
  let sources: string[] | undefined;
  if (input.sources !== undefined) {
    if (!Array.isArray(input.sources)) throw bad('sources', 'must be an array of autonomous sources (cron, heartbeat, webhook, workflow)');
    for (const s of input.sources) {
      if (!AUTONOMOUS_SOURCES.has(s)) throw bad('sources', `may only name autonomous sources (cron, heartbeat, webhook, workflow); got ${JSON.stringify(s)}`);
    }
    sources = [...new Set(input.sources as string[])];
  }
  checkLimits(input.argLimits);
  const capPerCallUsd = bounded(usd(input.capPerCallUsd, 'capPerCallUsd'), bounds.maxCapPerCallUsd, 'capPerCallUsd', 'per call');
  const capPerDayUsd = bounded(usd(input.capPerDayUsd, 'capPerDayUsd'), bounds.maxCapPerDayUsd, 'capPerDayUsd', 'per day');
  let expiresAt: string | undefined;
  if (typeof input.expiresAt === 'number') {
    if (!(Number.isFinite(input.expiresAt) && input.expiresAt > 0)) throw bad('expiresAt', 'as a duration must be a positive number of milliseconds');
    expiresAt = new Date(now.getTime() + input.expiresAt).toISOString();
  } else if (typeof input.expiresAt === 'string') {
    const at = Date.parse(input.expiresAt);
    if (Number.isNaN(at)) throw bad('expiresAt', 'must be an ISO date string or a duration in ms');
    if (at <= now.getTime()) throw bad('expiresAt', `is in the past (${input.expiresAt}); give a time after ${now.toISOString()}`);
    expiresAt = new Date(at).toISOString();
  } else if (input.expiresAt !== undefined) throw bad('expiresAt', 'must be an ISO date string or a duration in ms');
  // No grant lives forever: at most the operator's longest lifetime, which one without an expiry gets.
  const maxLifetimeMs = bounds.maxLifetimeMs ?? DEFAULT_GRANT_MAX_LIFETIME_MS;
  const latest = now.getTime() + maxLifetimeMs;
  if (expiresAt === undefined) expiresAt = new Date(latest).toISOString();
  else if (Date.parse(expiresAt) > latest) {
    throw bad('expiresAt', `(${expiresAt}) outlives the longest a grant may live (${days(maxLifetimeMs)}, set by the operator); give a time before ${new Date(latest).toISOString()}`);
  }
  if (input.note !== undefined && (typeof input.note !== 'string' || input.note.length > 2000)) throw bad('note', 'must be a string of at most 2000 characters');
  const toolName = allTools.length === 1 && toolSets === undefined ? allTools[0]! : '*';
  return {
    toolName,
    ...(toolName === '*' && allTools.length > 0 ? { tools: allTools } : {}),
    ...(toolSets ? { toolSets } : {}),
    ...(input.userId !== undefined ? { userId: input.userId } : {}),
    ...(sources ? { sources } : {}),
    ...(input.argLimits ? { argLimits: input.argLimits } : {}),
    ...(capPerCallUsd !== undefined ? { capPerCallUsd } : {}),
    ...(capPerDayUsd !== undefined ? { capPerDayUsd } : {}),
    ...(expiresAt ? { expiresAt } : {}),
    ...(input.note !== undefined ? { note: input.note } : {}),
  };
}
