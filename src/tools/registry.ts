import { deriveAuditChainKey } from '../safety/audit-keys';
import { inSpan } from '../util/tracing';
import type { MinaraBus } from '../events/bus';
import { MinaraError } from '../errors/minara-error';
import { APPROVAL_KEY_BYTES, isProductionEnv } from '../safety/approval-key';
import { createApprovalService } from '../safety/approvals';
import { createCircuitBreakers, type CircuitBreakers } from '../safety/circuit-breakers';
import { resolveUntrustedContentPolicy, type UntrustedContentPolicy } from '../safety/untrusted';
import { createEmergencyStop } from '../safety/emergency-stop';
import { checkGrantBounds, type GrantBounds } from '../safety/grant-input';
import { createGrantService } from '../safety/grants';
import { createCapabilitySwitches } from '../safety/capability-switches';
import { isPermissionTier, PermissionTier, permissionTierName } from '../safety/permission-tier';
import { createInMemoryStorage } from '../storage/in-memory/index';
import type { Storage } from '../storage/types';
import { generateId as defaultGenerateId, type IdGenerator } from '../util/ids';
import { type Logger, silentLogger } from '../util/logger';
import { createContextCarrier } from './context';
import { dispatchCall } from './dispatch/pipeline';
import type { DispatchEnv } from './dispatch/types';
import { BUILTIN_TOOL_SETS, expandToolSetNames } from './tool-sets';
import type { DispatchOptions, DispatchOutcome, ToolEntry, ToolHook, ToolRegistry, ToolSetDefinition } from './types';

/** Options for {@link createToolRegistry}. */
export interface ToolRegistryOptions {
  /** Tools to register. */
  tools?: readonly ToolEntry[] | undefined;
  /** Extra tool sets (merged over the built-in sets by name). */
  toolSets?: readonly ToolSetDefinition[] | undefined;
  /** Hooks; before-hooks may only tighten (block, require approval, raise the tier). */
  hooks?: readonly ToolHook[] | undefined;
  /**
   * Holds the audit log, approvals, grants and the emergency-stop flag.
   * @default an in-memory storage (approvals then do not survive a restart)
   */
  storage?: Storage | undefined;
  /** Write one audit row per dispatch. @default true */
  audit?: boolean | undefined;
  /**
   * The key that signs approvals, kept outside the storage (see `resolveApprovalKey`: `MINARA_APPROVAL_KEY`
   * or a 0600 key file beside the data directory). Without it the storage's own instance key signs, so anyone
   * who can read the database can forge approvals; in production mode a fund-moving tool is refused without it.
   */
  approvalKey?: Uint8Array | undefined;
  /**
   * Production mode: without `approvalKey`, registering a fund-moving tool, a tool of tier ALWAYS_CONFIRM or above,
   * or one whose tier `tierFor` can raise is refused (`CONFIG_INVALID`), and a call whose effective tier is
   * ALWAYS_CONFIRM or above (raised by a hook or `tierFor`) is blocked.
   * @default true when `NODE_ENV` or `MINARA_ENV` is `production`
   */
  production?: boolean | undefined;
  /** Lifetime of an approval request in ms. @default 900000 (15 minutes) */
  approvalTtlMs?: number | undefined;
  /** Identical blocked calls in one turn before the call is cut off. @default 2 */
  maxRepeatedBlocked?: number | undefined;
  /**
   * Per-user circuit breakers that halt autonomous fund-moving calls after losses, a drawdown or errors
   * (`createCircuitBreakers`; `createApp` passes one with the finance pack's equity and the env's limits); `false`
   * for none. @default breakers over `storage` with `DEFAULT_BREAKER_LIMITS` (no drawdown rule: no equity source)
   */
  breakers?: CircuitBreakers | false | undefined;
  /**
   * What untrusted content in a turn changes at the gate: whether grants still cover fund-moving calls after it,
   * whether a MANUAL_ONLY call is refused (docs/safety.md, "Untrusted content"). @default the safe defaults
   */
  untrustedContent?: UntrustedContentPolicy | undefined;
  /**
   * The most a stored grant may allow: caps per call and per UTC day in USD and a longest lifetime (a function is
   * read at each create). A grant above a bound, or naming a MANUAL_ONLY tool (directly or through a set), is
   * refused. `createApp` passes the finance limits and `MINARA_GRANT_MAX_DAYS`.
   * @default a 90-day lifetime, no cap bounds
   */
  grantBounds?: GrantBounds | (() => GrantBounds | Promise<GrantBounds>) | undefined;
  bus?: MinaraBus | undefined;
  logger?: Logger | undefined;
  now?: (() => Date) | undefined;
  generateId?: IdGenerator | undefined;
}

