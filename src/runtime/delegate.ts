import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolRegistry } from '../tools/types';
import { type AgentEvent, TURN_EMIT_KEY } from './events';
import type { AgentRuntime } from './runtime';

/** Options of {@link createDelegateTool}. */
export interface DelegateToolOptions {
  /** The runtime that runs the child turn (the app's). */
  readonly runtime: AgentRuntime;
  /** The registry, to check requested tool sets against the ones that exist. */
  readonly tools: ToolRegistry;
  /** Tool sets a child may ever get (intersected with the parent's and the request). @default ['read', 'memory', 'analysis', 'web'] */
  readonly allowedToolSets?: readonly string[] | undefined;
  /** A child's model steps. @default 6 */
  readonly maxSteps?: number | undefined;
  /** A child's token budget. @default 100000 */
  readonly turnTokenBudget?: number | undefined;
}

const input = z.object({
  task: z.string().min(1).max(8_000).describe('What the sub-agent should do and what to report back.'),
  toolSets: z.array(z.string().min(1).max(40)).min(1).max(8).describe('Tool sets the sub-agent may use (a subset of yours).'),
});

/**
 * The `delegate` tool: run a sub-agent turn (`source: 'subagent'`) on a narrower tool set with its own, smaller
 * budget, and return its answer. The child cannot widen anything: its tool sets are the intersection of what it
 * asks for, `allowedToolSets` and the parent turn's; each of its calls is dispatched inside the parent call's
 * context, which the registry only narrows (an autonomous parent stays autonomous, the lower risk ceiling wins);
 * it cannot answer approvals (a call that needs one comes back to the child as `APPROVAL_REQUIRED`, and it says
 * so). Its token usage is returned with its answer so the parent accounts for it.
 */
export function createDelegateTool(options: DelegateToolOptions): ToolEntry {
  const { runtime, tools, allowedToolSets = ['read', 'memory', 'analysis', 'web'], maxSteps = 6, turnTokenBudget = 100_000 } = options;
  let children = 0;
  return defineTool({
    name: 'delegate',
    toolSet: 'agents',
    description: 'Hand a self-contained sub-task (research, analysis, a lookup across several tools) to a sub-agent with fewer tools and a small budget; get its answer back. It cannot trade, transfer or ask the user for approval.',
    inputSchema: input,
    permissionTier: PermissionTier.READ_ONLY,
    timeoutMs: 5 * 60_000,
    execute: async ({ task, toolSets }, ctx) => {
      const known = tools.expandToolSets(tools.toolSets().map((s) => s.name));
      const unknown = toolSets.filter((s) => !known.has(s));
      if (unknown.length > 0) throw new MinaraError('INVALID_ARGUMENT', `toolSets: unknown tool set(s) ${unknown.join(', ')}`);
      const mine = tools.expandToolSets(allowedToolSets);
      const parents = ctx.call.allowedToolSets ? tools.expandToolSets(ctx.call.allowedToolSets) : undefined;
      const granted = [...tools.expandToolSets(toolSets)].filter((s) => mine.has(s) && (parents === undefined || parents.has(s)) && s !== 'agents').sort();
      if (granted.length === 0) {
        throw new MinaraError('TOOL_BLOCKED', `toolSets: none of ${toolSets.join(', ')} may be delegated here (a sub-agent gets at most ${[...mine].sort().join(', ')}, within this turn's own sets).`);
      }
      children += 1;
      const sessionId = `${ctx.call.sessionId}:sub${children}`.slice(-128);
      // The child's events go into the parent turn's stream as they happen (nested under this call).
      const forward = ctx.call.state.get(TURN_EMIT_KEY) as ((e: AgentEvent) => void) | undefined;
      const toolsUsed: string[] = [];
      let end: Extract<AgentEvent, { type: 'turn-end' }> | undefined;
      let failure: string | undefined;
      for await (const event of runtime.run({
        sessionId,
        message: task,
        source: 'subagent',
        allowedToolSets: granted,
        maxSteps,
        turnTokenBudget,
        surface: 'subagent',
        ...(ctx.call.userId ? { userId: ctx.call.userId } : {}),
        ...(ctx.call.agentId ? { agentId: ctx.call.agentId } : {}),
        abortSignal: ctx.signal,
      })) {
        if (event.type === 'tool-call') toolsUsed.push(event.toolName);
        if (event.type === 'turn-end') end = event;
        if (event.type === 'error') failure = `${event.code}: ${event.message}`;
        forward?.({ type: 'subagent', toolCallId: ctx.toolCallId, sessionId, event });
      }
      return {
        answer: end?.text ?? '',
        stopReason: end?.stopReason ?? 'error',
        ...(failure ? { error: failure } : {}),
        toolSets: granted,
        toolsUsed,
        usage: end?.usage ?? { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
        sessionId,
      };
    },
  });
}
