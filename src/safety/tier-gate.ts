import { riskTierOf } from './risk-tier';
import type { MinaraErrorCode } from '../errors/codes';
import type { ToolCallContext, ToolEntry, ToolOrderFacts } from '../tools/types';
import { grantView } from '../tools/order-facts';
import type { EmergencyStopApi } from '../tools/types';
import type { GrantClaim } from './grant-match';
import type { GrantService } from './grants';
import { isAutonomousSource, PermissionTier, permissionTierName } from './permission-tier';
import { DEFAULT_UNTRUSTED_CONTENT_POLICY, type CallProvenance, type ResolvedUntrustedContentPolicy } from './untrusted';

/** What the gate decided for one call. */
export type GateDecision =
  | {
    readonly kind: 'allow';
    readonly via: 'read_only' | 'preview' | 'session_grant' | 'stored_grant' | 'approval';
    readonly grantId?: string | undefined;
    /** The spend a stored grant reserved for this call (given back if the call does not execute). */
    readonly grantClaim?: GrantClaim | undefined;
  }
  | { readonly kind: 'block'; readonly code: MinaraErrorCode; readonly reason: string }
  | { readonly kind: 'approval_required'; readonly reason: string };

/** Everything the gate looks at. */
export interface GateInput {
  readonly tool: ToolEntry;
  readonly input: unknown;
  /** Normalised order facts of a fund-moving call: stored grants judge these, not the raw arguments. */
  readonly orderFacts?: ToolOrderFacts | undefined;
  readonly context: ToolCallContext;
  /** Effective tier: static floor, raised by `tierFor` and hooks. */
  readonly tier: PermissionTier;
  readonly mode: 'preview' | 'execute';
  /** Reasons hooks gave for requiring a fresh approval. */
  readonly hookApprovalReasons: readonly string[];
  /** The caller presented an approval id (verified and consumed by the registry after the gate allows it). */
  readonly hasApproval: boolean;
  /** The tool sets the turn may use, expanded through `includes`. */
  readonly allowedToolSets: ReadonlySet<string> | undefined;
  /** True when an analysis tool already ran in this turn. */
  readonly analysisUsed: boolean;
  /** What the turn had read from outside when the call was proposed (undefined: nothing untrusted). */
  readonly provenance?: CallProvenance | undefined;
  /** What untrusted content changes. @default DEFAULT_UNTRUSTED_CONTENT_POLICY */
  readonly untrustedPolicy?: ResolvedUntrustedContentPolicy | undefined;
}

/**
 * The tier gate: the one place that decides whether a call runs, waits for a human, or is refused.
 * It is the registry's built-in before-step and cannot be removed or reordered by hooks.
 *
 * - READ_ONLY runs.
 * - CONFIRM_ONCE asks on first use in a session, then the session grant lets it run.
 * - ALWAYS_CONFIRM asks every call; autonomous sources need a stored grant.
 * - MANUAL_ONLY needs an explicit approval; autonomous sources are refused.
 * - In a side-effect-free context (run_code's inputs) only tools declared `sideEffects: false` run.
 * - A fund-moving call in a turn that already ran analysis needs a fresh approval (no grant counts).
 * - After untrusted content entered the turn (`provenance`): a MANUAL_ONLY call is refused (`UNTRUSTED_CONTENT`)
 *   and a fund-moving call is never covered by a grant — a person decides (both per `untrustedPolicy`).
 * - While the emergency stop is engaged (the global one, or the stop of the call's user), nothing above READ_ONLY
 *   runs (except the tool flagged `emergencyStopControl`, which still needs its tier's approval).
 */
