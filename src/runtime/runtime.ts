import { MinaraError } from '../errors/minara-error';
import type { MemoryStore } from '../memory/types';
import { createTenantWorkspace } from '../workspace/tenant';
import type { Workspace } from '../workspace/workspace';
import { createSkillMetaTools } from '../skills/meta-tools';
import type { SkillSession } from '../skills/session';
import { parseSignalContext } from '../skills/signals';
import { createToolCallContext } from '../tools/context';
import { generateId as defaultGenerateId } from '../util/ids';
import { createConsoleLogger, type Logger } from '../util/logger';
import { createEventQueue } from './event-queue';
import type { AgentEvent } from './events';
import { renderSystemPrompt, type PromptBlock } from './prompt-blocks';
import { guardToolInputs } from './tool-input-guard';
import { assertSessionOwner, executeTurn, prepareTurn, type TurnDeps } from './turn';
import type { AgentRuntimeOptions, GenerateResult, ResolvedRuntimeOptions, RunInput, TurnScope } from './types';
import { runWorkflow, type WorkflowDefinition, type WorkflowResult, type WorkflowRunOptions } from './workflows';

/** The agent runtime: one turn pipeline behind one event stream. */
export interface AgentRuntime {
  /**
   * Run a turn and stream its events. The turn runs to completion and is persisted even if the consumer
   * stops reading (a disconnected client); pass `abortSignal` to cancel it.
   */
  run(input: RunInput): AsyncIterable<AgentEvent>;
  /** Run a turn and collect it. */
  generate(input: RunInput): Promise<GenerateResult>;
  /** Run a deterministic workflow: `tool_call` steps through the registry, `agent_turn` steps as turns. */
  runWorkflow(definition: WorkflowDefinition, options?: WorkflowRunOptions): Promise<WorkflowResult>;
  /** The system prompt blocks the next turn of a session would send (no model call, nothing persisted but the frozen snapshot). */
  buildSystemPromptBlocks(input: { sessionId: string; message?: string; source?: RunInput['source']; userId?: string }): Promise<{ blocks: PromptBlock[]; toolNames: string[] }>;
  /** The same as one plain string (for `--dump-prompt` and `/prompt`). */
  buildSystemPrompt(input: { sessionId: string; message?: string; source?: RunInput['source']; userId?: string }): Promise<string>;
  /**
   * Keep the runtime open until `work` settles: what a host does after a turn (the gateway's webhook bookkeeping)
   * that must reach storage before {@link AgentRuntime.close} lets the app close it. A rejection is logged, never thrown.
   */
  keepOpenUntil(work: Promise<unknown>): void;
  /**
   * Stop taking turns (`run` then throws `RUNTIME_CLOSED`), wait up to `timeoutMs` for the running turns and the
   * work kept open with `keepOpenUntil`, abort the turns still running, and wait for them to settle. `app.close()`
   * calls it before closing storage, so nothing in flight writes to a closed storage.
   * @returns how many turns were running, and how many of them were aborted
   */
  close(options?: { readonly timeoutMs?: number | undefined }): Promise<{ readonly running: number; readonly aborted: number }>;
  readonly options: ResolvedRuntimeOptions;
}

/** How long `close` waits for running turns before aborting them. */
export const DEFAULT_RUNTIME_CLOSE_TIMEOUT_MS = 10_000;

