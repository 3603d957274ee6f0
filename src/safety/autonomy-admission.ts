import type { EmergencyStopApi } from '../tools/types';

/**
 * Why an autonomous run (heartbeat, schedule, webhook) for `userId` may not start: the global stop or that user's
 * stop is engaged. The background runner skips the run with this reason (stored on the job run, logged), and a
 * webhook is answered 429 with it; undefined when no stop applies.
 *
 * @example
 * ```ts
 * const why = await autonomousStopReason(registry.emergencyStop, 'alice');
 * if (why) return { skipped: why };
 * ```
 */
export async function autonomousStopReason(stop: EmergencyStopApi, userId: string): Promise<string | undefined> {
  const status = await stop.status({ userId });
  if (!status.engaged) return undefined;
  const which = status.scope === 'user' ? `${userId}'s emergency stop is engaged` : 'the global emergency stop is engaged';
  return `${which}${status.reason ? ` (${status.reason})` : ''}; autonomous runs are skipped until it is released`;
}
