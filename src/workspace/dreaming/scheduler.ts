import type { Logger } from '../../util/logger';
import { DREAMING_LOG_MODULE, type DreamTickResult } from './task';

/** A running dream scheduler. */
export interface DreamScheduler {
  /** Stop the timer (an in-flight tick finishes and still releases its lock). */
  stop(): void;
  /** Whether a tick is running right now. */
  readonly running: boolean;
}

/**
 * Call `tick` every `intervalMs` on an unref'd timer (it never keeps the process alive). A tick still in
 * flight when the next one is due is not overlapped; errors are logged, never thrown.
 */
export function startDreamScheduler(options: {
  readonly intervalMs: number;
  readonly tick: () => Promise<DreamTickResult>;
  readonly logger: Logger;
}): DreamScheduler {
  const { intervalMs, tick, logger } = options;
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    tick()
      .catch((error: unknown) => {
        logger.error('dream_tick_failed', { module: DREAMING_LOG_MODULE, event: 'dream_tick_failed', error: String(error) });
      })
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref?.();
  return {
    stop: () => clearInterval(timer),
    get running() {
      return running;
    },
  };
}