const SESSION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Create the agent runtime: thin wiring around the turn pipeline (pre-turn, compaction, `streamText` with
 * the registry's tools, approvals, end-of-turn fan-out).
 *
 * @example
 * ```ts
 * const runtime = createAgentRuntime({ model, tools, skills, memory, workspace, storage });
 * for await (const event of runtime.run({ sessionId: 's1', message: 'price of BTC?' })) {
 *   if (event.type === 'text-delta') process.stdout.write(event.delta);
 *   if (event.type === 'approval-request') pending.push(event.approvalId);
 * }
 * // later, in this process or another:
 * await runtime.generate({ sessionId: 's1', approvals: [{ approvalId, approved: true }] });
 * ```
 */
export function createAgentRuntime(rawOptions: AgentRuntimeOptions): AgentRuntime {
  const options = resolveRuntimeOptions(rawOptions);
  const maxSteps = options.maxSteps ?? 12;
  if (!Number.isInteger(maxSteps) || maxSteps < 1 || maxSteps > 100) throw new MinaraError('CONFIG_INVALID', 'createAgentRuntime: "maxSteps" must be an integer from 1 to 100.');
  const turnTokenBudget = options.turnTokenBudget ?? 400_000;
  if (!(turnTokenBudget > 0)) throw new MinaraError('CONFIG_INVALID', 'createAgentRuntime: "turnTokenBudget" must be a positive number.');

  const liveSkillSessions = new Map<string, SkillSession>();
  if (options.skills) {
    // The meta-tools find the turn's skill session by the call context's session id.
    const meta = createSkillMetaTools({ skills: options.skills, tools: options.tools, resolveSession: (ctx) => liveSkillSessions.get(ctx.call.sessionId) });
    for (const t of meta.all) if (!options.tools.has(t.name)) options.tools.register(t);
  }
  const memoryFor = (scope: TurnScope): MemoryStore | undefined =>
    typeof options.memory === 'function' ? options.memory(scope) : options.memory;
  const defaultUserId = options.defaultUserId ?? 'default';
  const logger = options.logger ?? createConsoleLogger({ level: 'warn' });
  const workspaceFor = createWorkspaceResolver(options, defaultUserId, logger);
  const deps: TurnDeps = {
    options,
    workspaceFor,
    model: guardToolInputs(options.model),
    now: options.now ?? (() => new Date()),
    generateId: options.generateId ?? defaultGenerateId,
    maxSteps,
    turnTokenBudget,
    cronAllowedToolSets: options.cronAllowedToolSets ?? ['read', 'memory', 'web'],
    defaultUserId,
    memoryFor,
    liveSkillSessions,
    logger,
  };
  // One turn at a time per session in this process; different sessions run concurrently.
  const sessionTails = new Map<string, Promise<void>>();
  // What close() waits for: the running turns (each abortable) and the work hosts keep open after them.
  const turns = new Set<{ readonly done: Promise<void>; readonly abort: AbortController }>();
  const kept = new Set<Promise<unknown>>();
  let closed = false;

  function run(raw: RunInput): AsyncIterable<AgentEvent> {
    if (closed) throw new MinaraError('RUNTIME_CLOSED', 'run: the runtime is closed (app.close() was called); no new turns start.');
    const validated = validateRunInput(raw, options, defaultUserId);
    // Every turn can be aborted by close(), besides the caller's own signal.
    const abort = new AbortController();
    const input = { ...validated, abortSignal: validated.abortSignal ? AbortSignal.any([validated.abortSignal, abort.signal]) : abort.signal };
    const queue = createEventQueue<AgentEvent>();
    const turnId = deps.generateId('turn');
    const previous = sessionTails.get(input.sessionId) ?? Promise.resolve();
    const task = previous
      .then(() => executeTurn(deps, input, turnId, (e) => queue.push(e)))
      .then(() => queue.close(), (error: unknown) => queue.fail(error));
    const tail = task.then(() => undefined, () => undefined);
    const entry = { done: tail, abort };
    turns.add(entry);
    void tail.then(() => turns.delete(entry));
    sessionTails.set(input.sessionId, tail);
    void tail.then(() => {
      if (sessionTails.get(input.sessionId) === tail) sessionTails.delete(input.sessionId);
    });
    return queue;
  }

  async function generate(input: RunInput): Promise<GenerateResult> {
    const events: AgentEvent[] = [];
    for await (const e of run(input)) events.push(e);
    const end = events.findLast((e): e is Extract<AgentEvent, { type: 'turn-end' }> => e.type === 'turn-end');
    if (!end) throw new MinaraError('INTERNAL', 'generate: the turn ended without a turn-end event.');
    return { text: end.text, stopReason: end.stopReason, usage: end.usage, steps: end.steps, pendingApprovals: end.pendingApprovals, events, turnId: end.turnId };
  }

  async function buildBlocks(input: { sessionId: string; message?: string; source?: RunInput['source']; userId?: string }) {
    const probe = validateRunInput({ sessionId: input.sessionId, message: input.message ?? '', ...(input.source ? { source: input.source } : {}), ...(input.userId ? { userId: input.userId } : {}) }, options, defaultUserId);
    const sessionExists = await assertSessionOwner(options.storage, probe.sessionId, probe.userId ?? deps.defaultUserId);
    const ctx = createToolCallContext({ sessionId: probe.sessionId, source: probe.source ?? 'user', userId: probe.userId ?? deps.defaultUserId });
    const { prompt } = await prepareTurn(deps, probe, ctx, () => {}, sessionExists);
    return { blocks: prompt.blocks, toolNames: prompt.toolNames };
  }

  return {
    run,
    generate,
    runWorkflow: (definition, runOptions) => runWorkflow(
      { runtime: { generate }, tools: options.tools, now: deps.now, generateId: deps.generateId, defaultUserId: deps.defaultUserId, learning: options.learning, logger: deps.logger },
      definition, runOptions,
    ),
    buildSystemPromptBlocks: buildBlocks,
    buildSystemPrompt: async (input) => renderSystemPrompt((await buildBlocks(input)).blocks),
    keepOpenUntil(work) {
      const settled = Promise.resolve(work).then(
        () => undefined,
        (error: unknown) => logger.warn('work kept open after a turn failed', { error: error instanceof Error ? error.message : String(error) }),
      );
      kept.add(settled);
      void settled.then(() => kept.delete(settled));
    },
    async close(closeOptions = {}) {
      closed = true;
      const timeoutMs = closeOptions.timeoutMs ?? DEFAULT_RUNTIME_CLOSE_TIMEOUT_MS;
      if (!(Number.isFinite(timeoutMs) && timeoutMs >= 0)) throw new MinaraError('INVALID_ARGUMENT', `close: "timeoutMs" must be a number of ms ≥ 0, got ${String(timeoutMs)}.`);
      const running = turns.size;
      const settle = async () => {
        // Turns first, then the work hosts kept open after them (which a finishing turn may still add).
        while (turns.size > 0 || kept.size > 0) await Promise.all([...[...turns].map((t) => t.done), ...kept]);
      };
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([settle().then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs)))]);
      clearTimeout(timer);
      let aborted = 0;
      if (timedOut) {
        aborted = turns.size;
        if (aborted > 0) logger.warn('closing: aborting turns still running', { turns: aborted, timeoutMs });
        for (const t of turns) t.abort.abort(new MinaraError('RUNTIME_CLOSED', 'the runtime is closing'));
        // An aborted turn ends at its next step; bounded again so a stuck tool cannot hold close forever.
        await Promise.race([settle(), new Promise((r) => setTimeout(r, Math.max(timeoutMs, 1000)).unref())]);
      }
      return { running, aborted };
    },
    options,
  };
}

