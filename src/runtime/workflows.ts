import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import type { CallSource } from '../safety/permission-tier';
import type { ToolEnvelope } from '../tools/envelope';
import { createToolCallContext, executedCalls } from '../tools/context';
import type { ToolRegistry } from '../tools/types';
import type { Logger } from '../util/logger';
import { ZERO_USAGE } from './events';
import { toTurnExecution } from './executions';
import type { GenerateResult, RunInput, TurnLearning } from './types';

/** What earlier steps produced, by step id, for steps whose args or message depend on them. */
export type WorkflowResults = Readonly<Record<string, WorkflowStepResult>>;

/** A deterministic tool step: runs the exact registry handler (same tiers, same audit), no model call. */
export interface ToolCallStep {
  readonly id: string;
  readonly kind: 'tool_call';
  readonly tool: string;
  readonly args?: unknown | ((results: WorkflowResults) => unknown);
  /** An approved approval for this exact call, when the tool needs one. */
  readonly approvalId?: string | undefined;
}

/** A model turn inside the workflow. */
export interface AgentTurnStep {
  readonly id: string;
  readonly kind: 'agent_turn';
  readonly message: string | ((results: WorkflowResults) => string);
}

/** One workflow step. */
export type WorkflowStep = ToolCallStep | AgentTurnStep;

/** A workflow: a named list of steps run in order. */
export interface WorkflowDefinition {
  readonly id: string;
  readonly steps: readonly WorkflowStep[];
  /** @default 'workflow' */
  readonly source?: CallSource | undefined;
  /** Session for audit rows and agent turns. @default `workflow-<id>` */
  readonly sessionId?: string | undefined;
  /** The tenant the steps act for (the call context's user, the turns' user). @default the runtime's default user */
  readonly userId?: string | undefined;
  readonly allowedToolSets?: readonly string[] | undefined;
  /** Stop at the first step that does not return ok. @default true */
  readonly stopOnError?: boolean | undefined;
  readonly abortSignal?: AbortSignal | undefined;
}

/** What one step did. */
export interface WorkflowStepResult {
  readonly id: string;
  readonly kind: 'tool_call' | 'agent_turn';
  /** The tool of a `tool_call` step. */
  readonly tool?: string | undefined;
  /** The resolved input: the tool arguments, or the turn's message (undefined when they could not be resolved). */
  readonly input?: unknown;
  readonly ok: boolean;
  readonly envelope?: ToolEnvelope | undefined;
  readonly decision?: string | undefined;
  readonly text?: string | undefined;
  /** Why a step failed before or outside its tool (arguments that did not resolve, a turn that threw). */
  readonly error?: string | undefined;
  /** ISO time the step started. */
  readonly startedAt?: string | undefined;
  readonly durationMs: number;
}

/** Per-run options of {@link runWorkflow} (`runtime.runWorkflow(definition, options)`). */
export interface WorkflowRunOptions {
  /** The trace id of the run's call context (every step's audit row carries it). @default a new one */
  readonly traceId?: string | undefined;
  /** Called after each step, in order (a stored run records its steps as they end). */
  readonly onStepEnd?: ((step: WorkflowStepResult, index: number) => void | Promise<void>) | undefined;
}

/** What a workflow run did. */
export interface WorkflowResult {
  readonly id: string;
  readonly traceId: string;
  readonly ok: boolean;
  readonly steps: readonly WorkflowStepResult[];
  /** Steps not run because an earlier one failed. */
  readonly skipped: readonly string[];
}

const stepSchema = z.discriminatedUnion('kind', [
  z.object({
    id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected 1–64 letters, digits, ".", "_" or "-"'),
    kind: z.literal('tool_call'),
    tool: z.string().min(1, 'expected a tool name'),
    args: z.unknown().optional(),
    approvalId: z.string().optional(),
  }),
  z.object({
    id: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'expected 1–64 letters, digits, ".", "_" or "-"'),
    kind: z.literal('agent_turn'),
    message: z.union([z.string().min(1, 'expected a non-empty message'), z.custom<(r: WorkflowResults) => string>((v) => typeof v === 'function')]),
  }),
]);

/**
 * Check a workflow definition; the error names the bad step (`steps[2] "fetch": tool: …`).
 * Tool names are checked against the registry.
 */
export function validateWorkflow(definition: WorkflowDefinition, tools?: ToolRegistry): void {
  if (!definition || typeof definition !== 'object') throw new MinaraError('WORKFLOW_INVALID', 'Workflow definition must be an object.');
  if (typeof definition.id !== 'string' || definition.id.trim() === '') throw new MinaraError('WORKFLOW_INVALID', 'Workflow "id" must be a non-empty string.');
  if (!Array.isArray(definition.steps) || definition.steps.length === 0) throw new MinaraError('WORKFLOW_INVALID', `Workflow "${definition.id}": "steps" must be a non-empty array.`);
  const seen = new Set<string>();
  definition.steps.forEach((step, i) => {
    const label = `Workflow "${definition.id}" steps[${i}]${typeof (step as { id?: unknown })?.id === 'string' ? ` "${(step as { id: string }).id}"` : ''}`;
    const r = stepSchema.safeParse(step);
    if (!r.success) {
      const detail = r.error.issues.map((iss) => `${iss.path.join('.') || '(step)'}: ${iss.message}`).join('; ');
      throw new MinaraError('WORKFLOW_INVALID', `${label}: ${detail}`);
    }
    if (seen.has(step.id)) throw new MinaraError('WORKFLOW_INVALID', `${label}: duplicate step id.`);
    seen.add(step.id);
    if (step.kind === 'tool_call' && tools && !tools.has(step.tool)) throw new MinaraError('WORKFLOW_INVALID', `${label}: no registered tool named "${step.tool}".`);
  });
}

