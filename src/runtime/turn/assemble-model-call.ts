import type { ModelMessage, ToolSet } from 'ai';
import { toAISDKTools } from '../../tools/ai-sdk';
import { mergeConsecutiveUserMessages } from '../conversation';
import { toInstructions } from '../prompt-blocks';
import type { TurnState } from './state';
import type { Emit, TurnDeps, TurnPrompt } from './types';

/** What one model call is sent: the cached system blocks, the conversation and the turn's tools. */
export interface ModelCall {
  readonly instructions: ReturnType<typeof toInstructions>;
  readonly messages: ModelMessage[];
  readonly tools: ToolSet;
}

/**
 * Stage 7, assemble the prompt (once per attempt): the system blocks as cached instructions, the history as
 * the provider sees it (attachment references become the provider's parts for this call only; the turn's
 * history keeps the keys) with the history cache breakpoint, and the turn's tools, each call journaled as it
 * returns and `activate_skills` answered with the newly loaded guidance.
 */
export async function assembleModelCall(deps: TurnDeps, turn: TurnState, prompt: TurnPrompt, emit: Emit): Promise<ModelCall> {
  const { options } = deps;
  const { ctx, journal } = turn;
  const forModel = options.messageTranslator ? await options.messageTranslator.toModelMessages(turn.history, { userId: turn.scope.userId }) : turn.history;
  const aiTools = toAISDKTools(options.tools, prompt.toolNames, {
    context: ctx,
    onSettled: (call) => journal.add({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, output: call.envelope }),
    // A call with side effects: its journal entry commits with its audit row (`activate_skills` is journaled with the
    // guidance onResult adds). A side-effect-free call's entry stays in memory, and its row is held in the turn's batch.
    settleWithAuditRow: (name) => name !== 'activate_skills' && (turn.auditBatch === undefined || options.tools.get(name)?.sideEffects !== false),
    ...(turn.auditBatch ? { auditBatch: turn.auditBatch } : {}),
    onResult: (name, outcome) => {
      turn.outcomes.set(outcome.toolCallId, outcome);
      const skillSession = turn.skillSession;
      if (name === 'activate_skills' && outcome.envelope.ok && skillSession) {
        // Mid-turn activation appends guidance to the result; the cached prefix is not rebuilt.
        const data = outcome.envelope.data as Record<string, unknown>;
        emit({ type: 'skill-activated', skillIds: skillSession.activeIds(), via: 'model', shed: (data.shed as string[] | undefined) ?? [] });
        const guidance = skillSession.promptBlock();
        return { ...outcome.envelope, data: { ...data, guidance, note: 'Guidance loaded. Tools of newly active skills are reachable through tool_invoke this turn and listed directly from the next turn.' } };
      }
      return undefined;
    },
  });
  return {
    instructions: toInstructions(prompt.blocks),
    messages: withHistoryBreakpoint(mergeConsecutiveUserMessages(forModel)),
    tools: aiTools as ToolSet,
  };
}

/** Put the fourth cache breakpoint on the last history message, so the conversation so far is read from cache. */
function withHistoryBreakpoint(history: readonly ModelMessage[]): ModelMessage[] {
  if (history.length === 0) return [];
  const out = [...history];
  const i = out.length - 1;
  out[i] = { ...out[i]!, providerOptions: { ...out[i]!.providerOptions, anthropic: { cacheControl: { type: 'ephemeral' } } } } as ModelMessage;
  return out;
}
