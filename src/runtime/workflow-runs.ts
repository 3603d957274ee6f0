/**
 * Stored workflow runs: a run is claimed in storage by (workflow, trigger key) before anything runs, so a trigger
 * seen by several processes (a schedule slot, a webhook's idempotency key) runs once across the fleet; each step's
 * input (secrets redacted) and output are recorded as the step ends, and the run's status, error and duration when
 * it ends.
 */
import { MinaraError } from '../errors/minara-error';
import { redactValue } from '../safety/secret-patterns';
import type { WorkflowRunRecord, WorkflowRunStep, WorkflowTrigger } from '../storage/automation-types';
import type { Storage } from '../storage/types';
import type { WorkflowDefinition, WorkflowResult, WorkflowRunOptions, WorkflowStepResult } from './workflows';

/** A step output larger than this (as JSON) is stored cut, with `truncated: true`. */
const MAX_OUTPUT_CHARS = 16_000;

/** What {@link startStoredWorkflow} needs. */
export interface StoredWorkflowOptions {
  readonly runtime: { runWorkflow(definition: WorkflowDefinition, options?: WorkflowRunOptions): Promise<WorkflowResult> };
  readonly storage: Pick<Storage, 'workflows'>;
  readonly definition: WorkflowDefinition;
  readonly trigger: WorkflowTrigger;
  /** Unique per workflow: the slot, the idempotency key, a fresh id. */
  readonly triggerKey: string;
  readonly userId: string;
  /** This process (`<host>:<pid>:<random>`). */
  readonly owner: string;
  /** How long the run may take; past it the run is aborted (and counts as interrupted if its process died). @default 600000 */
  readonly leaseMs?: number | undefined;
  readonly signal?: AbortSignal | undefined;
  readonly now: () => Date;
  readonly generateId: (prefix: string) => string;
}

/** A claimed run: the record as claimed (`running`) and the promise of the record as it ends. */
export interface StartedWorkflowRun {
  readonly run: WorkflowRunRecord;
  /** The ended run (`ok` or `failed`); never rejects. */
  readonly done: Promise<WorkflowRunRecord>;
}

/** A step as stored: input redacted, output cut when large, the failure's code and message. */
export function toStoredStep(step: WorkflowStepResult): WorkflowRunStep {
  const envelope = step.envelope as { ok: boolean; code?: string; error?: string } | undefined;
  let output: unknown = step.kind === 'agent_turn' ? (step.text === undefined ? undefined : { text: step.text, stopReason: step.decision }) : step.envelope;
  if (output !== undefined) {
    const json = JSON.stringify(redactValue(output));
    output = json.length > MAX_OUTPUT_CHARS ? { truncated: true, json: json.slice(0, MAX_OUTPUT_CHARS) } : JSON.parse(json);
  }
  return {
    id: step.id,
    kind: step.kind,
    ...(step.tool !== undefined ? { tool: step.tool } : {}),
    input: step.input === undefined ? null : redactValue(step.input),
    ...(output !== undefined ? { output } : {}),
    ok: step.ok,
    ...(step.decision !== undefined ? { decision: step.decision } : {}),
    ...(envelope && !envelope.ok && envelope.code ? { code: envelope.code } : {}),
    ...(step.error !== undefined ? { error: step.error } : envelope && !envelope.ok && envelope.error ? { error: envelope.error } : {}),
    startedAt: step.startedAt ?? new Date(0).toISOString(),
    durationMs: Math.round(step.durationMs * 1000) / 1000,
  };
}

/** The run's error: the first failed step, by id, code and message. */
function runError(steps: readonly WorkflowRunStep[]): string | undefined {
  const i = steps.findIndex((s) => !s.ok);
  if (i < 0) return undefined;
  const s = steps[i]!;
  return `steps[${i}] "${s.id}": ${s.code ? `${s.code}: ` : ''}${s.error ?? (s.kind === 'agent_turn' ? `the turn ended with ${s.decision ?? 'an error'}` : 'failed')}`.slice(0, 500);
}

/**
 * Claim a run of `definition` for `triggerKey` and start it: `undefined` when that trigger already has a run (another
 * process took it, or it ran before), else the claimed record and the promise of the ended one. Steps run through
 * `runtime.runWorkflow` (the registry's gate, source `workflow` unless the definition says otherwise).
 */
export async function startStoredWorkflow(options: StoredWorkflowOptions): Promise<StartedWorkflowRun | undefined> {
  const { runtime, storage, definition, trigger, triggerKey, userId, owner, leaseMs = 10 * 60_000, now, generateId } = options;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1_000) throw new MinaraError('CONFIG_INVALID', `startStoredWorkflow: leaseMs must be at least 1000, got ${String(leaseMs)}`);
  const started = now();
  const claimed = await storage.workflows.claimRun({
    id: generateId('wfr'),
    workflowId: definition.id,
    userId,
    trigger,
    triggerKey,
    owner,
    traceId: generateId('trc'),
    startedAt: started.toISOString(),
    leaseUntil: new Date(started.getTime() + leaseMs).toISOString(),
  });
  if (!claimed) return undefined;
  const t0 = performance.now();
  const steps: WorkflowRunStep[] = [];
  const abort = AbortSignal.any([AbortSignal.timeout(leaseMs), ...(options.signal ? [options.signal] : [])]);
  const done = (async (): Promise<WorkflowRunRecord> => {
    let result: WorkflowResult | undefined;
    let failure: string | undefined;
    try {
      result = await runtime.runWorkflow({ ...definition, userId, abortSignal: abort }, {
        traceId: claimed.traceId,
        onStepEnd: async (step) => {
          steps.push(toStoredStep(step));
          await storage.workflows.saveSteps(claimed.id, owner, steps);
        },
      });
    } catch (error) {
      failure = error instanceof Error ? error.message : String(error);
    }
    const skipped = result ? [...result.skipped] : [];
    const ok = result !== undefined && result.ok;
    const error = failure ?? runError(steps) ?? (skipped.length > 0 ? `aborted before ${skipped.join(', ')}` : undefined);
    try {
      return await storage.workflows.finishRun(claimed.id, owner, {
        status: ok ? 'ok' : 'failed',
        endedAt: now().toISOString(),
        durationMs: Math.round((performance.now() - t0) * 1000) / 1000,
        ...(error !== undefined && !ok ? { error } : {}),
        steps,
        skipped,
      });
    } catch {
      // Another process marked it interrupted meanwhile (this one outlived its lease): report what storage holds.
      return (await storage.workflows.getRun(claimed.id)) ?? { ...claimed, status: 'interrupted', steps, skipped };
    }
  })();
  return { run: claimed, done };
}