/**
 * Run a workflow (used by `runtime.runWorkflow`). Its tool steps' fund-moving executions reach the learning loop
 * like a turn's (`learning.captureTurn`, role `workflow:<id>`): trades recorded, closes attributed, cases created.
 * Its `agent_turn` steps are turns and are captured as such.
 */
export async function runWorkflow(
  deps: {
    runtime: { generate(input: RunInput): Promise<GenerateResult> }; tools: ToolRegistry; now: () => Date; generateId: (p: string) => string; defaultUserId?: string | undefined;
    learning?: TurnLearning | undefined; logger?: Pick<Logger, 'error'> | undefined;
  },
  definition: WorkflowDefinition,
  options: WorkflowRunOptions = {},
): Promise<WorkflowResult> {
  validateWorkflow(definition, deps.tools);
  const source = definition.source ?? 'workflow';
  const sessionId = definition.sessionId ?? `workflow-${definition.id}`;
  const userId = definition.userId ?? deps.defaultUserId;
  const ctx = createToolCallContext({
    sessionId, source, traceId: options.traceId ?? deps.generateId('trc'),
    ...(userId !== undefined ? { userId } : {}),
    ...(definition.allowedToolSets ? { allowedToolSets: definition.allowedToolSets } : {}),
  });
  const results: Record<string, WorkflowStepResult> = {};
  const steps: WorkflowStepResult[] = [];
  const skipped: string[] = [];
  let failed = false;
  for (const step of definition.steps) {
    if ((failed && (definition.stopOnError ?? true)) || definition.abortSignal?.aborted) {
      skipped.push(step.id);
      continue;
    }
    const t0 = performance.now();
    const startedAt = deps.now().toISOString();
    const failedBefore = (input: unknown, error: unknown): WorkflowStepResult => ({
      id: step.id, kind: step.kind, ...(step.kind === 'tool_call' ? { tool: step.tool } : {}), input, ok: false,
      error: error instanceof Error ? error.message : String(error), startedAt, durationMs: performance.now() - t0,
    });
    let result: WorkflowStepResult;
    if (step.kind === 'tool_call') {
      let args: unknown;
      let unresolved: string | undefined;
      try {
        args = (typeof step.args === 'function' ? (step.args as (r: WorkflowResults) => unknown)(results) : step.args) ?? {};
      } catch (error) {
        unresolved = `args: ${error instanceof Error ? error.message : String(error)}`;
      }
      if (unresolved !== undefined) result = failedBefore(undefined, unresolved);
      else {
        const outcome = await deps.tools.dispatchDetailed(step.tool, args, {
          context: ctx,
          toolCallId: `${definition.id}:${step.id}`,
          ...(step.approvalId ? { approvalId: step.approvalId } : {}),
          ...(definition.abortSignal ? { signal: definition.abortSignal } : {}),
        });
        result = { id: step.id, kind: 'tool_call', tool: step.tool, input: args, ok: outcome.envelope.ok, envelope: outcome.envelope, decision: outcome.decision, startedAt, durationMs: performance.now() - t0 };
      }
    } else {
      let message: string | undefined;
      try {
        message = typeof step.message === 'function' ? step.message(results) : step.message;
        const turn = await deps.runtime.generate({
          sessionId, message, source,
          ...(userId !== undefined ? { userId } : {}),
          ...(definition.allowedToolSets ? { allowedToolSets: definition.allowedToolSets } : {}),
          ...(definition.abortSignal ? { abortSignal: definition.abortSignal } : {}),
        });
        result = { id: step.id, kind: 'agent_turn', input: message, ok: turn.stopReason === 'finished', text: turn.text, decision: turn.stopReason, startedAt, durationMs: performance.now() - t0 };
      } catch (error) {
        result = failedBefore(message, message === undefined ? `message: ${error instanceof Error ? error.message : String(error)}` : error);
      }
    }
    results[step.id] = result;
    steps.push(result);
    if (!result.ok) failed = true;
    await options.onStepEnd?.(result, steps.length - 1);
  }
  const ok = !failed && skipped.length === 0;
  const executed = executedCalls(ctx);
  if (deps.learning && executed.length > 0) {
    // The run's own trades (its tool steps) as a post-turn record with no model usage: decision capture is the same.
    const role = `workflow:${definition.id}`;
    try {
      await deps.learning.captureTurn({
        sessionId, turnId: `${definition.id}:${ctx.traceId}`, traceId: ctx.traceId, source, userId: userId ?? 'default', text: '', stopReason: ok ? 'finished' : 'error',
        steps: steps.length, usage: ZERO_USAGE, toolCalls: [], pendingApprovals: [], turnCount: 0,
        activeSkills: [], methodologyIds: [], preferenceIds: [], executions: executed.map((c) => toTurnExecution(c, role)),
      });
    } catch (error) {
      deps.logger?.error('learning: decision capture of a workflow run failed', { workflowId: definition.id, traceId: ctx.traceId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return { id: definition.id, traceId: ctx.traceId, ok, steps, skipped };
}
