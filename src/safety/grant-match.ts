import type { GrantRecord, Storage } from '../storage/types';
import { withinLimits } from './grant-limits';

/** The reservation a call made against a grant's daily cap: given back if the call does not execute. */
export interface GrantClaim {
  readonly grantId: string;
  /** UTC day of the reservation (`YYYY-MM-DD`). */
  readonly day: string;
  readonly amountUsd: number;
}

/** What an autonomous call asks of the stored grants. */
export interface GrantQueryCall {
  readonly toolName: string;
  readonly toolSet: string;
  readonly source: string;
  /** The user the call acts for; a grant for a user matches only that user's calls. */
  readonly userId?: string | undefined;
  /** The arguments as grants judge them (`grantView`: raw arguments overlaid with the order facts). */
  readonly view: unknown;
  /** The order's true notional in USD (0 for a call that moves no funds). */
  readonly notionalUsd: number;
}

/** The outcome of looking for a grant: one covered it (and its day's room was reserved), a cap refused it, or none applies. */
export type GrantMatch =
  | { readonly kind: 'granted'; readonly grant: GrantRecord; readonly claim: GrantClaim }
  | { readonly kind: 'capped'; readonly grant: GrantRecord; readonly reason: string }
  | { readonly kind: 'none' };

/** The UTC day of `at`, as spend is kept. */
export const utcDay = (at: Date): string => at.toISOString().slice(0, 10);

const usd = (n: number) => `$${n.toFixed(2)}`;

/** True when the grant is neither revoked nor expired at `at` (ms). */
export function grantIsLive(g: GrantRecord, at: number): boolean {
  return g.revokedAt === undefined && (g.expiresAt === undefined || Date.parse(g.expiresAt) > at);
}

/** True when the grant names the tool, directly, in `tools`, or through one of its tool sets (expanded). */
export function grantCoversTool(g: GrantRecord, toolName: string, toolSet: string, expand: (names: readonly string[]) => ReadonlySet<string>): boolean {
  if (g.toolName === toolName) return true;
  if (g.tools?.includes(toolName)) return true;
  return g.toolSets !== undefined && g.toolSets.length > 0 && expand(g.toolSets).has(toolSet);
}

/** The live stored grants that cover this tool for this user (any source), newest first. */
export async function coveringGrants(
  storage: Storage,
  call: Pick<GrantQueryCall, 'toolName' | 'toolSet' | 'userId'>,
  at: number,
  expand: (names: readonly string[]) => ReadonlySet<string>,
): Promise<GrantRecord[]> {
  const grants = await storage.grants.list({ kind: 'stored' });
  return grants.filter((g) => grantIsLive(g, at) && (g.userId === undefined || g.userId === call.userId) && grantCoversTool(g, call.toolName, call.toolSet, expand));
}

/**
 * Find the stored grant that lets this autonomous call run, and reserve the call's notional against the
 * grant's daily cap (atomic across processes: two racing calls never both pass a cap only one fits under).
 * Grants are tried newest first; one whose per-call cap the order exceeds, or whose day has too little left,
 * is skipped, and if none remains the answer names the cap that refused it.
 */
export async function matchStoredGrant(
  deps: { readonly storage: Storage; readonly now: () => Date; readonly expand: (names: readonly string[]) => ReadonlySet<string> },
  call: GrantQueryCall,
): Promise<GrantMatch> {
  const at = deps.now();
  const day = utcDay(at);
  const candidates = (await coveringGrants(deps.storage, call, at.getTime(), deps.expand)).filter(
    (g) => (g.sources === undefined || g.sources.length === 0 || g.sources.includes(call.source)) && withinLimits(g.argLimits, call.view),
  );
  let capped: GrantMatch | undefined;
  for (const grant of candidates) {
    if (grant.capPerCallUsd !== undefined && call.notionalUsd > grant.capPerCallUsd + 1e-9) {
      capped ??= { kind: 'capped', grant, reason: `the order's notional ${usd(call.notionalUsd)} is above grant ${grant.id}'s cap of ${usd(grant.capPerCallUsd)} per call` };
      continue;
    }
    const reservation = await deps.storage.controls.reserveGrantSpend({ grantId: grant.id, day, amountUsd: call.notionalUsd, capUsd: grant.capPerDayUsd });
    if (!reservation.reserved) {
      const left = Math.max(0, (grant.capPerDayUsd ?? 0) - reservation.spentUsd);
      capped ??= { kind: 'capped', grant, reason: `grant ${grant.id} has ${usd(left)} left of its ${usd(grant.capPerDayUsd ?? 0)} per day (UTC ${day}); this order is ${usd(call.notionalUsd)}` };
      continue;
    }
    return { kind: 'granted', grant, claim: { grantId: grant.id, day, amountUsd: call.notionalUsd } };
  }
  return capped ?? { kind: 'none' };
}

/**
 * What the covering grants of this user still allow today: the most any one of them has left under its daily
 * cap (`undefined` when none covers the tool or none has a daily cap). Previews and approval requests show it.
 */
export async function grantLeftTodayUsd(
  deps: { readonly storage: Storage; readonly now: () => Date; readonly expand: (names: readonly string[]) => ReadonlySet<string> },
  call: Pick<GrantQueryCall, 'toolName' | 'toolSet' | 'userId'>,
): Promise<number | undefined> {
  const at = deps.now();
  const capped = (await coveringGrants(deps.storage, call, at.getTime(), deps.expand)).filter((g) => g.capPerDayUsd !== undefined);
  if (capped.length === 0) return undefined;
  const day = utcDay(at);
  let best = 0;
  for (const g of capped) best = Math.max(best, g.capPerDayUsd! - (await deps.storage.controls.grantSpend(g.id, day)));
  return Math.max(0, Math.round(best * 100) / 100);
}
