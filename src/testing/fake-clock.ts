/** A controllable clock for tests: pass `clock.now` wherever a factory takes `now`. */
export interface FakeClock {
  /** The current fake time. */
  now(): Date;
  /** Move forward by `ms`. */
  advance(ms: number): Date;
  /** Jump to a time. */
  set(time: Date | string | number): Date;
}

/**
 * Create a fake clock starting at `start` (default 2026-01-01T00:00:00Z).
 *
 * @example
 * ```ts
 * const clock = createFakeClock('2026-03-01T12:00:00Z');
 * const registry = createToolRegistry({ storage, now: clock.now });
 * clock.advance(16 * 60_000); // approvals expire
 * ```
 */
export function createFakeClock(start: Date | string | number = '2026-01-01T00:00:00.000Z'): FakeClock {
  let t = new Date(start).getTime();
  if (Number.isNaN(t)) throw new TypeError(`createFakeClock: invalid start time ${String(start)}`);
  return {
    now: () => new Date(t),
    advance(ms) {
      if (!Number.isFinite(ms) || ms < 0) throw new RangeError('createFakeClock.advance: ms must be a non-negative number');
      t += ms;
      return new Date(t);
    },
    set(time) {
      const next = new Date(time).getTime();
      if (Number.isNaN(next)) throw new TypeError(`createFakeClock.set: invalid time ${String(time)}`);
      t = next;
      return new Date(t);
    },
  };
}
