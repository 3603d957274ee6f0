/**
 * A one-character spinner shown while the REPL waits on the model. Only on a TTY: on a pipe `start` and
 * `stop` do nothing, so piped output and tests see clean text.
 */
const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export interface Spinner {
  start(label?: string): void;
  /** Stop and erase the spinner line. Idempotent. */
  stop(): void;
  readonly spinning: boolean;
}

export function createSpinner(options: { write: (s: string) => void; enabled: boolean; intervalMs?: number }): Spinner {
  const { write, enabled, intervalMs = 80 } = options;
  let timer: ReturnType<typeof setInterval> | undefined;
  let frame = 0;
  let text = '';
  const draw = () => {
    write(`\r${FRAMES[frame++ % FRAMES.length]} ${text}`);
  };
  return {
    get spinning() {
      return timer !== undefined;
    },
    start(label = 'thinking…') {
      if (!enabled || timer !== undefined) return;
      text = label;
      frame = 0;
      draw();
      timer = setInterval(draw, intervalMs);
      timer.unref?.();
    },
    stop() {
      if (timer === undefined) return;
      clearInterval(timer);
      timer = undefined;
      write('\r\x1b[2K');
    },
  };
}
