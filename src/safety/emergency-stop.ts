import type { MinaraBus } from '../events/bus';
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';
import type { EmergencyStopApi, EmergencyStopScope, EmergencyStopStatus } from '../tools/types';

/** The storage key of the global stop (the operator's); a user's stop is `emergency_stop:user:<userId>`. */
const GLOBAL_KEY = 'emergency_stop';
const userKey = (userId: string) => `${GLOBAL_KEY}:user:${userId}`;

function checkScope(scope: EmergencyStopScope | undefined, where: string): string | undefined {
  if (scope === undefined || scope.userId === undefined) return undefined;
  if (typeof scope.userId !== 'string' || scope.userId.trim() === '') throw new MinaraError('INVALID_ARGUMENT', `emergencyStop.${where}: "userId" must be a non-empty string when given.`);
  return scope.userId;
}

/**
 * The emergency stop, kept in storage so it holds in every process sharing the database. Two scopes:
 *
 * - **a user's stop** (`{ userId }`): halts that user's agent only. It is what the `emergency_stop` tool engages
 *   for the user of the turn, so one tenant (or an MCP host acting for one) can never halt everyone else.
 * - **the global stop** (no scope): halts every user; an operator action (the SDK, `minara stop --global`).
 *
 * While either applies to a call, the tier gate blocks every tool above READ_ONLY.
 */
export function createEmergencyStop(options: { storage: Storage; now: () => Date; bus?: MinaraBus | undefined }): EmergencyStopApi {
  const { storage, now, bus } = options;

  async function read(key: string, scope: EmergencyStopStatus['scope'], userId: string | undefined): Promise<EmergencyStopStatus> {
    const raw = await storage.meta.get(key);
    if (raw === undefined) return { engaged: false };
    const at = { scope, ...(userId !== undefined ? { userId } : {}) };
    try {
      const parsed = JSON.parse(raw) as { reason?: string; since?: string };
      return { engaged: true, reason: parsed.reason, since: parsed.since, ...at };
    } catch {
      // A corrupt flag fails closed: still engaged.
      return { engaged: true, reason: 'emergency stop flag is unreadable', ...at };
    }
  }

  // Every engage and release is an audit row (source `operator`), whoever did it.
  async function audit(toolName: 'stop.engage' | 'stop.release', userId: string | undefined, by: string | undefined, reason?: string): Promise<void> {
    await storage.audit.append({
      at: now().toISOString(), toolName, tier: 0, source: 'operator', decision: 'allowed', durationMs: 0,
      argsJson: JSON.stringify({ scope: userId === undefined ? 'global' : 'user', ...(userId !== undefined ? { userId } : {}), ...(reason !== undefined ? { reason } : {}), by: by ?? 'sdk' }),
    });
  }

  return {
    async engage(reason, scope) {
      if (typeof reason !== 'string' || reason.trim() === '') {
        throw new MinaraError('INVALID_ARGUMENT', 'emergencyStop.engage: "reason" must be a non-empty string.');
      }
      const userId = checkScope(scope, 'engage');
      await storage.meta.set(userId === undefined ? GLOBAL_KEY : userKey(userId), JSON.stringify({ engaged: true, reason, since: now().toISOString() }));
      await audit('stop.engage', userId, scope?.by, reason);
      bus?.emit('emergency-stop:changed', { engaged: true, reason, ...(userId !== undefined ? { userId } : {}) });
    },
    async release(scope) {
      const userId = checkScope(scope, 'release');
      await storage.meta.delete(userId === undefined ? GLOBAL_KEY : userKey(userId));
      await audit('stop.release', userId, scope?.by);
      bus?.emit('emergency-stop:changed', { engaged: false, ...(userId !== undefined ? { userId } : {}) });
    },
    async status(scope) {
      const userId = checkScope(scope, 'status');
      // The global stop first: it applies to everyone and outranks a user's own.
      const global = await read(GLOBAL_KEY, 'global', undefined);
      if (global.engaged || userId === undefined) return global;
      return read(userKey(userId), 'user', userId);
    },
    async userStatus(userId) {
      const id = checkScope({ userId }, 'userStatus');
      if (id === undefined) throw new MinaraError('INVALID_ARGUMENT', 'emergencyStop.userStatus: "userId" must be a non-empty string.');
      return read(userKey(id), 'user', id);
    },
  };
}
