import { MinaraError } from '../../errors/minara-error';
import type { PermissionTier } from '../../safety/permission-tier';
import type { ToolCallContext, ToolExecutionContext, ToolOrderFacts } from '../types';

/**
 * Run a handler with its timeout (`TOOL_TIMEOUT`, retryable) and the caller's abort signal (`TOOL_ABORTED`);
 * either aborts the signal the handler receives.
 */
export async function runWithTimeout(
  fn: (input: unknown, ctx: ToolExecutionContext) => unknown,
  input: unknown,
  base: { call: ToolCallContext; toolCallId: string; tier: PermissionTier; approvalId?: string | undefined; orderFacts?: ToolOrderFacts | undefined },
  timeoutMs: number,
  signal: AbortSignal | undefined,
  name: string,
): Promise<unknown> {
  if (signal?.aborted) throw new MinaraError('TOOL_ABORTED', `Tool "${name}" was cancelled before it started.`);
  const controller = new AbortController();
  // A handler that answers synchronously cannot overrun its timeout (no timer could fire while it runs):
  // only a pending result is raced against the timer and the caller's signal.
  const result = fn(input, { ...base, signal: controller.signal });
  if (!isThenable(result)) return result;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new MinaraError('TOOL_TIMEOUT', `Tool "${name}" did not finish within ${timeoutMs} ms.`, { retryable: true });
      reject(e); // first: a handler that settles when it sees the abort does not win the race
      controller.abort(e);
    }, timeoutMs);
    if (signal) {
      onAbort = () => {
        const e = new MinaraError('TOOL_ABORTED', `Tool "${name}" was cancelled.`);
        reject(e);
        controller.abort(e);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    }
  });
  try {
    return await Promise.race([result, stopped]);
  } finally {
    clearTimeout(timer);
    if (signal && onAbort) signal.removeEventListener('abort', onAbort);
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
