import { ok, type ToolEnvelope } from '../envelope';
import type { DispatchCall, DispatchEnv } from './types';

/**
 * What the grants covering a fund-moving call's tool for its user have left today (UTC), for previews and
 * approval requests; undefined for other tools, without a capped grant, or when storage cannot say.
 */
export async function grantLeftForCall(env: DispatchEnv, call: DispatchCall): Promise<number | undefined> {
  const tool = call.tool;
  if (!tool?.isFundMoving) return undefined;
  try {
    return await env.grants.leftTodayFor({ toolName: tool.name, toolSet: tool.toolSet, userId: call.ctx.userId });
  } catch (error) {
    env.logger.warn('grants: could not read what is left today', { tool: tool.name, error: error instanceof Error ? error.message : String(error) });
    return undefined;
  }
}

/** A fund-moving preview's data with `grantLeftTodayUsd` added (when a capped grant covers the tool). */
export async function withGrantLeft(env: DispatchEnv, call: DispatchCall, envelope: ToolEnvelope): Promise<ToolEnvelope> {
  if (!envelope.ok || envelope.data === null || typeof envelope.data !== 'object' || Array.isArray(envelope.data)) return envelope;
  const left = await grantLeftForCall(env, call);
  if (left === undefined) return envelope;
  return ok({ ...(envelope.data as Record<string, unknown>), grantLeftTodayUsd: left });
}

/**
 * Give back the daily spend a stored grant reserved for this call when the call did not execute: it was stopped
 * before its handler ran, or the handler answered with an error envelope (the tool says nothing happened). A
 * handler that threw or timed out keeps the reservation: its side effect may have happened.
 */
export async function refundGrantClaim(env: DispatchEnv, call: DispatchCall): Promise<void> {
  const gate = call.gate;
  if (gate?.kind !== 'allow' || gate.grantClaim === undefined) return;
  try {
    await env.grants.refund(gate.grantClaim);
  } catch (error) {
    env.logger.warn('grants: could not give back a reservation', { grant: gate.grantClaim.grantId, error: error instanceof Error ? error.message : String(error) });
  }
}
