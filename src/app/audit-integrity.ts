import { MinaraError } from '../errors/minara-error';
import { createHttpCheckpointSink } from '../safety/audit-checkpoint';
import { checkAuditChainKey, createAuditIntegrity, type AuditIntegrity } from '../safety/audit-integrity';
import { parseApprovalKey, resolveApprovalKey } from '../safety/approval-key';
import type { Storage } from '../storage/types';
import type { DisposerStack } from './disposers';
import type { AppSettings } from './settings';

function positiveNumber(env: Readonly<Record<string, string | undefined>>, name: string, integer: boolean): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || (integer && (!Number.isSafeInteger(n) || n < 1))) {
    throw new MinaraError('CONFIG_INVALID', `${name}: expected ${integer ? 'a positive integer' : 'a number of seconds ≥ 0'}, got ${JSON.stringify(raw)}`);
  }
  return n;
}

/**
 * The audit part, right after storage: the links keyed with a key derived from the approval key (or
 * `MINARA_AUDIT_KEY`, a key of its own), and the checkpointer, whose closing checkpoint is taken just before the
 * storage closes (every part that appends is released before it). A log keyed with another key (another instance of
 * a fleet holding a different one) stops the start with `CONFIG_INVALID`.
 */
export async function assembleAuditIntegrity(settings: AppSettings, storage: Storage, disposers: DisposerStack): Promise<AuditIntegrity | undefined> {
  const { options, env, config, logger, now } = settings;
  if (options.auditIntegrity === false) return undefined;
  const o = options.auditIntegrity ?? {};
  const secret = env.MINARA_AUDIT_KEY ? parseApprovalKey(env.MINARA_AUDIT_KEY, 'MINARA_AUDIT_KEY') : options.approvalKey ?? resolveApprovalKey({ env, dataDir: config.dataDir }).key;
  const url = env.MINARA_AUDIT_CHECKPOINT_URL?.trim();
  const integrity = createAuditIntegrity({
    storage, secret, dataDir: config.dataDir, logger, now,
    sinks: [...(o.sinks ?? []), ...(url ? [createHttpCheckpointSink({ url })] : [])],
    checkpointEveryRows: o.checkpointEveryRows ?? positiveNumber(env, 'MINARA_AUDIT_CHECKPOINT_ROWS', true),
    checkpointEverySeconds: o.checkpointEverySeconds ?? positiveNumber(env, 'MINARA_AUDIT_CHECKPOINT_SECONDS', false),
    ...(o.instance !== undefined ? { instance: o.instance } : env.MINARA_INSTANCE_ID ? { instance: env.MINARA_INSTANCE_ID } : {}),
  });
  disposers.push(() => integrity.close());
  await checkAuditChainKey(storage, integrity);
  return integrity;
}