/**
 * Create the tool registry: the single path that runs a tool. Every call goes through input
 * validation, the built-in tier gate, the before-hooks, the handler (with timeout and abort), the
 * after-hooks and one audit row, and comes back as an envelope `{"ok":true,"data":…}` or
 * `{"ok":false,"error":…,"code":…,"retryable":…}`.
 *
 * @example
 * ```ts
 * const registry = createToolRegistry({ tools: [getPrice, swapTokens], storage });
 * const json = await registry.dispatch('get_price', { symbol: 'BTC' });
 * ```
 */
export function createToolRegistry(options: ToolRegistryOptions = {}): ToolRegistry {
  const {
    storage = createInMemoryStorage(),
    audit: auditEnabled = true,
    hooks = [],
    approvalTtlMs,
    maxRepeatedBlocked = 2,
    bus,
    logger = silentLogger,
    now = () => new Date(),
    generateId = defaultGenerateId,
  } = options;

  const tools = new Map<string, ToolEntry>();
  const sets = new Map<string, ToolSetDefinition>();
  for (const s of [...BUILTIN_TOOL_SETS, ...(options.toolSets ?? [])]) sets.set(s.name, s);
  const carrier = createContextCarrier();
  const { approvalKey, production = isProductionEnv() } = options;
  if (approvalKey !== undefined && !(approvalKey instanceof Uint8Array && approvalKey.length >= APPROVAL_KEY_BYTES)) {
    throw new MinaraError('CONFIG_INVALID', `createToolRegistry: "approvalKey" must be a Uint8Array of at least ${APPROVAL_KEY_BYTES} bytes (see resolveApprovalKey / parseApprovalKey).`);
  }
  if (options.grantBounds !== undefined && typeof options.grantBounds !== 'function') checkGrantBounds(options.grantBounds, 'createToolRegistry: "grantBounds"');
  // The approval key, kept outside the database, also keys the audit links when nothing keyed them yet (createApp
  // keys them first, with checkpoints): a host that builds its own registry writes keyed rows too.
  if (approvalKey !== undefined && storage !== undefined) storage.audit.useChainKey?.({ key: deriveAuditChainKey(approvalKey), ifUnkeyed: true });
  const approvals = createApprovalService({ storage, now, generateId, ttlMs: approvalTtlMs, bus, key: approvalKey });
  const grants = createGrantService({
    storage, now, generateId,
    catalog: {
      toolTier: (name) => tools.get(name)?.permissionTier,
      hasToolSet: (name) => sets.has(name),
      manualOnlyIn: (names) => {
        const covered = expandToolSetNames(names, sets);
        return [...tools.values()].filter((t) => covered.has(t.toolSet) && t.permissionTier === PermissionTier.MANUAL_ONLY).map((t) => t.name);
      },
    },
    expandToolSets: (names) => expandToolSetNames(names, sets),
    bounds: options.grantBounds,
  });
  const emergencyStop = createEmergencyStop({ storage, now, bus });
  const capabilities = createCapabilitySwitches({ storage, now, hasToolSet: (name) => sets.has(name) });
  let untrustedPolicy;
  try {
    untrustedPolicy = resolveUntrustedContentPolicy(options.untrustedContent);
  } catch (error) {
    throw new MinaraError('CONFIG_INVALID', `createToolRegistry: ${(error as Error).message}`);
  }
  const breakers = options.breakers === false ? undefined : (options.breakers ?? createCircuitBreakers({ storage, now, logger }));
  for (const h of hooks) {
    if (typeof h?.name !== 'string' || (h.before !== undefined && typeof h.before !== 'function') || (h.after !== undefined && typeof h.after !== 'function')) {
      throw new MinaraError('CONFIG_INVALID', 'createToolRegistry: each hook needs a "name" and function "before" and/or "after".');
    }
  }

  function register(entry: ToolEntry | readonly ToolEntry[]): void {
    const list = Array.isArray(entry) ? entry : [entry as ToolEntry];
    for (const t of list) {
      if (typeof t?.name !== 'string' || typeof t.execute !== 'function' || !isPermissionTier(t.permissionTier)) {
        throw new MinaraError('TOOL_DEFINITION_INVALID', 'register: expected a tool made by defineTool().');
      }
      if (tools.has(t.name)) throw new MinaraError('TOOL_DEFINITION_INVALID', `register: a tool named "${t.name}" is already registered.`);
      // An approval signed with the database's key authorises nothing a reader of the database could not forge.
      if (approvalKey === undefined && production && (t.isFundMoving || t.permissionTier >= PermissionTier.ALWAYS_CONFIRM || t.tierFor !== undefined || t.emergencyStopControl)) {
        const what = t.isFundMoving ? 'fund-moving tool' : t.permissionTier >= PermissionTier.ALWAYS_CONFIRM ? `${permissionTierName(t.permissionTier)} tool` : 'tool whose tier can rise (tierFor)';
        throw new MinaraError('CONFIG_INVALID', `register: ${what} "${t.name}" needs an approval key outside the database in production mode: pass "approvalKey" (set MINARA_APPROVAL_KEY; see resolveApprovalKey).`);
      }
      if (t.isFundMoving && typeof t.orderFacts !== 'function') {
        throw new MinaraError('TOOL_DEFINITION_INVALID', `register: tool "${t.name}" moves funds but has no "orderFacts" (notional USD, asset, side, destination); it cannot be checked, so it is refused.`);
      }
      if (!sets.has(t.toolSet)) sets.set(t.toolSet, { name: t.toolSet, description: describeUnknownSet(t.toolSet, t.name) });
      tools.set(t.name, t);
    }
  }
  register(options.tools ?? []);

  const visible = (t: ToolEntry): boolean => {
    if (!t.checkFn) return true;
    try {
      return t.checkFn() === true;
    } catch {
      return false;
    }
  };

  const env: DispatchEnv = {
    tools, sets, hooks, storage, auditEnabled, approvals, grants, emergencyStop, carrier, maxRepeatedBlocked, bus, logger, now, generateId, visible,
    ...(production && approvalKey === undefined ? { keylessTierLimit: PermissionTier.ALWAYS_CONFIRM } : {}),
    ...(breakers ? { breakers } : {}),
    untrustedPolicy,
  };

  /** One dispatch in an OpenTelemetry span (`minara.tool`: name, tier, decision, mode; never the input). */
  function dispatchDetailed(name: string, args: unknown, opts: DispatchOptions = {}): Promise<DispatchOutcome> {
    return inSpan('minara.tool', { 'minara.tool.name': String(name).slice(0, 64) }, async (span) => {
      const outcome = await dispatchCall(env, name, args, opts);
      span.setAttributes({ 'minara.tool.tier': outcome.tier, 'minara.tool.decision': outcome.decision, 'minara.tool.mode': outcome.mode, 'minara.tool.call_id': outcome.toolCallId });
      return outcome;
    });
  }

  return {
    register,
    get: (name) => {
      const t = tools.get(name);
      return t && visible(t) ? t : undefined;
    },
    has: (name) => {
      const t = tools.get(name);
      return t !== undefined && visible(t);
    },
    list(filter = {}) {
      const allowed = filter.toolSets ? expandToolSetNames(filter.toolSets, sets) : undefined;
      return [...tools.values()].filter((t) => visible(t) && (!allowed || allowed.has(t.toolSet)));
    },
    toolSets: () => [...sets.values()],
    expandToolSets: (names) => expandToolSetNames(names, sets),
    dispatch: async (name, args, opts) => (await dispatchDetailed(name, args, opts)).json,
    dispatchDetailed,
    runInContext: (ctx, fn) => carrier.run(ctx, fn),
    currentContext: () => carrier.current(),
    approvals: { get: approvals.get, list: approvals.list, decide: approvals.decide, consume: approvals.consume },
    grants: { create: grants.create, revoke: grants.revoke, list: grants.list, get: grants.get, spentToday: grants.spentToday, leftToday: grants.leftToday },
    emergencyStop,
    capabilities,
    breakers,
    storage,
    queryAudit: (filter) => storage.audit.query(filter),
  };
}

/** The description of a tool set nobody defined: where its tools come from, in words, not the set's own name again. */
function describeUnknownSet(toolSet: string, firstTool: string): string {
  const mcp = /^mcp[:_](.+)$/u.exec(toolSet);
  if (mcp) return `Tools of the MCP server "${mcp[1]}" (connected from the MCP config)`;
  return `Tools this app added, such as ${firstTool.replace(/_/g, ' ')}`;
}
