import { randomBytes } from 'node:crypto';
import type { UsageStorage } from '../storage/usage-types';
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

/**
 * An admitted (or refused) autonomous turn. Admitted under a daily budget, the turn's estimated cost is reserved in
 * storage until `release` (call it when the turn ends, ok or not: the ledger then holds the real cost); a
 * reservation whose process died lapses after its lease.
 */
export interface AutonomousAdmission {
  /** Why the turn may not start (a stop, the spent budget); undefined when it may. */
  readonly refusal?: string | undefined;
  /** Release the reservation (idempotent). */
  release(): Promise<void>;
}

/** An admission that holds nothing: refused with `refusal`, or admitted without a budget. */
export function unreservedAdmission(refusal?: string): AutonomousAdmission {
  return { ...(refusal !== undefined ? { refusal } : {}), release: async () => {} };
}

/**
 * The daily budget of autonomous spend, reserved per turn: `reserve()` admits a turn while the day's spend (the
 * ledger's `sources`, all users) plus the reservations of turns still running is below the budget, and reserves
 * the turn's estimate (`storage.usage.reserve`: the largest autonomous turn of the day, or all that is left before
 * the first), atomically in storage, so parallel turns in one process, several processes or several instances take
 * the spend past the budget by at most one turn. A reservation is renewed every third of `leaseMs` until released.
 *
 * @example
 * ```ts
 * const budget = createAutonomousBudget({ storage, dailyBudgetUsd: 5, sources: ['heartbeat', 'cron', 'webhook'], now: () => new Date() });
 * const admission = await budget.reserve();
 * if (admission.refusal) return { skipped: admission.refusal };
 * try { await runTurn(); } finally { await admission.release(); }
 * ```
 */
export function createAutonomousBudget(options: {
  readonly storage: { readonly usage: UsageStorage };
  readonly dailyBudgetUsd: number;
  readonly sources: readonly string[];
  readonly now: () => Date;
  readonly leaseMs?: number | undefined;
}): { reserve(): Promise<AutonomousAdmission> } {
  const { storage, dailyBudgetUsd, sources, now, leaseMs = 60_000 } = options;
  const instance = `autonomous:${process.pid}:${randomBytes(4).toString('hex')}`;
  let seq = 0;
  return {
    async reserve() {
      const at = now();
      const day = at.toISOString().slice(0, 10);
      const id = `${instance}:${++seq}`;
      const r = await storage.usage.reserve({
        id, scope: 'autonomous', day, sources, limitUsd: dailyBudgetUsd, now: at.toISOString(), expiresAt: new Date(at.getTime() + leaseMs).toISOString(),
      });
      if (!r.admitted) {
        const running = r.reservedUsd > 0 ? ` and autonomous turns still running hold $${r.reservedUsd.toFixed(4)}` : '';
        return unreservedAdmission(`daily budget spent: $${r.spentUsd.toFixed(4)}${running} of $${dailyBudgetUsd.toFixed(2)} on autonomous turns today (UTC)`);
      }
      const timer = setInterval(() => {
        storage.usage.renewReservation(id, new Date(now().getTime() + leaseMs).toISOString()).catch(() => {});
      }, Math.max(1000, Math.floor(leaseMs / 3)));
      timer.unref?.();
      let released = false;
      return {
        async release() {
          if (released) return;
          released = true;
          clearInterval(timer);
          await storage.usage.releaseReservation(id).catch(() => false);
        },
      };
    },
  };
}
