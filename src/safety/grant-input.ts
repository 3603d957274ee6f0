import { MinaraError } from '../errors/minara-error';
import type { GrantArgLimit } from '../storage/types';
import type { StoredGrantInput } from '../tools/types';
import { AUTONOMOUS_SOURCES } from './permission-tier';

/** What the grant service knows of the registry, to check a grant's tools and tool sets when it is created. */
export interface GrantCatalog {
  /** The tool's static tier, or undefined when no such tool is registered. (A MANUAL_ONLY tool may be named; the gate still refuses it to autonomous sources.) */
  toolTier(name: string): number | undefined;
  /** True when a tool set of that name is known. */
  hasToolSet(name: string): boolean;
}

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
export function checkGrantInput(input: StoredGrantInput, catalog: GrantCatalog | undefined, now: Date): CheckedGrantInput {
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
  const capPerCallUsd = usd(input.capPerCallUsd, 'capPerCallUsd');
  const capPerDayUsd = usd(input.capPerDayUsd, 'capPerDayUsd');
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
