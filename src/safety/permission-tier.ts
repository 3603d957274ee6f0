/**
 * Permission tiers. The tool's static tier is a floor: a tier computed from arguments or raised by a
 * hook can only go up, never down.
 *
 * | tier | behaviour |
 * | --- | --- |
 * | `READ_ONLY` (1) | runs immediately |
 * | `CONFIRM_ONCE` (2) | asks on first use in a session, then remembers |
 * | `ALWAYS_CONFIRM` (3) | asks every call; autonomous sources need a stored grant |
 * | `MANUAL_ONLY` (4) | needs explicit approval; rejected from autonomous sources |
 *
 * @example
 * ```ts
 * defineTool({ name: 'get_price', permissionTier: PermissionTier.READ_ONLY, ... });
 * ```
 */
export const PermissionTier = {
  READ_ONLY: 1,
  CONFIRM_ONCE: 2,
  ALWAYS_CONFIRM: 3,
  MANUAL_ONLY: 4,
} as const;

/** One of the four tier values (1–4). */
export type PermissionTier = (typeof PermissionTier)[keyof typeof PermissionTier];

/** The tier's name (`READ_ONLY`, …) for messages and audit. */
export function permissionTierName(tier: PermissionTier): keyof typeof PermissionTier {
  const entry = Object.entries(PermissionTier).find(([, v]) => v === tier);
  if (!entry) throw new RangeError(`Unknown permission tier ${String(tier)}`);
  return entry[0] as keyof typeof PermissionTier;
}

/** True for a value that is one of the four tiers. */
export function isPermissionTier(value: unknown): value is PermissionTier {
  return value === 1 || value === 2 || value === 3 || value === 4;
}

/** The higher of two tiers (policies only tighten). */
export function maxTier(a: PermissionTier, b: PermissionTier): PermissionTier {
  return (a >= b ? a : b) as PermissionTier;
}

/** The lower of two tiers. */
export function minTier(a: PermissionTier, b: PermissionTier): PermissionTier {
  return (a <= b ? a : b) as PermissionTier;
}

/**
 * Where a call comes from. Autonomous sources (no human at the keyboard) are `cron`, `webhook`, `workflow` and
 * `heartbeat` (the background runner's periodic turn).
 * `mcp` is a call from an MCP host through `createMcpToolServer` (`minara mcp serve`): a person is at that
 * host, but approvals are decided here, out of band.
 */
export type CallSource = 'user' | 'cron' | 'webhook' | 'workflow' | 'subagent' | 'mcp' | 'heartbeat';

/** The sources with no human present to confirm. */
export const AUTONOMOUS_SOURCES: ReadonlySet<CallSource> = new Set<CallSource>(['cron', 'webhook', 'workflow', 'heartbeat']);

/** True when no human is present to confirm a call from this source. */
export function isAutonomousSource(source: CallSource): boolean {
  return AUTONOMOUS_SOURCES.has(source);
}
