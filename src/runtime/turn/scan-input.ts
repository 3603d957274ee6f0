import { scanInput } from '../../safety/input-scanner';
import type { ToolCallContext } from '../../tools/types';
import type { Emit, TurnDeps } from './types';

/**
 * Part of stage 2, prepare and route: the input and recalled content are scanned; findings are events and
 * audit rows, never silent. The frozen memory snapshot is passed only when it was just loaded (it cannot
 * change within the session).
 */
export async function scanTurnInput(
  deps: TurnDeps,
  ctx: ToolCallContext,
  texts: { readonly message: string | undefined; readonly memory: string | undefined; readonly workspace: string | undefined },
  emit: Emit,
): Promise<void> {
  const { options, now } = deps;
  const scans: Array<['message' | 'memory' | 'workspace', string | undefined]> = [
    ['message', texts.message],
    ['memory', texts.memory],
    ['workspace', texts.workspace],
  ];
  for (const [target, text] of scans) {
    for (const f of text ? scanInput(text) : []) {
      emit({ type: 'input-flagged', target, kind: f.kind, pattern: f.pattern, excerpt: f.excerpt });
      await options.storage.audit.append({
        at: now().toISOString(), toolName: '(input-scanner)', tier: 0, source: ctx.source, sessionId: ctx.sessionId, traceId: ctx.traceId,
        decision: 'allowed', code: f.kind === 'secret' ? 'INPUT_SECRET' : 'INPUT_PROMPT_INJECTION', reason: `${target}: ${f.pattern}`,
        durationMs: 0, argsJson: JSON.stringify({ target, pattern: f.pattern }), userId: ctx.userId, kind: 'input_flag',
      });
    }
  }
}
