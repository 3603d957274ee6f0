import { ApprovalError } from '../errors/subclasses';
import type { MinaraBus } from '../events/bus';
import type { ApprovalQuery, ApprovalRecord, Storage } from '../storage/types';
import { canonicalJson, hmacHex, safeEqual, sha256Hex } from '../util/canonical-json';
import type { IdGenerator } from '../util/ids';

/** Default lifetime of an approval request: 15 minutes. */
export const DEFAULT_APPROVAL_TTL_MS = 15 * 60_000;

/** What a new approval request is bound to. */
export interface ApprovalRequestInput {
  readonly toolName: string;
  readonly toolCallId: string;
  /** The validated input; its canonical-JSON sha256 is what the approval binds. */
  readonly input: unknown;
  readonly tier: number;
  readonly source: string;
  readonly reason: string;
  readonly sessionId?: string | undefined;
  readonly traceId?: string | undefined;
}

/** The approval service behind `registry.approvals`. */
export interface ApprovalService {
  request(input: ApprovalRequestInput): Promise<ApprovalRecord>;
  get(approvalId: string): Promise<ApprovalRecord | undefined>;
  list(query?: ApprovalQuery): Promise<ApprovalRecord[]>;
  decide(approvalId: string, decision: { approved: boolean; reason?: string | undefined }): Promise<ApprovalRecord>;
  consume(approvalId: string, binding: ApprovalBinding): Promise<ApprovalRecord>;
}

/** What a call presenting an approval must match: the tool, the input, the session and the source it was issued to. */
export interface ApprovalBinding {
  readonly toolName: string;
  readonly input: unknown;
  /** The session of the call; must be the session the approval was requested in. */
  readonly sessionId: string;
  /** The source of the call; must be the source the approval was requested from. */
  readonly source: string;
  /** When given, must be the call id the approval was requested for. */
  readonly toolCallId?: string | undefined;
}

/** sha256 of the canonical JSON of a tool input. */
export function hashToolInput(input: unknown): string {
  return sha256Hex(canonicalJson(input ?? null));
}

/**
 * Persisted, signed, single-use approvals. A request is bound to tool name, call id, input hash, session and
 * source and signed with the instance HMAC key; the decision is signed too. `consume` refuses anything
 * forged, replayed, expired, denied, undecided, bound to other input or presented from another session or
 * source, and wins the `approved → executed`
 * transition atomically, so two processes cannot both execute one approval.
 */
