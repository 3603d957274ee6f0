import { MinaraError } from '../errors/minara-error';
import type { GrantArgLimit, GrantRecord, Storage } from '../storage/types';
import type { IdGenerator } from '../util/ids';
import type { GrantsApi, StoredGrantInput } from '../tools/types';
import { AUTONOMOUS_SOURCES, type CallSource } from './permission-tier';

/** The grant service behind `registry.grants`, plus the lookups the tier gate needs. */
export interface GrantService extends GrantsApi {
  /** Remember a CONFIRM_ONCE approval for the rest of the session. */
  grantForSession(sessionId: string, toolName: string): Promise<GrantRecord>;
  hasSessionGrant(sessionId: string, toolName: string): Promise<boolean>;
  /** The first live stored grant covering this autonomous call, if any. */
  findStoredGrant(toolName: string, source: CallSource, input: unknown): Promise<GrantRecord | undefined>;
}

/** Grants: session grants for CONFIRM_ONCE, stored grants (with argument limits and expiry) for autonomous calls. */
export function createGrantService(options: { storage: Storage; now: () => Date; generateId: IdGenerator }): GrantService {
  const { storage, now, generateId } = options;
  const live = (g: GrantRecord, at: number) => g.revokedAt === undefined && (g.expiresAt === undefined || Date.parse(g.expiresAt) > at);

  return {
    async create(input: StoredGrantInput) {
      if (typeof input?.toolName !== 'string' || input.toolName === '') {
        throw new MinaraError('INVALID_ARGUMENT', 'grants.create: "toolName" must be a non-empty string.');
      }
      for (const s of input.sources ?? []) {
        if (!AUTONOMOUS_SOURCES.has(s)) {
          throw new MinaraError('INVALID_ARGUMENT', `grants.create: "sources" may only name autonomous sources (cron, webhook, workflow); got ${JSON.stringify(s)}.`);
        }
      }
      validateLimits(input.argLimits);
      const created = now();
      let expiresAt: string | undefined;
      if (typeof input.expiresAt === 'number') {
        if (!(input.expiresAt > 0)) throw new MinaraError('INVALID_ARGUMENT', 'grants.create: "expiresAt" as a duration must be a positive number of milliseconds.');
        expiresAt = new Date(created.getTime() + input.expiresAt).toISOString();
      } else if (typeof input.expiresAt === 'string') {
        if (Number.isNaN(Date.parse(input.expiresAt))) throw new MinaraError('INVALID_ARGUMENT', 'grants.create: "expiresAt" must be an ISO date string or a duration in ms.');
        expiresAt = new Date(input.expiresAt).toISOString();
      }
      const grant: GrantRecord = {
        id: generateId('grt'),
        kind: 'stored',
        toolName: input.toolName,
        sources: input.sources ? [...input.sources] : undefined,
        argLimits: input.argLimits,
        createdAt: created.toISOString(),
        expiresAt,
        note: input.note,
      };
      await storage.grants.create(grant);
      return grant;
    },
    revoke: (grantId) => storage.grants.revoke(grantId, now().toISOString()),
    list: (query = {}) => storage.grants.list(query),
    async grantForSession(sessionId, toolName) {
      const grant: GrantRecord = { id: generateId('grt'), kind: 'session', toolName, sessionId, createdAt: now().toISOString() };
      await storage.grants.create(grant);
      return grant;
    },
    async hasSessionGrant(sessionId, toolName) {
      const at = now().getTime();
      const grants = await storage.grants.list({ kind: 'session', sessionId, toolName });
      return grants.some((g) => live(g, at));
    },
    async findStoredGrant(toolName, source, input) {
      const at = now().getTime();
      const grants = await storage.grants.list({ kind: 'stored', toolName });
      return grants.find(
        (g) => live(g, at) && (g.sources === undefined || g.sources.length === 0 || g.sources.includes(source)) && withinLimits(g.argLimits, input),
      );
    },
  };
}

function validateLimits(limits: Readonly<Record<string, GrantArgLimit>> | undefined): void {
  if (limits === undefined) return;
  for (const [field, limit] of Object.entries(limits)) {
    const bad = (what: string) => new MinaraError('INVALID_ARGUMENT', `grants.create: argLimits.${field}.${what}.`);
    if (limit.max !== undefined && !Number.isFinite(limit.max)) throw bad('max must be a finite number');
    if (limit.min !== undefined && !Number.isFinite(limit.min)) throw bad('min must be a finite number');
    if (limit.oneOf !== undefined && (!Array.isArray(limit.oneOf) || limit.oneOf.length === 0)) throw bad('oneOf must be a non-empty array');
  }
}

/** True when every limited field is present in `input` and within its limit. */
export function withinLimits(limits: Readonly<Record<string, GrantArgLimit>> | undefined, input: unknown): boolean {
  if (limits === undefined) return true;
  if (input === null || typeof input !== 'object') return Object.keys(limits).length === 0;
  const values = input as Record<string, unknown>;
  for (const [field, limit] of Object.entries(limits)) {
    const value = values[field];
    if (limit.max !== undefined || limit.min !== undefined) {
      const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
      if (!Number.isFinite(n)) return false;
      if (limit.max !== undefined && n > limit.max) return false;
      if (limit.min !== undefined && n < limit.min) return false;
    }
    if (limit.oneOf !== undefined && !limit.oneOf.some((allowed) => allowed === value)) return false;
  }
  return true;
}