export async function evaluateTierGate(input: GateInput, deps: { grants: GrantService; emergencyStop: EmergencyStopApi }): Promise<GateDecision> {
  const { tool, context, tier, mode } = input;

  if (input.allowedToolSets !== undefined && !input.allowedToolSets.has(tool.toolSet)) {
    return {
      kind: 'block',
      code: 'TOOL_SET_NOT_ALLOWED',
      reason: `Tool "${tool.name}" is in tool set "${tool.toolSet}", which this turn may not use (allowed: ${[...input.allowedToolSets].sort().join(', ') || 'none'}).`,
    };
  }

  // Where only side-effect-free tools may run (run_code's inputs): a tool not declared so is refused, whatever its tier.
  if (context.sideEffectFree === true && tool.sideEffects !== false) {
    return {
      kind: 'block',
      code: 'SIDE_EFFECTS_REFUSED',
      reason: `Tool "${tool.name}" is not declared side-effect free (sideEffects: false); only reading tools run here.`,
    };
  }

  // A fund-moving call without confirm: true runs its preview, which moves nothing.
  if (mode === 'preview') return { kind: 'allow', via: 'preview' };

  if (tier > PermissionTier.READ_ONLY || input.hookApprovalReasons.length > 0) {
    // The stop that applies to this call: the global one, or the stop of the user the call acts for.
    const stop = await deps.emergencyStop.status(context.userId !== undefined ? { userId: context.userId } : undefined);
    // The tool that releases the stop is the one exception; it still meets its own tier below.
    if (stop.engaged && tier > PermissionTier.READ_ONLY && !tool.emergencyStopControl) {
      const which = stop.scope === 'user' ? `Your emergency stop is engaged` : 'The emergency stop is engaged for everyone';
      return { kind: 'block', code: 'EMERGENCY_STOP', reason: `${which}${stop.reason ? ` (${stop.reason})` : ''}; only read-only tools run.` };
    }
  }

  if (context.riskCeiling !== undefined && tier > context.riskCeiling) {
    return {
      kind: 'block',
      code: 'RISK_CEILING_EXCEEDED',
      reason: `Tool "${tool.name}" is ${riskTierOf(tier)} risk (${permissionTierName(tier)}), above this turn's risk ceiling ${riskTierOf(context.riskCeiling)} (${permissionTierName(context.riskCeiling)}).`,
    };
  }

  if (tier === PermissionTier.READ_ONLY && input.hookApprovalReasons.length === 0) return { kind: 'allow', via: 'read_only' };

  const autonomous = isAutonomousSource(context.source);
  const boundary = tool.isFundMoving && input.analysisUsed;

  const policy = input.untrustedPolicy ?? DEFAULT_UNTRUSTED_CONTENT_POLICY;
  const tainted = input.provenance;
  if (tainted && tier === PermissionTier.MANUAL_ONLY && policy.manualOnly === 'refuse') {
    return {
      kind: 'block',
      code: 'UNTRUSTED_CONTENT',
      reason: `Tool "${tool.name}" is MANUAL_ONLY and was ${tainted.summary}; a MANUAL_ONLY call is refused after untrusted content entered the conversation. Start a new conversation and ask for it directly.`,
    };
  }

  if (autonomous && tier === PermissionTier.MANUAL_ONLY) {
    return { kind: 'block', code: 'MANUAL_ONLY_AUTONOMOUS', reason: `Tool "${tool.name}" is MANUAL_ONLY and cannot run from a ${context.source} source.` };
  }

  // An explicit approval for this exact call authorises it (verified against tool, input, session and source
  // and consumed by the registry). No approval is ever issued to an autonomous source, and none is accepted from one.
  if (input.hasApproval && !autonomous) return { kind: 'allow', via: 'approval' };

  const approvalReasons = [...input.hookApprovalReasons];
  if (boundary) approvalReasons.push(`"${tool.name}" moves funds in a turn that already ran analysis; a fresh approval is required`);
  if (tainted && tool.isFundMoving && !policy.grantsCoverFundMoving) approvalReasons.push(`"${tool.name}" moves funds and was ${tainted.summary}; no grant covers it, a person decides`);

  if (autonomous) {
    if (approvalReasons.length > 0) {
      return { kind: 'block', code: 'GRANT_REQUIRED', reason: `${approvalReasons.join('; ')}; no one can approve it from a ${context.source} source.` };
    }
    if (tier === PermissionTier.CONFIRM_ONCE && (await deps.grants.hasSessionGrant(context.sessionId, tool.name))) {
      return { kind: 'allow', via: 'session_grant' };
    }
    const match = await deps.grants.matchStoredGrant({
      toolName: tool.name, toolSet: tool.toolSet, source: context.source, userId: context.userId,
      view: grantView(input.input, input.orderFacts), notionalUsd: input.orderFacts?.notionalUsd ?? 0,
    });
    if (match.kind === 'granted') return { kind: 'allow', via: 'stored_grant', grantId: match.grant.id, grantClaim: match.claim };
    if (match.kind === 'capped') {
      return { kind: 'block', code: 'GRANT_CAP_EXCEEDED', reason: `Tool "${tool.name}" is covered by a grant, but ${match.reason}; it does not run from a ${context.source} source.` };
    }
    return {
      kind: 'block',
      code: 'GRANT_REQUIRED',
      reason: `Tool "${tool.name}" (${permissionTierName(tier)}) needs a stored grant covering these arguments to run from a ${context.source} source.`,
    };
  }

  if (approvalReasons.length > 0) return { kind: 'approval_required', reason: approvalReasons.join('; ') };
  if (tier === PermissionTier.CONFIRM_ONCE) {
    if (await deps.grants.hasSessionGrant(context.sessionId, tool.name)) return { kind: 'allow', via: 'session_grant' };
    return { kind: 'approval_required', reason: `"${tool.name}" needs your confirmation the first time in this session.` };
  }
  if (tier === PermissionTier.ALWAYS_CONFIRM) return { kind: 'approval_required', reason: `"${tool.name}" needs your confirmation for every call.` };
  return { kind: 'approval_required', reason: `"${tool.name}" is MANUAL_ONLY and needs your explicit approval.` };
}