/** The options with `storage` resolved (the registry's when none is given), checked: one storage for the whole agent. */
function resolveRuntimeOptions(rawOptions: AgentRuntimeOptions): ResolvedRuntimeOptions {
  if (!rawOptions || typeof rawOptions !== 'object') throw new MinaraError('CONFIG_INVALID', 'createAgentRuntime: options are required.');
  if (!rawOptions.model) throw new MinaraError('MODEL_NOT_CONFIGURED', 'createAgentRuntime: "model" is required (any AI SDK LanguageModel).');
  if (!rawOptions.tools || typeof rawOptions.tools.dispatch !== 'function') throw new MinaraError('CONFIG_INVALID', 'createAgentRuntime: "tools" must be a ToolRegistry (createToolRegistry).');
  // One storage for the whole agent: the registry's approvals, grants and emergency stop must live where the
  // runtime keeps its sessions, or approvals die with the process and a stop set through one is missed by the other.
  const options: ResolvedRuntimeOptions = { ...rawOptions, storage: (rawOptions.storage ?? rawOptions.tools.storage)! };
  if (!options.storage || typeof options.storage.conversations?.appendMessages !== 'function') throw new MinaraError('CONFIG_INVALID', 'createAgentRuntime: "storage" must be a Storage (createSqliteStorage or createInMemoryStorage).');
  if (options.tools.storage !== undefined && options.tools.storage !== options.storage) {
    throw new MinaraError(
      'CONFIG_INVALID',
      'createAgentRuntime: "tools" keeps approvals, grants and the emergency stop in a different storage than "storage"; build the registry with createToolRegistry({ storage }) on the same storage (or omit "storage" here to use the registry\'s).',
    );
  }
  const auditRows = options.sideEffectFreeAuditRows;
  if (auditRows !== undefined && auditRows !== 'with-turn' && auditRows !== 'per-call') {
    throw new MinaraError('CONFIG_INVALID', `createAgentRuntime: "sideEffectFreeAuditRows" must be 'with-turn' or 'per-call' (got ${JSON.stringify(auditRows)}).`);
  }
  return options;
}

