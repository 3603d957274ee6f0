import type { MinaraBus } from '../events/bus';
import { MinaraError } from '../errors/minara-error';
import type { Storage } from '../storage/types';
import type { EmergencyStopApi } from '../tools/types';

const KEY = 'emergency_stop';

/**
 * The emergency stop, kept in storage so it holds in every process sharing the database.
 * While engaged, the tier gate blocks every tool above READ_ONLY.
 */
export function createEmergencyStop(options: { storage: Storage; now: () => Date; bus?: MinaraBus | undefined }): EmergencyStopApi {
  const { storage, now, bus } = options;
  return {
    async engage(reason) {
      if (typeof reason !== 'string' || reason.trim() === '') {
        throw new MinaraError('INVALID_ARGUMENT', 'emergencyStop.engage: "reason" must be a non-empty string.');
      }
      await storage.meta.set(KEY, JSON.stringify({ engaged: true, reason, since: now().toISOString() }));
      bus?.emit('emergency-stop:changed', { engaged: true, reason });
    },
    async release() {
      await storage.meta.delete(KEY);
      bus?.emit('emergency-stop:changed', { engaged: false });
    },
    async status() {
      const raw = await storage.meta.get(KEY);
      if (raw === undefined) return { engaged: false };
      try {
        const parsed = JSON.parse(raw) as { reason?: string; since?: string };
        return { engaged: true, reason: parsed.reason, since: parsed.since };
      } catch {
        // A corrupt flag fails closed: still engaged.
        return { engaged: true, reason: 'emergency stop flag is unreadable' };
      }
    },
  };
}
