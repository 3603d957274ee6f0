import { inSpan } from '../util/tracing';
import type { MinaraBus } from '../events/bus';
import { MinaraError } from '../errors/minara-error';
import type { MinaraErrorCode } from '../errors/codes';
import { APPROVAL_KEY_BYTES, isProductionEnv } from '../safety/approval-key';
import { createApprovalService, hashToolInput } from '../safety/approvals';
import { createEmergencyStop } from '../safety/emergency-stop';
import { createGrantService } from '../safety/grants';
import { maxTier, PermissionTier, isPermissionTier } from '../safety/permission-tier';
import { redactValue } from '../safety/secret-patterns';
import { evaluateTierGate, type GateDecision } from '../safety/tier-gate';
import { createInMemoryStorage } from '../storage/in-memory/index';
import type { ApprovalRecord, AuditDecision, Storage } from '../storage/types';
import { generateId as defaultGenerateId, type IdGenerator } from '../util/ids';
import { type Logger, silentLogger } from '../util/logger';
import { closestMatches } from '../util/suggest';
import { createContextCarrier, createToolCallContext, narrowContext, noteExecutedCall } from './context';
import { err, errFromThrow, isToolEnvelope, ok, type ToolEnvelope } from './envelope';
import { computeOrderFacts } from './order-facts';
import { REJECTED_TOOL_INPUT_KEY, toolInputBoundsProblem } from './input-bounds';
import { BUILTIN_TOOL_SETS, expandToolSetNames } from './tool-sets';
import type { DispatchOptions, DispatchOutcome, ToolCallContext, ToolEntry, ToolExecutionContext, ToolHook, ToolOrderFacts, ToolRegistry, ToolSetDefinition } from './types';
import { validateToolInput } from './validate-input';

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
   * Production mode: registering a fund-moving tool without `approvalKey` is refused (`CONFIG_INVALID`).
   * @default true when `NODE_ENV` or `MINARA_ENV` is `production`
   */
  production?: boolean | undefined;
  /** Lifetime of an approval request in ms. @default 900000 (15 minutes) */
  approvalTtlMs?: number | undefined;
  /** Identical blocked calls in one turn before the call is cut off. @default 2 */
  maxRepeatedBlocked?: number | undefined;
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
  const approvals = createApprovalService({ storage, now, generateId, ttlMs: approvalTtlMs, bus, key: approvalKey });
  const grants = createGrantService({ storage, now, generateId });
  const emergencyStop = createEmergencyStop({ storage, now, bus });
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
      if (t.isFundMoving && approvalKey === undefined && production) {
        throw new MinaraError('CONFIG_INVALID', `register: fund-moving tool "${t.name}" needs an approval key outside the database in production mode: pass "approvalKey" (set MINARA_APPROVAL_KEY; see resolveApprovalKey).`);
      }
      if (t.isFundMoving && typeof t.orderFacts !== 'function') {
        throw new MinaraError('TOOL_DEFINITION_INVALID', `register: tool "${t.name}" moves funds but has no "orderFacts" (notional USD, asset, side, destination); it cannot be checked, so it is refused.`);
      }
      if (!sets.has(t.toolSet)) sets.set(t.toolSet, { name: t.toolSet, description: `Tools of set "${t.toolSet}"` });
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

  async function writeAudit(row: {
    toolName: string; tier: number; ctx: ToolCallContext; toolCallId: string; decision: AuditDecision;
    code?: string | undefined; reason?: string | undefined; durationMs: number; input: unknown; mode: 'preview' | 'execute'; approvalId?: string | undefined;
  }, strict = false): Promise<void> {
    if (!auditEnabled) return;
    try {
      await storage.audit.append({
        at: now().toISOString(),
        toolName: row.toolName,
        tier: row.tier,
        source: row.ctx.source,
        sessionId: row.ctx.sessionId,
        traceId: row.ctx.traceId,
        toolCallId: row.toolCallId,
        approvalId: row.approvalId,
        decision: row.decision,
        code: row.code,
        reason: row.reason,
        durationMs: row.durationMs,
        argsJson: JSON.stringify(redactValue(row.input) ?? null),
        mode: row.mode,
      });
    } catch (error) {
      // The audit failure is logged loudly; the call's outcome is already decided (a strict row is not: it throws).
      logger.error('audit append failed', { tool: row.toolName, error: error instanceof Error ? error.message : String(error) });
      if (strict) throw error;
    }
  }

  /** One dispatch in an OpenTelemetry span (`minara.tool`: name, tier, decision, mode; never the input). */
  function dispatchDetailed(name: string, args: unknown, opts: DispatchOptions = {}): Promise<DispatchOutcome> {
    return inSpan('minara.tool', { 'minara.tool.name': String(name).slice(0, 64) }, async (span) => {
      const outcome = await dispatchUntraced(name, args, opts);
      span.setAttributes({ 'minara.tool.tier': outcome.tier, 'minara.tool.decision': outcome.decision, 'minara.tool.mode': outcome.mode, 'minara.tool.call_id': outcome.toolCallId });
      return outcome;
    });
  }

  async function dispatchUntraced(name: string, args: unknown, opts: DispatchOptions = {}): Promise<DispatchOutcome> {
    const started = performance.now();
    const ambient = carrier.current();
    const ctx = ambient ? (opts.context ? narrowContext(ambient, opts.context, (names) => expandToolSetNames(names, sets)) : ambient)
      : (opts.context ?? createToolCallContext({ sessionId: 'host', source: 'user', operatorAuthored: true }));
    const toolCallId = opts.toolCallId ?? generateId('call');
    let tier: PermissionTier = PermissionTier.READ_ONLY;
    let mode: 'preview' | 'execute' = 'execute';
    let input: unknown = args;
    let tool: ToolEntry | undefined;
    let orderFacts: ToolOrderFacts | undefined;

    const finish = async (
      envelope: ToolEnvelope,
      decision: AuditDecision,
      extra: { approval?: ApprovalRecord | undefined; approvalId?: string | undefined; auditTier?: number } = {},
    ): Promise<DispatchOutcome> => {
      const durationMs = performance.now() - started;
      const code = envelope.ok ? undefined : envelope.code;
      await writeAudit({
        toolName: name, tier: extra.auditTier ?? tier, ctx, toolCallId, decision, code, reason: envelope.ok ? undefined : envelope.error,
        durationMs, input, mode, approvalId: extra.approvalId ?? extra.approval?.id,
      });
      if (tool) {
        for (const h of hooks) {
          if (!h.after) continue;
          try {
            await h.after({ tool, input, context: ctx, toolCallId, tier, mode, orderFacts, envelope, decision, durationMs });
          } catch (error) {
            logger.warn('after-hook failed', { hook: h.name, tool: name, error: error instanceof Error ? error.message : String(error) });
          }
        }
      }
      // Decision capture reads the turn's executed fund-moving calls from its context.
      if (tool?.isFundMoving && mode === 'execute' && envelope.ok && orderFacts) {
        noteExecutedCall(ctx, { toolCallId, toolName: name, input, orderFacts, data: envelope.data, at: now().toISOString() });
      }
      if (bus) bus.emit('tool:dispatched', { toolName: name, decision, sessionId: ctx.sessionId, traceId: ctx.traceId, durationMs });
      return { envelope, json: JSON.stringify(envelope), decision, tier, toolCallId, mode, durationMs, approval: extra.approval, ...(orderFacts ? { orderFacts } : {}) };
    };

    const blocked = (code: MinaraErrorCode, reason: string, retryable = false): Promise<DispatchOutcome> => {
      const key = `${name}\u0000${hashToolInput(input)}`;
      const count = (ctx.blockedCalls.get(key) ?? 0) + 1;
      ctx.blockedCalls.set(key, count);
      if (count >= maxRepeatedBlocked) {
        return finish(
          err(`This exact call was already blocked ${count - 1} time(s) in this turn (${reason}). Do not retry it; tell the user what is needed instead.`, { code: 'REPEATED_BLOCKED_CALL', retryable: false }),
          'blocked',
        );
      }
      return finish(err(reason, { code, retryable }), 'blocked');
    };

    if (typeof name !== 'string' || !tools.has(name)) {
      const suggestions = typeof name === 'string' ? closestMatches(name, tools.keys()) : [];
      const hint = suggestions.length > 0 ? ` Did you mean: ${suggestions.join(', ')}?` : '';
      return finish(err(`No tool named ${JSON.stringify(name)} is registered.${hint}`, { code: 'TOOL_NOT_FOUND' }), 'error', { auditTier: 0 });
    }
    tool = tools.get(name)!;
    tier = tool.permissionTier;
    if (!visible(tool)) return finish(err(`Tool "${name}" is not available in this environment.`, { code: 'TOOL_UNAVAILABLE' }), 'error');

    // Bound depth and size before any schema walks the input (a 5,000-level input overflows recursive code).
    const bounds = toolInputBoundsProblem(args);
    if (bounds !== undefined) {
      input = { [REJECTED_TOOL_INPUT_KEY]: bounds };
      return finish(err(`Invalid input for tool "${name}": ${bounds}.`, { code: 'TOOL_INPUT_INVALID', retryable: true }), 'error');
    }
    const validated = validateToolInput(tool.inputSchema, args);
    if (!validated.success) {
      const detail = validated.issues.map((i) => `${i.path}: ${i.message}`).join('; ');
      return finish(err(`Invalid input for tool "${name}": ${detail}`, { code: 'TOOL_INPUT_INVALID', retryable: true }), 'error');
    }
    input = validated.data;
    mode = tool.isFundMoving && (input as { confirm?: unknown }).confirm !== true ? 'preview' : 'execute';

    // A fund-moving call states its order facts once; grants, hooks, the preview and the handler all judge these.
    try {
      orderFacts = await computeOrderFacts(tool, input, ctx, toolCallId);
    } catch (error) {
      return blocked('TOOL_BLOCKED', `could not price or check this order: ${error instanceof Error ? error.message : String(error)}`);
    }

    // The static tier is the floor: computed tiers and hooks only raise it.
    if (tool.tierFor && mode === 'execute') {
      try {
        const computed = tool.tierFor(input);
        if (!isPermissionTier(computed)) throw new Error(`tierFor returned ${String(computed)}`);
        tier = maxTier(tier, computed);
      } catch (error) {
        return blocked('TOOL_BLOCKED', `Could not compute the tier for "${name}": ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const hookApprovalReasons: string[] = [];
    for (const h of hooks) {
      if (!h.before) continue;
      let result;
      try {
        result = await h.before({ tool, input, context: ctx, toolCallId, tier, mode, orderFacts });
      } catch (error) {
        // A failing policy fails closed.
        return blocked('TOOL_BLOCKED', `Policy "${h.name}" failed: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (!result) continue;
      if ('block' in result) return blocked(result.code ?? 'TOOL_BLOCKED', `${result.block} (policy "${h.name}")`, result.retryable ?? false);
      if ('requireApproval' in result) hookApprovalReasons.push(result.requireApproval);
      else if ('raiseTier' in result && isPermissionTier(result.raiseTier)) tier = maxTier(tier, result.raiseTier);
    }

    const analysisUsed = [...ctx.usedTools].some((n) => n !== name && tools.get(n)?.isAnalysis === true);
    const allowedToolSets = ctx.allowedToolSets ? expandToolSetNames(ctx.allowedToolSets, sets) : undefined;
    let decision: GateDecision;
    try {
      decision = await evaluateTierGate(
        { tool, input, orderFacts, context: ctx, tier, mode, hookApprovalReasons, hasApproval: opts.approvalId !== undefined, allowedToolSets, analysisUsed },
        { grants, emergencyStop },
      );
    } catch (error) {
      return blocked('TOOL_BLOCKED', `The permission check failed: ${error instanceof Error ? error.message : String(error)}`);
    }

    if (decision.kind === 'block') return blocked(decision.code, decision.reason);
    if (decision.kind === 'approval_required') {
      const approval = await approvals.request({
        toolName: name, toolCallId, input, tier, source: ctx.source, reason: decision.reason, sessionId: ctx.sessionId, traceId: ctx.traceId,
      });
      const envelope = err(`Waiting for approval: ${decision.reason}`, { code: 'APPROVAL_REQUIRED', retryable: false });
      const withApproval: ToolEnvelope = { ...envelope, approval: { approvalId: approval.id, toolName: name, expiresAt: approval.expiresAt, reason: decision.reason } };
      return finish(withApproval, 'approval_required', { approval });
    }

    let allowedDecision: AuditDecision = 'allowed';
    if (decision.via === 'approval' && opts.approvalId !== undefined) {
      try {
        const record = await approvals.consume(opts.approvalId, { toolName: name, input, toolCallId: opts.toolCallId, sessionId: ctx.sessionId, source: ctx.source });
        // CONFIRM_ONCE: the first approval in a session is remembered for the rest of that session (the one it was issued in).
        if (tier === PermissionTier.CONFIRM_ONCE && record.sessionId !== undefined) await grants.grantForSession(record.sessionId, name);
      } catch (error) {
        const e = errFromThrow(error);
        return finish(e, e.code === 'APPROVAL_DENIED' ? 'denied' : 'blocked', { approvalId: opts.approvalId });
      }
      allowedDecision = 'approved';
    }

    const run = mode === 'preview' ? tool.preview! : tool.execute;
    if (mode === 'execute' && tool.isFundMoving) {
      // Audit before the side effect: a process killed mid-transfer leaves an `executing` row; a call whose
      // row cannot be written does not run.
      try {
        await writeAudit({ toolName: name, tier, ctx, toolCallId, decision: 'executing', durationMs: performance.now() - started, input, mode, approvalId: opts.approvalId }, true);
      } catch (error) {
        return finish(err(`The audit log could not be written, so this fund-moving call did not run: ${error instanceof Error ? error.message : String(error)}`, { code: 'TOOL_BLOCKED', retryable: true }), 'blocked', { approvalId: opts.approvalId });
      }
    }
    let envelope: ToolEnvelope;
    let outcome: AuditDecision = allowedDecision;
    try {
      // The handler runs inside its call's context: a nested dispatch inherits it and can only narrow it.
      const result = await carrier.run(ctx, () => runWithTimeout(run, input, { call: ctx, toolCallId, tier, approvalId: opts.approvalId, orderFacts }, tool.timeoutMs, opts.signal, name));
      envelope = isToolEnvelope(result) ? result : ok(result === undefined ? null : result);
      if (!envelope.ok) outcome = 'error';
    } catch (error) {
      envelope = errFromThrow(error);
      outcome = 'error';
    }
    ctx.usedTools.add(name);
    return finish(envelope, outcome, { approvalId: opts.approvalId });
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
    grants: { create: grants.create, revoke: grants.revoke, list: grants.list },
    emergencyStop,
    storage,
    queryAudit: (filter) => storage.audit.query(filter),
  };
}

async function runWithTimeout(
  fn: (input: unknown, ctx: ToolExecutionContext) => unknown,
  input: unknown,
  base: { call: ToolCallContext; toolCallId: string; tier: PermissionTier; approvalId?: string | undefined; orderFacts?: ToolOrderFacts | undefined },
  timeoutMs: number,
  signal: AbortSignal | undefined,
  name: string,
): Promise<unknown> {
  if (signal?.aborted) throw new MinaraError('TOOL_ABORTED', `Tool "${name}" was cancelled before it started.`);
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new MinaraError('TOOL_TIMEOUT', `Tool "${name}" did not finish within ${timeoutMs} ms.`, { retryable: true });
      controller.abort(e);
      reject(e);
    }, timeoutMs);
    if (signal) {
      onAbort = () => {
        const e = new MinaraError('TOOL_ABORTED', `Tool "${name}" was cancelled.`);
        controller.abort(e);
        reject(e);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([Promise.resolve().then(() => fn(input, { ...base, signal: controller.signal })), stopped]);
  } finally {
    clearTimeout(timer);
    if (signal && onAbort) signal.removeEventListener('abort', onAbort);
  }
}