export function createApprovalService(options: {
  storage: Storage;
  now: () => Date;
  generateId: IdGenerator;
  ttlMs?: number | undefined;
  bus?: MinaraBus | undefined;
  /** The signing key, kept outside the storage. Without it the storage's own instance key is used (weaker). */
  key?: Uint8Array | undefined;
}): ApprovalService {
  const { storage, now, generateId, ttlMs = DEFAULT_APPROVAL_TTL_MS, bus } = options;
  const external = options.key;
  const key = async () => external ?? (await storage.meta.getInstance()).hmacKey;

  const bindingOf = (r: Pick<ApprovalRecord, 'id' | 'toolName' | 'toolCallId' | 'inputHash' | 'tier' | 'source' | 'sessionId' | 'createdAt' | 'expiresAt'>) =>
    canonicalJson({ v: 1, id: r.id, toolName: r.toolName, toolCallId: r.toolCallId, inputHash: r.inputHash, tier: r.tier, source: r.source, sessionId: r.sessionId ?? null, createdAt: r.createdAt, expiresAt: r.expiresAt });
  const decisionOf = (id: string, status: 'approved' | 'denied', decidedAt: string) => `v1|${id}|${status}|${decidedAt}`;
  const executionOf = (id: string, executedAt: string) => `v1|${id}|executed|${executedAt}`;

  async function load(approvalId: string): Promise<ApprovalRecord> {
    if (typeof approvalId !== 'string' || approvalId === '') {
      throw new ApprovalError('APPROVAL_NOT_FOUND', String(approvalId), 'approvalId must be a non-empty string.');
    }
    const record = await storage.approvals.get(approvalId);
    if (!record) throw new ApprovalError('APPROVAL_NOT_FOUND', approvalId, `No approval request "${approvalId}".`);
    const k = await key();
    if (!safeEqual(record.signature, hmacHex(k, bindingOf(record)))) {
      throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" has an invalid signature; it was not issued by this instance.`);
    }
    // The input shown to the approver and run on resume is the input the signed hash binds.
    if (sha256Hex(record.inputJson) !== record.inputHash) {
      throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" has stored arguments that differ from the ones it was issued for.`);
    }
    if (record.status === 'approved' || record.status === 'denied' || record.status === 'executed') {
      const signed = record.status === 'denied' ? 'denied' : 'approved';
      const ok = record.decidedAt !== undefined && record.decisionSignature !== undefined &&
        safeEqual(record.decisionSignature, hmacHex(k, decisionOf(record.id, signed, record.decidedAt)));
      if (!ok) throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" has a decision that was not signed by this instance.`);
    }
    if (record.status === 'executed') {
      const ok = record.executedAt !== undefined && record.executionSignature !== undefined &&
        safeEqual(record.executionSignature, hmacHex(k, executionOf(record.id, record.executedAt)));
      if (!ok) throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" is marked executed without a signed execution.`);
    }
    if (record.status !== 'executed' && (record.executedAt !== undefined || record.executionSignature !== undefined)) {
      // A used approval whose status was rolled back in storage: refuse, never replay.
      throw new ApprovalError('APPROVAL_ALREADY_USED', approvalId, `Approval "${approvalId}" was already executed; its stored state was rolled back.`);
    }
    return record;
  }

  async function expireIfDue(record: ApprovalRecord): Promise<void> {
    if (Date.parse(record.expiresAt) <= now().getTime()) {
      await storage.approvals.transition(record.id, ['pending', 'approved'], 'expired');
      throw new ApprovalError('APPROVAL_EXPIRED', record.id, `Approval "${record.id}" expired at ${record.expiresAt}.`);
    }
  }

  return {
    async request(input) {
      const created = now();
      const base = {
        id: generateId('apr'),
        toolName: input.toolName,
        toolCallId: input.toolCallId,
        inputHash: hashToolInput(input.input),
        inputJson: canonicalJson(input.input ?? null),
        tier: input.tier,
        sessionId: input.sessionId,
        traceId: input.traceId,
        source: input.source,
        reason: input.reason,
        status: 'pending' as const,
        createdAt: created.toISOString(),
        expiresAt: new Date(created.getTime() + ttlMs).toISOString(),
      };
      const record: ApprovalRecord = { ...base, signature: hmacHex(await key(), bindingOf(base)) };
      await storage.approvals.create(record);
      bus?.emit('approval:requested', { approvalId: record.id, toolName: record.toolName, sessionId: record.sessionId });
      return record;
    },
    get: (approvalId) => storage.approvals.get(approvalId),
    list: (query) => storage.approvals.list(query),
    async decide(approvalId, decision) {
      if (typeof decision?.approved !== 'boolean') {
        throw new ApprovalError('APPROVAL_INVALID', String(approvalId), 'decide: "approved" must be a boolean.');
      }
      const record = await load(approvalId);
      if (record.status === 'executed') throw new ApprovalError('APPROVAL_ALREADY_USED', approvalId, `Approval "${approvalId}" was already used.`);
      if (record.status === 'expired') throw new ApprovalError('APPROVAL_EXPIRED', approvalId, `Approval "${approvalId}" expired at ${record.expiresAt}.`);
      if (record.status !== 'pending') {
        throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" was already ${record.status}.`);
      }
      await expireIfDue(record);
      const status = decision.approved ? 'approved' : 'denied';
      const decidedAt = now().toISOString();
      const decisionSignature = hmacHex(await key(), decisionOf(approvalId, status, decidedAt));
      const won = await storage.approvals.transition(approvalId, ['pending'], status, { decidedAt, decisionReason: decision.reason, decisionSignature });
      if (!won) throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" was decided concurrently.`);
      bus?.emit('approval:decided', { approvalId, approved: decision.approved });
      return (await storage.approvals.get(approvalId))!;
    },
    async consume(approvalId, binding) {
      const record = await load(approvalId);
      switch (record.status) {
        case 'executed':
          throw new ApprovalError('APPROVAL_ALREADY_USED', approvalId, `Approval "${approvalId}" was already used; approvals are single use.`);
        case 'denied':
          throw new ApprovalError('APPROVAL_DENIED', approvalId, `Approval "${approvalId}" was denied${record.decisionReason ? `: ${record.decisionReason}` : ''}.`);
        case 'pending':
          await expireIfDue(record);
          throw new ApprovalError('APPROVAL_NOT_DECIDED', approvalId, `Approval "${approvalId}" has not been approved yet.`);
        case 'expired':
          throw new ApprovalError('APPROVAL_EXPIRED', approvalId, `Approval "${approvalId}" expired at ${record.expiresAt}.`);
        case 'approved':
          break;
      }
      await expireIfDue(record);
      if (record.toolName !== binding.toolName) {
        throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" is for tool "${record.toolName}", not "${binding.toolName}".`);
      }
      if ((record.sessionId ?? null) !== binding.sessionId) {
        throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" was issued for another session; it authorises nothing here.`);
      }
      if (record.source !== binding.source) {
        throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" was issued to a ${record.source} call, not a ${binding.source} one.`);
      }
      if (binding.toolCallId !== undefined && binding.toolCallId !== record.toolCallId) {
        throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" is bound to call "${record.toolCallId}", not "${binding.toolCallId}".`);
      }
      if (hashToolInput(binding.input) !== record.inputHash) {
        throw new ApprovalError('APPROVAL_INVALID', approvalId, `Approval "${approvalId}" was given for different input; the arguments changed after approval.`);
      }
      const executedAt = now().toISOString();
      const executionSignature = hmacHex(await key(), executionOf(approvalId, executedAt));
      const won = await storage.approvals.transition(approvalId, ['approved'], 'executed', { executedAt, executionSignature });
      if (!won) throw new ApprovalError('APPROVAL_ALREADY_USED', approvalId, `Approval "${approvalId}" was already used; approvals are single use.`);
      return record;
    },
  };
}
