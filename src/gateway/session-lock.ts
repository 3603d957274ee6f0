import { randomBytes } from 'node:crypto';
import type { Storage } from '../storage/types';
import type { Logger } from '../util/logger';

/** A session held by one turn of this gateway: renewed while the turn runs, released when it ends. */
export interface SessionLease {
  /** The turn's events, passed through; the lease is released when they end (or fail). */
  guard<T>(events: AsyncIterable<T>): AsyncIterable<T>;
  /** Release now (a turn that did not start). */
  release(): Promise<void>;
}

/** One turn per session across every gateway process on the storage. */
export interface SessionLocks {
  /** Take the session's lock for one turn, or undefined when a turn holds it (here or in another process). */
  acquire(sessionId: string): Promise<SessionLease | undefined>;
}

/**
 * Session locks with a lease, in storage (`storage.controls`): two turns on one session sent to two gateway
 * processes of a fleet are never interleaved; the second is refused while the first runs. A lease is renewed every
 * third of its length while its turn runs; a process that dies leaves a lock that lapses after `leaseMs`.
 */
export function createSessionLocks(options: { readonly storage: Storage; readonly now: () => Date; readonly logger: Logger; readonly leaseMs?: number | undefined }): SessionLocks {
  const { storage, now, logger, leaseMs = 30_000 } = options;
  const instance = `gateway:${process.pid}:${randomBytes(4).toString('hex')}`;
  let seq = 0;
  const until = () => new Date(now().getTime() + leaseMs).toISOString();

  return {
    async acquire(sessionId) {
      const owner = `${instance}:${++seq}`;
      const taken = await storage.controls.acquireSessionLock({ sessionId, owner, now: now().toISOString(), leaseUntil: until() });
      if (!taken) return undefined;
      let released = false;
      let timer: NodeJS.Timeout | undefined;
      const release = async () => {
        if (released) return;
        released = true;
        if (timer) clearInterval(timer);
        try {
          await storage.controls.releaseSessionLock(sessionId, owner);
        } catch (error) {
          logger.warn('gateway: could not release a session lock (it lapses with its lease)', { sessionId, error: error instanceof Error ? error.message : String(error) });
        }
      };
      return {
        release,
        guard<T>(events: AsyncIterable<T>): AsyncIterable<T> {
          timer = setInterval(() => {
            storage.controls.renewSessionLock(sessionId, owner, until()).then(
              (held) => held || logger.warn('gateway: a session lock was lost while its turn ran', { sessionId }),
              (error: unknown) => logger.warn('gateway: could not renew a session lock', { sessionId, error: error instanceof Error ? error.message : String(error) }),
            );
          }, Math.max(1000, Math.floor(leaseMs / 3)));
          timer.unref?.();
          return (async function* () {
            try {
              yield* events;
            } finally {
              await release();
            }
          })();
        },
      };
    },
  };
}
