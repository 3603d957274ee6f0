import type { ApprovalRecord, ApprovalStatus } from '../storage/types';
import { field, readJsonObject } from './body';
import { assertSessionVisible } from './chat-routes';
import { assertCanDecide } from './decide';
import { badRequest, HttpError, json, notFound } from './http-error';
import { type QuotaAdmission, quotaResponse } from './quotas';
import { decodeParam, type RouteContext, type RouteHandler } from './router';
import type { SessionLease } from './session-lock';
import type { GatewayDeps } from './types';

const STATUSES: readonly ApprovalStatus[] = ['pending', 'approved', 'denied', 'expired', 'executed'];

/** An approval as the gateway shows it: no signatures or hashes. */
export function publicApproval(r: ApprovalRecord) {
  let input: unknown;
  try {
    input = JSON.parse(r.inputJson);
  } catch {
    input = null;
  }
  return {
    id: r.id, toolName: r.toolName, toolCallId: r.toolCallId, tier: r.tier, reason: r.reason, input, status: r.status,
    sessionId: r.sessionId ?? null, source: r.source, createdAt: r.createdAt, expiresAt: r.expiresAt,
    decidedAt: r.decidedAt ?? null, decisionReason: r.decisionReason ?? null, executedAt: r.executedAt ?? null,
  };
}

/** Whether the tenant may see an approval: its session is the tenant's (session-less ones: the default user only). */
async function visible(deps: GatewayDeps, r: ApprovalRecord, userId: string, owners: Map<string, string | undefined>): Promise<boolean> {
  if (r.sessionId === undefined) return userId === deps.defaultUserId;
  if (!owners.has(r.sessionId)) owners.set(r.sessionId, (await deps.options.storage.conversations.getSession(r.sessionId))?.userId);
  const owner = owners.get(r.sessionId);
  return owner === undefined ? userId === deps.defaultUserId : owner === userId;
}

/** Whether the tenant may see this approval (the same rule as the list and the decision). */
export function visibleApproval(deps: GatewayDeps, r: ApprovalRecord, userId: string): Promise<boolean> {
  return visible(deps, r, userId, new Map());
}

/** `GET /v1/approvals?status=pending&limit=`: the tenant's approvals, newest first. */
export function listApprovals(deps: GatewayDeps): RouteHandler {
  return async ({ url, userId }: RouteContext) => {
    const raw = url.searchParams.get('status') ?? 'pending';
    const statuses = raw.split(',').map((s) => s.trim());
    for (const s of statuses) {
      if (!STATUSES.includes(s as ApprovalStatus)) throw badRequest(`status: expected one or more of ${STATUSES.join(', ')} (comma-separated), got ${JSON.stringify(s)}.`);
    }
    const limitRaw = url.searchParams.get('limit');
    if (limitRaw !== null && (!/^\d{1,3}$/.test(limitRaw) || Number(limitRaw) < 1 || Number(limitRaw) > 200)) throw badRequest(`limit: expected an integer from 1 to 200, got ${JSON.stringify(limitRaw)}.`);
    const records = await deps.options.tools.approvals.list({ status: statuses as ApprovalStatus[], limit: limitRaw === null ? 100 : Number(limitRaw) });
    const owners = new Map<string, string | undefined>();
    const out = [];
    for (const r of records) if (await visible(deps, r, userId, owners)) out.push(publicApproval(r));
    return json(200, { approvals: out });
  };
}

/**
 * `POST /v1/approvals/:id { approved, reason? }` (needs the decide capability, see `RouteContext.canDecide`):
 * decide a pending approval and resume its session's turn
 * server-side (the call is re-validated and run, or denied, and the model answers). An approval of an MCP
 * host's call (source `mcp`) or one with no session is only decided: the host calls the tool again. The resumed turn is
 * registered like a chat turn, so `GET /v1/chat/:sessionId/stream` can follow it.
 */
export function decideApproval(deps: GatewayDeps): RouteHandler {
  return async ({ request, params, userId, canDecide, quota }: RouteContext) => {
    const id = decodeParam('id', params['id'] ?? '');
    assertCanDecide(canDecide);
    const body = await readJsonObject(request, deps.maxBodyBytes);
    field.only(body, ['approved', 'reason']);
    const approved = field.boolean(body, 'approved');
    const reason = field.string(body, 'reason', { optional: true, max: 2000 });
    const { tools, runtime } = deps.options;
    const record = await tools.approvals.get(id);
    if (!record || !(await visible(deps, record, userId, new Map()))) throw notFound(`No approval "${id}".`);
    if (record.status !== 'pending') {
      throw new HttpError(409, 'HTTP_CONFLICT', `Approval "${id}" is already ${record.status}.`, { approval: publicApproval(record) });
    }
    const decision = { approvalId: id, approved, ...(reason !== undefined ? { reason } : {}) };
    const sessionId = record.sessionId;
    const resumes = sessionId !== undefined && record.source !== 'mcp';
    let lease: SessionLease | undefined;
    let admission: QuotaAdmission | undefined;
    if (resumes) {
      await assertSessionVisible(deps, sessionId, userId);
      if (deps.isClosing()) throw new HttpError(503, 'HTTP_UNAVAILABLE', 'The gateway is shutting down; no new turns.');
      // The resumed turn is a user turn: it counts against the user's quota, before anything is decided.
      admission = await deps.quotas.admit(userId, quota);
      if (admission.refusal) return quotaResponse(admission.refusal);
      // A turn of this chat running in this process: the runtime queues the resumed one after it. Otherwise the
      // session's lock in storage, taken before deciding, so a turn running on another instance is never interleaved.
      if (!deps.streams.get(sessionId)) {
        lease = await deps.sessionLocks.acquire(sessionId);
        if (!lease) await admission.release();
        if (!lease) throw new HttpError(409, 'HTTP_CONFLICT', `A turn is running in chat "${sessionId}" on another gateway instance; decide this approval when it has ended.`);
      }
    }
    // Decide first, compare-and-set in storage: of two deciders (tabs, gateway instances) exactly one wins; the
    // other gets a 409 and resumes nothing, so the model is not asked twice.
    let decided: ApprovalRecord;
    try {
      decided = await tools.approvals.decide(id, decision);
    } catch (error) {
      await Promise.all([lease?.release(), admission?.release()]);
      const now = (await tools.approvals.get(id)) ?? record;
      if (now.status !== 'pending') throw new HttpError(409, 'HTTP_CONFLICT', `Approval "${id}" is already ${now.status}.`, { approval: publicApproval(now) });
      throw error;
    }
    if (!resumes) {
      // No conversation to resume (an MCP host calls again once approved): the decision is all.
      await admission?.release();
      return json(200, { approval: publicApproval(decided), turn: null });
    }
    // The runtime sees the decision already recorded and runs (or refuses) the call.
    const run = runtime.run({ sessionId: sessionId!, userId, surface: 'gateway', approvals: [decision] });
    const leased = lease ? lease.guard(run) : run;
    const events = admission ? admission.guard(leased) : leased;
    let end;
    if (!lease && deps.streams.get(sessionId!)) {
      // A chat turn is streaming in that session; the runtime queues this one after it.
      for await (const e of events) if (e.type === 'turn-end') end = e;
    } else {
      end = (await deps.streams.start({ chatId: sessionId!, userId, messageId: deps.generateId('msg'), events }).finished).end;
    }
    const after = (await tools.approvals.get(id)) ?? record;
    return json(200, { approval: publicApproval(after), turn: end ? { text: end.text, stopReason: end.stopReason, turnId: end.turnId } : null });
  };
}