/** Check one turn's input against the runtime's options; the signal, when given, parsed. */
function validateRunInput(input: RunInput, options: ResolvedRuntimeOptions, defaultUserId: string): RunInput {
  if (!input || typeof input !== 'object') throw new MinaraError('INVALID_ARGUMENT', 'run: input must be an object.');
  if (typeof input.sessionId !== 'string' || !SESSION_ID.test(input.sessionId)) {
    throw new MinaraError('INVALID_ARGUMENT', 'run: "sessionId" must be 1–128 characters of letters, digits, ".", "_", ":" or "-".');
  }
  if (input.message !== undefined && typeof input.message !== 'string') throw new MinaraError('INVALID_ARGUMENT', 'run: "message" must be a string.');
  if (input.message !== undefined && input.message.length > 200_000) throw new MinaraError('INVALID_ARGUMENT', 'run: "message" is longer than 200,000 characters.');
  if (input.attachments !== undefined) {
    if (!Array.isArray(input.attachments) || input.attachments.some((k) => typeof k !== 'string' || k === '')) throw new MinaraError('INVALID_ARGUMENT', 'run: "attachments" must be an array of file keys.');
    if (input.attachments.length > 0 && input.message === undefined) throw new MinaraError('INVALID_ARGUMENT', 'run: "attachments" need a "message" (it may be "").');
    if (input.attachments.length > 0 && !options.messageTranslator) throw new MinaraError('INVALID_ARGUMENT', 'run: "attachments" need the runtime\'s "messageTranslator" (createMessageTranslator).');
  }
  if (input.userId !== undefined && input.userId !== defaultUserId && typeof options.workspace === 'object' && options.sharedWorkspace !== true) {
    throw new MinaraError(
      'CONFIG_INVALID',
      `run: this runtime's "workspace" is one Workspace for its default user "${defaultUserId}", and this turn is for "${input.userId}": its heartbeat and journal (session and approval ids) would reach every user's prompt. Give "workspace" as a function of the turn's scope (createTenantWorkspace per user), or set "sharedWorkspace: true" to give each other user a tenant view over it.`,
    );
  }
  if (input.message === undefined && (input.approvals?.length ?? 0) === 0) {
    throw new MinaraError('INVALID_ARGUMENT', 'run: give a "message", "approvals", or both.');
  }
  for (const [i, a] of (input.approvals ?? []).entries()) {
    if (typeof a?.approvalId !== 'string' || typeof a.approved !== 'boolean') {
      throw new MinaraError('INVALID_ARGUMENT', `run: approvals[${i}] needs "approvalId" (string) and "approved" (boolean).`);
    }
  }
  for (const field of ['maxSteps', 'turnTokenBudget'] as const) {
    const v = input[field];
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 1)) throw new MinaraError('INVALID_ARGUMENT', `run: "${field}" must be a positive integer, got ${String(v)}.`);
  }
  if (input.modelCall !== undefined && input.modelCall !== 'stream' && input.modelCall !== 'generate') {
    throw new MinaraError('INVALID_ARGUMENT', `run: "modelCall" must be "stream" or "generate", got ${JSON.stringify(input.modelCall)}.`);
  }
  const source = input.source ?? 'user';
  if (!['user', 'cron', 'webhook', 'workflow', 'subagent', 'heartbeat'].includes(source)) {
    throw new MinaraError('INVALID_ARGUMENT', `run: "source" must be user, cron, webhook, workflow, subagent or heartbeat; got ${JSON.stringify(source)}.`);
  }
  return input.signal ? { ...input, signal: parseSignalContext(input.signal) } : input;
}

/**
 * The workspace of a turn's scope. One Workspace object serves its default user as is; any other user (only with
 * `sharedWorkspace: true`, see `validateRunInput`) gets a tenant view over it: the operator's identity files, the
 * user's own heartbeat and journal.
 */
function createWorkspaceResolver(options: ResolvedRuntimeOptions, defaultUserId: string, logger: Logger): (scope: TurnScope) => Workspace | undefined {
  const tenantViews = new Map<string, Workspace>();
  return (scope) => {
    if (typeof options.workspace === 'function') return options.workspace(scope);
    const shared = options.workspace;
    if (shared === undefined || scope.userId === defaultUserId) return shared;
    let view = tenantViews.get(scope.userId);
    if (!view) {
      view = createTenantWorkspace({ operator: shared, userId: scope.userId, heartbeat: shared.settings.heartbeat, dailyLog: shared.settings.dailyLog, logger, ...(options.now ? { now: options.now } : {}) });
      tenantViews.set(scope.userId, view);
    }
    return view;
  };
}
