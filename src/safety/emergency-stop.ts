import type { MinaraBus } from '../events/bus';
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';
import type { EmergencyStopApi, EmergencyStopScope, EmergencyStopStatus } from '../tools/types';

/**
 * Storage keys. The global stop is `emergency_stop` (the operator's). A user's stop lives under two keys, one per
 * authority, so a user's release can never delete what an operator engaged, with no read-then-delete race:
 * `emergency_stop:user:<userId>` is the one an operator engaged on that user (a stop stored by an older version,
 * whoever engaged it, reads as this one: fail closed), `emergency_stop:self:<userId>` the one the user engaged.
 */
const GLOBAL_KEY = 'emergency_stop';
const operatorKey = (userId: string) => `${GLOBAL_KEY}:user:${userId}`;
const selfKey = (userId: string) => `${GLOBAL_KEY}:self:${userId}`;

function checkScope(scope: EmergencyStopScope | undefined, where: string): string | undefined {
  if (scope?.actor !== undefined && scope.actor !== 'operator' && scope.actor !== 'user') {
    throw new MinaraError('INVALID_ARGUMENT', `emergencyStop.${where}: "actor" must be "operator" or "user", got ${JSON.stringify(scope.actor)}.`);
  }
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
 * A stop is released only by whoever may engage it at that level (`scope.actor`, `operator` unless said
 * otherwise): the global stop and a stop an operator engaged on a user are released by an operator only; a user
 * (`actor: 'user'`: the gateway for a tenant's credential, the `emergency_stop` tool for the turn's user) may
 * release only the stop they engaged themselves. Anything else is `STOP_RELEASE_FORBIDDEN`, on every surface
 * (CLI, HTTP, MCP, the web app, the REPL), because they all call this.
 *
 * While any stop applies to a call, the tier gate blocks every tool above READ_ONLY.
 */
export function createEmergencyStop(options: { storage: Storage; now: () => Date; bus?: MinaraBus | undefined }): EmergencyStopApi {
  const { storage, now, bus } = options;

  async function read(key: string, scope: EmergencyStopStatus['scope'], userId: string | undefined, engagedBy: 'operator' | 'user'): Promise<EmergencyStopStatus> {
    const raw = await storage.meta.get(key);
    if (raw === undefined) return { engaged: false };
    const at = { scope, ...(userId !== undefined ? { userId } : {}), engagedBy };
    try {
      const parsed = JSON.parse(raw) as { reason?: string; since?: string; by?: string };
      return { engaged: true, reason: parsed.reason, since: parsed.since, ...at, ...(typeof parsed.by === 'string' ? { by: parsed.by } : {}) };
    } catch {
      // A corrupt flag fails closed: still engaged.
      return { engaged: true, reason: 'emergency stop flag is unreadable', ...at };
    }
  }
  /** A user's stop as it applies: the operator's first (it outranks the user's own), else the user's own. */
  async function readUser(userId: string): Promise<EmergencyStopStatus> {
    const byOperator = await read(operatorKey(userId), 'user', userId, 'operator');
    return byOperator.engaged ? byOperator : read(selfKey(userId), 'user', userId, 'user');
  }
  const forbidden = (message: string) => new MinaraError('STOP_RELEASE_FORBIDDEN', message);

  // Every engage and release is an audit row (source `operator`), whoever did it.
  async function audit(toolName: 'stop.engage' | 'stop.release', userId: string | undefined, scope: EmergencyStopScope | undefined, reason?: string): Promise<void> {
    await storage.audit.append({
      at: now().toISOString(), toolName, tier: 0, source: 'operator', decision: 'allowed', durationMs: 0,
      argsJson: JSON.stringify({ scope: userId === undefined ? 'global' : 'user', ...(userId !== undefined ? { userId } : {}), ...(reason !== undefined ? { reason } : {}), by: scope?.by ?? 'sdk', actor: scope?.actor ?? 'operator' }),
    });
  }

  return {
    async engage(reason, scope) {
      if (typeof reason !== 'string' || reason.trim() === '') {
        throw new MinaraError('INVALID_ARGUMENT', 'emergencyStop.engage: "reason" must be a non-empty string.');
      }
      const userId = checkScope(scope, 'engage');
      const asUser = scope?.actor === 'user';
      if (userId === undefined && asUser) throw forbidden('The global stop is the operator\'s: a user engages and releases only their own stop.');
      const key = userId === undefined ? GLOBAL_KEY : asUser ? selfKey(userId) : operatorKey(userId);
      await storage.meta.set(key, JSON.stringify({ engaged: true, reason, since: now().toISOString(), ...(scope?.by !== undefined ? { by: scope.by } : {}) }));
      await audit('stop.engage', userId, scope, reason);
      bus?.emit('emergency-stop:changed', { engaged: true, reason, ...(userId !== undefined ? { userId } : {}) });
    },
    async release(scope) {
      const userId = checkScope(scope, 'release');
      if (scope?.actor === 'user') {
        if (userId === undefined) throw forbidden('The global stop was engaged by an operator; only an operator releases it.');
        const byOperator = await read(operatorKey(userId), 'user', userId, 'operator');
        if (byOperator.engaged) {
          throw forbidden(`The stop of "${userId}" was engaged by an operator${byOperator.by ? ` (${byOperator.by})` : ''}; only an operator releases it. A user releases only a stop they engaged themselves.`);
        }
        await storage.meta.delete(selfKey(userId));
      } else if (userId === undefined) await storage.meta.delete(GLOBAL_KEY);
      else {
        // An operator releases the user's stop at every level.
        await storage.meta.delete(operatorKey(userId));
        await storage.meta.delete(selfKey(userId));
      }
      await audit('stop.release', userId, scope);
      bus?.emit('emergency-stop:changed', { engaged: false, ...(userId !== undefined ? { userId } : {}) });
    },
    async status(scope) {
      const userId = checkScope(scope, 'status');
      // The global stop first: it applies to everyone and outranks a user's own.
      const global = await read(GLOBAL_KEY, 'global', undefined, 'operator');
      if (global.engaged || userId === undefined) return global;
      return readUser(userId);
    },
    async userStatus(userId) {
      const id = checkScope({ userId }, 'userStatus');
      if (id === undefined) throw new MinaraError('INVALID_ARGUMENT', 'emergencyStop.userStatus: "userId" must be a non-empty string.');
      return readUser(id);
    },
  };
}
