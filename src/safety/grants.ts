import { MinaraError } from '../errors/minara-error';
import type { GrantRecord, Storage } from '../storage/types';
import type { IdGenerator } from '../util/ids';
import type { GrantActor, GrantsApi, StoredGrantInput } from '../tools/types';
import { checkGrantBounds, checkGrantInput, type GrantBounds, type GrantCatalog } from './grant-input';
import { type GrantMatch, type GrantQueryCall, grantIsLive, grantLeftTodayUsd, matchStoredGrant, utcDay } from './grant-match';

export { withinLimits } from './grant-limits';

/** The grant service behind `registry.grants`, plus the lookups the tier gate needs. */
export interface GrantService extends GrantsApi {
  /** Remember a CONFIRM_ONCE approval for the rest of the session. */
  grantForSession(sessionId: string, toolName: string): Promise<GrantRecord>;
  hasSessionGrant(sessionId: string, toolName: string): Promise<boolean>;
  /**
   * The live stored grant covering this autonomous call (tool or tool set, user, source, argument limits, caps),
   * with the call's notional reserved against the grant's daily cap; or the cap that refused it; or none.
   */
  matchStoredGrant(call: GrantQueryCall): Promise<GrantMatch>;
  /** Give back a reservation whose call did not execute. */
  refund(claim: { readonly grantId: string; readonly day: string; readonly amountUsd: number }): Promise<void>;
  /** What the grants covering this tool for this user have left today (the most any one has); undefined without a daily cap. */
  leftTodayFor(call: Pick<GrantQueryCall, 'toolName' | 'toolSet' | 'userId'>): Promise<number | undefined>;
}

/** Options of {@link createGrantService}. */
export interface GrantServiceOptions {
  readonly storage: Storage;
  readonly now: () => Date;
  readonly generateId: IdGenerator;
  /** The registry's tools and tool sets, so a grant naming an unknown one is refused at creation. */
  readonly catalog?: GrantCatalog | undefined;
  /**
   * The most a stored grant may allow (caps per call and per day, longest lifetime), or a function read at each
   * create (so it follows limits that change). @default only the 90-day lifetime
   */
  readonly bounds?: GrantBounds | (() => GrantBounds | Promise<GrantBounds>) | undefined;
  /** Expand tool-set names through `includes` (a grant for `trade` covers the sets it includes). @default the names as given */
  readonly expandToolSets?: ((names: readonly string[]) => ReadonlySet<string>) | undefined;
}

/**
 * Grants: session grants for CONFIRM_ONCE; stored grants (for a user, tools or tool sets, sources, argument
 * limits, a cap per call and per day in USD, an expiry) for autonomous calls. Every create and revoke of a stored
 * grant appends an audit row (`grant.create`, `grant.revoke`, source `operator`).
 */
export function createGrantService(options: GrantServiceOptions): GrantService {
  const { storage, now, generateId, catalog } = options;
  const expand = options.expandToolSets ?? ((names: readonly string[]) => new Set(names));
  const spendDeps = { storage, now, expand };

  async function audit(toolName: 'grant.create' | 'grant.revoke', args: Record<string, unknown>, actor: GrantActor | undefined): Promise<void> {
    await storage.audit.append({
      at: now().toISOString(), toolName, tier: 0, source: 'operator', decision: 'allowed', durationMs: 0,
      argsJson: JSON.stringify({ ...args, by: actor?.by ?? 'sdk' }),
    });
  }

  return {
    async create(input: StoredGrantInput, actor?: GrantActor) {
      const created = now();
      const bounds = checkGrantBounds((typeof options.bounds === 'function' ? await options.bounds() : options.bounds) ?? {}, 'grant bounds');
      const checked = checkGrantInput(input, catalog, created, bounds);
      const grant: GrantRecord = {
        id: generateId('grt'),
        kind: 'stored',
        ...checked,
        createdAt: created.toISOString(),
        createdBy: actor?.by ?? 'sdk',
      };
      await storage.grants.create(grant);
      await audit('grant.create', { grantId: grant.id, ...checked }, actor);
      return grant;
    },
    async revoke(grantId, actor) {
      if (typeof grantId !== 'string' || grantId === '') throw new MinaraError('INVALID_ARGUMENT', 'grants.revoke: "grantId" must be a non-empty string.');
      const revoked = await storage.grants.revoke(grantId, now().toISOString());
      if (revoked) await audit('grant.revoke', { grantId }, actor);
      return revoked;
    },
    list: (query = {}) => storage.grants.list(query),
    get: (grantId) => storage.grants.get(grantId),
    async spentToday(grantId) {
      return storage.controls.grantSpend(grantId, utcDay(now()));
    },
    async leftToday(grantId) {
      const g = await storage.grants.get(grantId);
      if (!g || g.capPerDayUsd === undefined || !grantIsLive(g, now().getTime())) return g && g.capPerDayUsd !== undefined ? 0 : undefined;
      return Math.max(0, g.capPerDayUsd - (await storage.controls.grantSpend(grantId, utcDay(now()))));
    },
    async grantForSession(sessionId, toolName) {
      const grant: GrantRecord = { id: generateId('grt'), kind: 'session', toolName, sessionId, createdAt: now().toISOString() };
      await storage.grants.create(grant);
      return grant;
    },
    async hasSessionGrant(sessionId, toolName) {
      const at = now().getTime();
      const grants = await storage.grants.list({ kind: 'session', sessionId, toolName });
      return grants.some((g) => grantIsLive(g, at));
    },
    matchStoredGrant: (call) => matchStoredGrant(spendDeps, call),
    refund: (claim) => storage.controls.refundGrantSpend(claim),
    leftTodayFor: (call) => grantLeftTodayUsd(spendDeps, call),
  };
}
