import { inSpan } from '../util/tracing';
import { isStepCount, type ModelMessage, type StepResult, type ToolSet, streamText } from 'ai';
import { MinaraError } from '../errors/minara-error';
import type { MemoryStore } from '../memory/types';
import { scanInput } from '../safety/input-scanner';
import { isAutonomousSource } from '../safety/permission-tier';
import { applySignalPreload, renderSignalBlock } from '../skills/signals';
import { createSkillSession, type SkillSession } from '../skills/session';
import type { RoutedCatalogEntry } from '../skills/types';
import type { ToolEnvelope } from '../tools/envelope';
import { isClarification } from '../tools/session-tools';
import { toAISDKTools } from '../tools/ai-sdk';
import { createToolCallContext, executedCalls } from '../tools/context';
import type { DispatchOutcome, ToolCallContext } from '../tools/types';
import { createCallJournal, restoreJournaledCalls } from './call-journal';
import { compactMessages } from './compaction';
import { loadMessages, mergeConsecutiveUserMessages, repairOrphanedToolCalls, replaceToolResult, toNewMessages } from './conversation';
import { type AgentEvent, addUsage, type PendingApproval, TURN_EMIT_KEY, type TurnStopReason, type TurnUsage, ZERO_USAGE } from './events';
import { buildIdentityText } from './identity';
import { buildSystemPromptBlocks, type PromptBlock, toInstructions } from './prompt-blocks';
import { loadSessionState, saveSessionState, type SessionState } from './session-state';
import type { Workspace } from '../workspace/workspace';
import type { PostTurnRecord, ResolvedRuntimeOptions, RunInput, TurnLearningContext, TurnScope, TurnToolCall } from './types';
import { toTurnExecution } from './executions';

/** Everything a turn needs, resolved once by `createAgentRuntime`. */
export interface TurnDeps {
  readonly options: ResolvedRuntimeOptions;
  /** The workspace of a tenant (the one workspace, or `options.workspace(scope)`). */
  readonly workspaceFor: (scope: TurnScope) => Workspace | undefined;
  /** The model the turn calls: `options.model` behind the tool-input guard. */
  readonly model: ResolvedRuntimeOptions['model'];
  readonly now: () => Date;
  readonly generateId: (prefix: string) => string;
  readonly maxSteps: number;
  readonly turnTokenBudget: number;
  readonly cronAllowedToolSets: readonly string[];
  readonly defaultUserId: string;
  readonly memoryFor: (scope: TurnScope) => MemoryStore | undefined;
  /** Live skill sessions by session id, so `activate_skills` finds the turn's session. */
  readonly liveSkillSessions: Map<string, SkillSession>;
  readonly logger: { warn(m: string, f?: Record<string, unknown>): void; error(m: string, f?: Record<string, unknown>): void };
}

/** The prompt of a turn, exposed for `runtime.buildSystemPrompt` and `--dump-prompt`. */
export interface TurnPrompt {
  readonly blocks: PromptBlock[];
  readonly toolNames: string[];
}

const OVERFLOW = /context(?:[_ -]length| window)|too many tokens|prompt is too long|maximum context|input is too long|reduce the length/i;
/** Envelope codes that mean policy refused the call (as opposed to the tool failing). */
const BLOCK_CODES = new Set([
  'TOOL_BLOCKED', 'TOOL_SET_NOT_ALLOWED', 'RISK_CEILING_EXCEEDED', 'MANUAL_ONLY_AUTONOMOUS', 'GRANT_REQUIRED', 'EMERGENCY_STOP',
  'REPEATED_BLOCKED_CALL', 'APPROVAL_DENIED', 'APPROVAL_INVALID', 'APPROVAL_EXPIRED', 'APPROVAL_ALREADY_USED', 'APPROVAL_NOT_FOUND',
  'APPROVAL_NOT_DECIDED', 'SKILL_ACTIVATION_REFUSED', 'SANDBOX_ESCAPE',
]);

/**
 * Refuse a run on a session that another user created (`SESSION_FORBIDDEN`). A session with no recorded
 * owner (created before owners were kept) is left as it is.
 */
export async function assertSessionOwner(storage: ResolvedRuntimeOptions['storage'], sessionId: string, userId: string): Promise<void> {
  const session = await storage.conversations.getSession(sessionId);
  if (session?.userId !== undefined && session.userId !== userId) {
    throw new MinaraError('SESSION_FORBIDDEN', `Session "${sessionId}" belongs to another user; nothing was run.`);
  }
}

/** Prepare session, skills, memory snapshot and prompt blocks for a turn (no model call). */
export async function prepareTurn(
  deps: TurnDeps,
  input: RunInput,
  ctx: ToolCallContext,
  emit: (e: AgentEvent) => void,
): Promise<{ prompt: TurnPrompt; state: SessionState; skillSession: SkillSession | undefined; scope: TurnScope; learning: TurnLearningContext | undefined }> {
  const { options, now } = deps;
  const source = ctx.source;
  const scope: TurnScope = { userId: ctx.userId ?? deps.defaultUserId, agentId: ctx.agentId, sessionId: ctx.sessionId };
  const memory = deps.memoryFor(scope);
  // A read first: only a new session costs a write.
  if (!(await options.storage.conversations.getSession(ctx.sessionId))) {
    await options.storage.conversations.ensureSession({ id: ctx.sessionId, userId: scope.userId, now: now().toISOString(), metadata: { surface: input.surface ?? options.surface ?? 'sdk' } });
  }

  // The memory snapshot is frozen for the whole session: loaded once, persisted, never rebuilt mid-session.
  let state: SessionState = (await loadSessionState(options.storage, ctx.sessionId)) ?? { activeSkills: [], turnCount: 0 };
  let snapshotLoaded = false;
  if (state.memorySnapshot === undefined && memory) {
    const snapshot = await memory.loadSnapshot();
    state = { ...state, memorySnapshot: snapshot.text };
    await saveSessionState(options.storage, ctx.sessionId, state);
    snapshotLoaded = true;
  }

  // Skills: restore the session's loaded set, then signal and scenario preloads.
  let skillSession: SkillSession | undefined;
  let routed: RoutedCatalogEntry[] = [];
  let scenarioPlaybook: string | undefined;
  if (options.skills) {
    skillSession = deps.liveSkillSessions.get(ctx.sessionId);
    if (!skillSession) {
      skillSession = createSkillSession({ registry: options.skills });
      deps.liveSkillSessions.set(ctx.sessionId, skillSession);
      const restorable = state.activeSkills.filter((id) => options.skills!.has(id));
      if (restorable.length > 0) skillSession.activate(restorable, { source, operatorAuthored: true, via: 'host', traceId: ctx.traceId });
    }
    routed = options.skills.route({ message: input.message ?? '', source, ...(input.signal ? { signal: input.signal } : {}) });
    if (input.signal) {
      const pre = applySignalPreload(skillSession, input.signal, { operatorAuthored: ctx.operatorAuthored === true });
      if (pre.activation) emit({ type: 'skill-activated', skillIds: pre.activation.active, via: 'signal', shed: pre.activation.shed });
    }
    const scenario = input.message ? options.scenarios?.classify(input.message, { source }) : undefined;
    if (scenario) {
      scenarioPlaybook = `## Scenario: ${scenario.id}\n${scenario.playbook}`;
      const ids = (scenario.preloadSkills ?? []).filter((id) => options.skills!.has(id));
      const merged = [...new Set([...skillSession.activeIds(), ...ids])];
      if (ids.length > 0 && merged.length !== skillSession.activeIds().length) {
        try {
          const r = skillSession.activate(merged, { source, operatorAuthored: ctx.operatorAuthored === true, via: 'host', traceId: ctx.traceId });
          emit({ type: 'skill-activated', skillIds: r.active, via: 'scenario', shed: r.shed });
        } catch (error) {
          deps.logger.warn('scenario preload refused', { scenario: scenario.id, error: error instanceof Error ? error.message : String(error) });
        }
      }
    }
  }

  const workspace = deps.workspaceFor(scope);
  const ws = workspace ? await workspace.loadPromptBlocks({ source, sessionId: ctx.sessionId }) : undefined;
  let hostNotices: readonly string[] = [];
  if (options.notices) {
    try {
      hostNotices = await options.notices({ turnId: ctx.turnId ?? '', sessionId: ctx.sessionId, source, userId: scope.userId });
    } catch (error) {
      deps.logger.warn('notices provider failed', { sessionId: ctx.sessionId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  // The learning loop: preference graduation before the model is called, then its block for the dynamic tail.
  let learning: TurnLearningContext | undefined;
  if (options.learning) {
    try {
      // A run with only approval decisions is judged in the context of the turn that proposed the calls.
      const message = input.message ?? state.learningMessage;
      learning = await options.learning.prepareTurn({ scope, source, ...(message !== undefined ? { message } : {}) });
    } catch (error) {
      deps.logger.warn('learning: prepareTurn failed; the turn goes on without learned context', { sessionId: ctx.sessionId, error: errorText(error) });
    }
  }
  const pending = await options.storage.approvals.list({ status: 'pending', sessionId: ctx.sessionId, limit: 20 });
  const livePending = pending.filter((a) => Date.parse(a.expiresAt) > now().getTime());

  const blocks = buildSystemPromptBlocks({
    identity: buildIdentityText(ws?.identity, options.identity),
    skillCatalog: options.skills?.buildCatalog(),
    memorySnapshot: state.memorySnapshot,
    workspace: ws?.dynamic,
    bootstrap: ws?.bootstrap,
    notices: [...(ws?.notices.map((n) => n.message) ?? []), ...hostNotices],
    learning: learning?.block,
    scenario: scenarioPlaybook,
    activeSkills: skillSession?.promptBlock(),
    routing: renderRouting(routed),
    signal: input.signal ? renderSignalBlock(input.signal) : undefined,
    pendingApprovals:
      livePending.length > 0
        ? `## Waiting for the user's confirmation\n${livePending.map((a) => `- ${a.toolName} (approval ${a.id}): ${a.reason}`).join('\n')}\nDo not call these again; the user answers them.`
        : undefined,
  });

  // Input and recalled content are scanned; findings are events and audit rows, never silent.
  // The frozen snapshot is scanned when it is loaded (it cannot change within the session).
  const scans: Array<['message' | 'memory' | 'workspace', string | undefined]> = [
    ['message', input.message],
    ['memory', snapshotLoaded ? state.memorySnapshot : undefined],
    ['workspace', ws?.dynamic],
  ];
  for (const [target, text] of scans) {
    for (const f of text ? scanInput(text) : []) {
      emit({ type: 'input-flagged', target, kind: f.kind, pattern: f.pattern, excerpt: f.excerpt });
      await options.storage.audit.append({
        at: now().toISOString(), toolName: '(input-scanner)', tier: 0, source, sessionId: ctx.sessionId, traceId: ctx.traceId,
        decision: 'allowed', code: f.kind === 'secret' ? 'INPUT_SECRET' : 'INPUT_PROMPT_INJECTION', reason: `${target}: ${f.pattern}`,
        durationMs: 0, argsJson: JSON.stringify({ target, pattern: f.pattern }),
      });
    }
  }

  const allowed = ctx.allowedToolSets;
  const toolNames = skillSession
    ? skillSession.visibleToolNames({ allowedToolSets: allowed })
    : options.tools.list(allowed ? { toolSets: allowed } : {}).map((t) => t.name).sort();
  return { prompt: { blocks, toolNames }, state, skillSession, scope, learning };
}

function renderRouting(routed: readonly RoutedCatalogEntry[]): string | undefined {
  const top = routed.filter((r) => r.reasons.length > 0).slice(0, 5);
  if (top.length === 0) return undefined;
  return `## Skills that match this message\n${top.map((r) => `- ${r.id} (${r.reasons.join(', ')})`).join('\n')}\nActivate the ones the request needs with activate_skills.`;
}

/** Run one turn end to end, pushing events; never throws (failures become an `error` event). */
export function executeTurn(deps: TurnDeps, input: RunInput, turnId: string, emit: (e: AgentEvent) => void): Promise<void> {
  // One OpenTelemetry span per turn (`minara.turn`): ids, source, stop reason, steps, tokens, the model that answered.
  return inSpan('minara.turn', { 'minara.turn.id': turnId, 'minara.session.id': input.sessionId, 'minara.turn.source': input.source ?? 'user' }, (span) =>
    executeTurnUntraced(deps, input, turnId, (e) => {
      if (e.type === 'turn-end') {
        span.setAttributes({
          'minara.turn.stop_reason': e.stopReason, 'minara.turn.steps': e.steps, 'gen_ai.usage.input_tokens': e.usage.inputTokens, 'gen_ai.usage.output_tokens': e.usage.outputTokens,
          ...(e.modelId ? { 'gen_ai.response.model': e.modelId } : {}),
        });
      }
      emit(e);
    }),
  );
}

async function executeTurnUntraced(deps: TurnDeps, input: RunInput, turnId: string, emit: (e: AgentEvent) => void): Promise<void> {
  const { options, now } = deps;
  const source = input.source ?? 'user';
  // A session belongs to the user who created it: nothing runs on another user's session (not even approvals).
  await assertSessionOwner(options.storage, input.sessionId, input.userId ?? deps.defaultUserId);
  // A run may only lower the runtime's limits (a delegated child gets its own, smaller budget).
  const maxSteps = Math.min(deps.maxSteps, input.maxSteps ?? Number.POSITIVE_INFINITY);
  const turnTokenBudget = Math.min(deps.turnTokenBudget, input.turnTokenBudget ?? Number.POSITIVE_INFINITY);
  for (const hook of options.onTurnStart ?? []) {
    try {
      await hook({ turnId, sessionId: input.sessionId, source, userId: input.userId ?? deps.defaultUserId });
    } catch (error) {
      deps.logger.warn('onTurnStart hook failed', { turnId, error: error instanceof Error ? error.message : String(error) });
    }
  }
  const ctx = createToolCallContext({
    sessionId: input.sessionId,
    source,
    traceId: input.signal?.trace_id ?? deps.generateId('trc'),
    turnId,
    userId: input.userId ?? deps.defaultUserId,
    ...(input.agentId ? { agentId: input.agentId } : {}),
    ...(input.allowedToolSets ? { allowedToolSets: input.allowedToolSets } : source === 'cron' || source === 'heartbeat' ? { allowedToolSets: deps.cronAllowedToolSets } : {}),
    operatorAuthored: input.operatorAuthored ?? !isAutonomousSource(source),
  });
  emit({ type: 'turn-start', turnId, sessionId: ctx.sessionId, traceId: ctx.traceId, source, at: now().toISOString() });

  let text = '';
  let stopReason: TurnStopReason = 'finished';
  let usage: TurnUsage = ZERO_USAGE;
  // Delegated sub-agent turns: their events are nested in this stream, and their tokens count as this turn's.
  let delegatedUsage: TurnUsage = ZERO_USAGE;
  ctx.state.set(TURN_EMIT_KEY, (e: AgentEvent) => {
    if (e.type === 'subagent' && e.event.type === 'turn-end' && e.event.sessionId !== ctx.sessionId) {
      usage = addUsage(usage, e.event.usage);
      delegatedUsage = addUsage(delegatedUsage, e.event.usage);
    }
    emit(e);
  });
  let stepCount = 0;
  let answeredBy: string | undefined;
  const pendingApprovals: PendingApproval[] = [];
  // A clarifying question (`clarify`) ends the turn after its step, like a pending approval.
  let askedUser = false;
  const toolCalls: TurnToolCall[] = [];
  const outcomes = new Map<string, DispatchOutcome>();
  let state: SessionState = { activeSkills: [], turnCount: 0 };
  let skillSession: SkillSession | undefined;
  let scope: TurnScope = { userId: ctx.userId ?? deps.defaultUserId, sessionId: ctx.sessionId };
  let learned: TurnLearningContext | undefined;
  // Messages the model produced in finished steps; persisted even when a later step fails.
  let responseMessages: ModelMessage[] = [];
  // Each call that returns is journaled at once, so a step cut short (abort, crash) does not forget it.
  const journal = createCallJournal(options.storage, ctx.sessionId, turnId, deps.logger);

  try {
    const prepared = await prepareTurn(deps, input, ctx, emit);
    state = prepared.state;
    skillSession = prepared.skillSession;
    scope = prepared.scope;
    learned = prepared.learning;
    const { prompt } = prepared;

    // History: load, repair orphaned tool calls, apply approval decisions.
    let history = await loadMessages(options.storage, ctx.sessionId);
    // Calls a process that died mid-turn ran and journaled: restore them before anything else reads history.
    const restored = await restoreJournaledCalls(options.storage, ctx.sessionId, history, now());
    if (restored.messages.length > 0) {
      await options.storage.conversations.appendMessages(ctx.sessionId, toNewMessages(restored.messages, turnId, now()));
      history = [...history, ...restored.messages];
      deps.logger.warn('restored tool calls a turn ran before its process died', { sessionId: ctx.sessionId, toolCallIds: restored.restored });
    }
    // An approvals-only run on a session with no conversation has nothing to ask the model: the decisions
    // are applied and recorded, and the turn ends without a model call.
    const askModel = history.length > 0 || input.message !== undefined;
    const repaired = repairOrphanedToolCalls(history);
    let historyDirty = repaired.repaired.length > 0;
    history = repaired.messages;
    for (const decision of input.approvals ?? []) {
      const resolved = await resolveApproval(deps, ctx, decision);
      if (resolved.event) emit(resolved.event);
      if (resolved.envelope && resolved.toolCallId) {
        const r = replaceToolResult(history, { toolCallId: resolved.toolCallId, approvalId: decision.approvalId }, resolved.envelope);
        if (r.found) history = r.messages;
        else history = [...history, { role: 'user', content: `[Approval ${decision.approvalId} for ${resolved.toolName}: ${JSON.stringify(resolved.envelope)}]` }];
        historyDirty = true;
      }
      if (resolved.toolName && resolved.outcome) recordCall(toolCalls, resolved.toolCallId ?? '', resolved.toolName, resolved.input, resolved.outcome);
    }
    if (historyDirty) await options.storage.conversations.replaceMessages(ctx.sessionId, toNewMessages(history, turnId, now()));

    // Attachments become reference parts (`minara-file:<key>`): the bytes never enter the sessions table.
    const userMessage: ModelMessage | undefined = input.message === undefined
      ? undefined
      : input.attachments && input.attachments.length > 0 && options.messageTranslator
        ? await options.messageTranslator.toStoredUserMessage({ text: input.message, attachments: input.attachments, userId: scope.userId })
        : { role: 'user', content: input.message };
    if (userMessage) {
      await options.storage.conversations.appendMessages(ctx.sessionId, toNewMessages([userMessage], turnId, now()));
      history = [...history, userMessage];
    }

    // Compaction ladder before spending a model call.
    const memory = deps.memoryFor(scope);
    const compactionBase = {
      ...options.compaction,
      ...(options.utilityModel ? { summarizer: options.utilityModel } : {}),
      ...(memory ? { reinject: async (q: string, n: number) => (await memory.search(q, { limit: n })).map((h) => `[${h.category}] ${h.content}`) } : {}),
      query: input.message ?? '',
      ...(input.abortSignal ? { signal: input.abortSignal } : {}),
    };
    const compacted = await compactMessages(history, compactionBase);
    if (compacted.changed) {
      history = compacted.messages;
      await options.storage.conversations.replaceMessages(ctx.sessionId, toNewMessages(history, turnId, now()));
      emit({ type: 'compaction', beforeTokens: compacted.beforeTokens, afterTokens: compacted.afterTokens, steps: compacted.steps });
    }

    // The model call, with the overflow guard: a step that overflows the window is compacted and retried.
    for (let attempt = 0; askModel; attempt++) {
      let overflow: unknown;
      // Attachment references become the provider's parts for this call only; `history` keeps the keys.
      const forModel = options.messageTranslator ? await options.messageTranslator.toModelMessages(history, { userId: scope.userId }) : history;
      const aiTools = toAISDKTools(options.tools, prompt.toolNames, {
        context: ctx,
        onSettled: (call) => journal.add({ toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, output: call.envelope }),
        onResult: (name, outcome) => {
          outcomes.set(outcome.toolCallId, outcome);
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
      const result = options.tools.runInContext(ctx, () =>
        streamText({
          model: deps.model,
          instructions: toInstructions(prompt.blocks),
          messages: withHistoryBreakpoint(mergeConsecutiveUserMessages(forModel)),
          tools: aiTools as ToolSet,
          toolOrder: prompt.toolNames,
          toolCallConcurrency: 1,
          stopWhen: [
            isStepCount(Math.max(1, maxSteps - stepCount)),
            () => pendingApprovals.length > 0,
            () => askedUser,
            () => stopReason === 'repeated-blocked-call',
            () => usage.inputTokens + usage.outputTokens >= turnTokenBudget,
          ],
          // A call to a registered tool that is not in this turn's list is rerouted through tool_invoke,
          // so it still goes through dispatch (gate, hooks, audit) instead of failing as an unknown tool.
          repairToolCall: async ({ toolCall, error }) => {
            if (error.name !== 'AI_NoSuchToolError' || !prompt.toolNames.includes('tool_invoke') || !options.tools.has(toolCall.toolName)) return null;
            let args: unknown = {};
            try {
              args = toolCall.input ? JSON.parse(toolCall.input) : {};
            } catch {
              return null;
            }
            return { ...toolCall, toolName: 'tool_invoke', input: JSON.stringify({ name: toolCall.toolName, args }) };
          },
          prepareStep: () =>
            // Near the budget, the next step must answer in text.
            usage.inputTokens + usage.outputTokens >= turnTokenBudget * 0.9 ? { toolChoice: 'none' as const } : undefined,
          onStepEnd: (step: StepResult<ToolSet>) => {
            responseMessages.push(...(step.response.messages as ModelMessage[]));
            // The model that answered (a fallback model reports the one that served the step).
            if (step.response.modelId) answeredBy = step.response.modelId;
          },
          ...(input.abortSignal ? { abortSignal: input.abortSignal } : {}),
          ...(options.telemetry ? { telemetry: options.telemetry } : {}),
          maxRetries: 1,
          // Errors arrive as stream parts and become events; nothing is printed.
          onError: () => {},
        }),
      );
      for await (const part of result.stream) {
        switch (part.type) {
          case 'text-delta':
            text += part.text;
            emit({ type: 'text-delta', delta: part.text });
            break;
          case 'tool-call':
            emit({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input });
            break;
          case 'tool-result': {
            const outcome = outcomes.get(part.toolCallId);
            const envelope = part.output as ToolEnvelope;
            if (outcome) recordCall(toolCalls, part.toolCallId, part.toolName, part.input, outcome);
            // Classify by the envelope: a call made through tool_invoke carries the inner call's outcome.
            if (!envelope.ok && envelope.code === 'APPROVAL_REQUIRED' && envelope.approval) {
              const a = envelope.approval;
              const record = outcome?.approval?.id === a.approvalId ? outcome.approval : await options.tools.approvals.get(a.approvalId);
              const pending: PendingApproval = {
                approvalId: a.approvalId, toolCallId: part.toolCallId, toolName: record?.toolName ?? a.toolName,
                input: record ? (JSON.parse(record.inputJson) as unknown) : part.input, reason: a.reason, tier: record?.tier ?? 0, expiresAt: a.expiresAt,
              };
              pendingApprovals.push(pending);
              emit({ type: 'approval-request', ...pending });
            } else if (!envelope.ok && BLOCK_CODES.has(String(envelope.code))) {
              emit({ type: 'tool-blocked', toolCallId: part.toolCallId, toolName: part.toolName, code: String(envelope.code), reason: envelope.error });
              if (envelope.code === 'REPEATED_BLOCKED_CALL') stopReason = 'repeated-blocked-call';
            } else {
              emit({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: envelope });
              if (envelope.ok && isClarification(envelope.data)) {
                askedUser = true;
                const q = envelope.data;
                emit({ type: 'clarification-request', toolCallId: part.toolCallId, question: q.question, choices: q.choices, allowFreeText: q.allowFreeText });
              }
              // A tool that scanned untrusted content it returned (MCP results) lists its findings: surface them.
              const untrusted = envelope.ok ? (envelope.data as { untrusted?: unknown } | undefined)?.untrusted : undefined;
              if (Array.isArray(untrusted)) {
                for (const f of untrusted as Array<{ kind?: unknown; pattern?: unknown }>) {
                  if (f?.kind !== 'prompt_injection' && f?.kind !== 'secret') continue;
                  emit({ type: 'input-flagged', target: 'tool', kind: f.kind, pattern: String(f.pattern), excerpt: part.toolName });
                }
              }
            }
            break;
          }
          case 'tool-error':
            emit({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: { ok: false, error: String(part.error), code: 'TOOL_EXECUTION_FAILED', retryable: false } });
            break;
          case 'finish-step': {
            stepCount++;
            const u: TurnUsage = {
              inputTokens: part.usage.inputTokens ?? 0,
              outputTokens: part.usage.outputTokens ?? 0,
              cacheReadTokens: part.usage.inputTokenDetails?.cacheReadTokens ?? 0,
              cacheWriteTokens: part.usage.inputTokenDetails?.cacheWriteTokens ?? 0,
            };
            usage = addUsage(usage, u);
            emit({ type: 'step-end', stepNumber: stepCount, finishReason: part.finishReason, usage: u });
            if (part.finishReason === 'tool-calls' && stepCount >= maxSteps && pendingApprovals.length === 0 && stopReason === 'finished') stopReason = 'max-steps';
            break;
          }
          case 'abort':
            stopReason = 'aborted';
            break;
          case 'error':
            if (OVERFLOW.test(errorText(part.error)) && attempt < 2) overflow = part.error;
            else throw part.error;
            break;
          default:
            break;
        }
      }
      if (overflow === undefined) break;
      // Overflow: keep what the finished steps produced, compact harder, try again.
      const forced = await compactMessages([...history, ...responseMessages], { ...compactionBase, force: true, keepRecentMessages: 4 });
      emit({ type: 'compaction', beforeTokens: forced.beforeTokens, afterTokens: forced.afterTokens, steps: [...forced.steps, 'overflow-retry'] });
      history = forced.messages;
      responseMessages = [];
      await options.storage.conversations.replaceMessages(ctx.sessionId, toNewMessages(history, turnId, now()));
    }

    if (stopReason === 'finished' && usage.inputTokens + usage.outputTokens >= turnTokenBudget) stopReason = 'token-budget';
    if (askedUser && stopReason !== 'aborted') stopReason = 'clarification';
    if (pendingApprovals.length > 0) stopReason = 'approval-required';
    if (stopReason === 'repeated-blocked-call') {
      const note = '\n\nI stopped here: the same action was blocked more than once, so retrying will not help. Tell me how you want to proceed.';
      text += note;
      emit({ type: 'text-delta', delta: note });
      responseMessages.push({ role: 'assistant', content: note.trim() });
    }
  } catch (error) {
    if (input.abortSignal?.aborted) stopReason = 'aborted';
    else {
      stopReason = 'error';
      const e = MinaraError.isInstance(error) ? error : undefined;
      emit({ type: 'error', code: e?.code ?? 'MODEL_ERROR', message: errorText(error), retryable: e?.retryable ?? false });
      deps.logger.error('turn failed', { sessionId: ctx.sessionId, turnId, error: errorText(error) });
    }
  }

  // End of turn: persist what the model said (even after an error or abort), plus calls that returned in a
  // step cut short, then clear the journal, then state, then fan out.
  try {
    let tail = journal.missingFrom(responseMessages);
    if (tail.length > 0) tail = journal.missingFrom([...(await loadMessages(options.storage, ctx.sessionId)), ...responseMessages]);
    const toStore = [...responseMessages, ...tail];
    if (toStore.length > 0) await options.storage.conversations.appendMessages(ctx.sessionId, toNewMessages(toStore, turnId, now()));
    await journal.clear();
  } catch (error) {
    deps.logger.error('could not persist the turn', { sessionId: ctx.sessionId, error: errorText(error) });
  }
  const turnCount = state.turnCount + 1;
  try {
    const learningMessage = input.message !== undefined ? input.message.slice(0, 2000) : state.learningMessage;
    await saveSessionState(options.storage, ctx.sessionId, { ...state, activeSkills: skillSession?.activeIds() ?? state.activeSkills, turnCount, ...(learningMessage !== undefined ? { learningMessage } : {}) });
  } catch (error) {
    deps.logger.error('could not save session state', { sessionId: ctx.sessionId, error: errorText(error) });
  }
  // The post_turn record: on the event stream (just before turn-end), then to decision capture and the hooks.
  const activeSkills = skillSession?.activeIds() ?? state.activeSkills;
  const roleFor = (toolName: string): string =>
    ctx.agentId ?? activeSkills.find((id) => options.skills?.get(id)?.toolNames.includes(toolName)) ?? 'agent';
  const summary: PostTurnRecord = {
    sessionId: ctx.sessionId, turnId, traceId: ctx.traceId, source, userId: scope.userId, userText: input.message, text, stopReason,
    steps: stepCount, usage, ...(delegatedUsage !== ZERO_USAGE ? { delegatedUsage } : {}), toolCalls, pendingApprovals, turnCount, ...(answeredBy ? { modelId: answeredBy } : {}),
    ...(ctx.agentId ? { agentId: ctx.agentId } : {}), activeSkills, methodologyIds: learned?.methodologyIds ?? [], preferenceIds: learned?.preferenceIds ?? [],
    executions: executedCalls(ctx).map((c) => toTurnExecution(c, roleFor(c.toolName))),
  };
  emit({ type: 'post-turn', record: summary });
  emit({
    type: 'turn-end', turnId, sessionId: ctx.sessionId, text, stopReason, steps: stepCount, usage, ...(delegatedUsage !== ZERO_USAGE ? { delegatedUsage } : {}),
    toolsUsed: [...ctx.usedTools], pendingApprovals, ...(answeredBy ? { modelId: answeredBy } : {}),
  });
  options.bus?.emit('turn:ended', { sessionId: ctx.sessionId, turnId, source, text, toolsUsed: [...ctx.usedTools] });
  const workspace = deps.workspaceFor(scope);
  if (workspace) {
    try {
      await workspace.onTurnEnd({
        sessionId: ctx.sessionId, surface: input.surface ?? options.surface ?? 'sdk', turnCount, source, replyText: text,
        ...(input.message !== undefined ? { userText: input.message } : {}),
        openLoops: pendingApprovals.map((p) => `confirm ${p.toolName} (approval ${p.approvalId})`),
      });
    } catch (error) {
      deps.logger.error('workspace turn-end hook failed', { error: errorText(error) });
    }
  }
  if (options.learning) {
    try {
      await options.learning.captureTurn(summary);
    } catch (error) {
      deps.logger.error('learning: decision capture failed', { sessionId: ctx.sessionId, turnId, error: errorText(error) });
    }
  }
  for (const hook of options.onTurnEnd ?? []) {
    try {
      await hook(summary);
    } catch (error) {
      deps.logger.error('turn-end hook failed', { error: errorText(error) });
    }
  }
}

async function resolveApproval(
  deps: TurnDeps,
  ctx: ToolCallContext,
  decision: { approvalId: string; approved: boolean; reason?: string | undefined },
): Promise<{ event?: AgentEvent; envelope?: ToolEnvelope; toolCallId?: string; toolName?: string; input?: unknown; outcome?: DispatchOutcome }> {
  const { tools } = deps.options;
  const record = await tools.approvals.get(decision.approvalId);
  if (!record) return { event: { type: 'error', code: 'APPROVAL_NOT_FOUND', message: `No approval request "${decision.approvalId}".`, retryable: false } };
  if (record.sessionId !== undefined && record.sessionId !== ctx.sessionId) {
    return { event: { type: 'error', code: 'APPROVAL_INVALID', message: `Approval "${decision.approvalId}" belongs to another session.`, retryable: false } };
  }
  if (record.status === 'pending') {
    try {
      await tools.approvals.decide(decision.approvalId, { approved: decision.approved, reason: decision.reason });
    } catch (error) {
      const e = MinaraError.isInstance(error) ? error : undefined;
      const envelope: ToolEnvelope = { ok: false, error: errorText(error), code: e?.code ?? 'APPROVAL_INVALID', retryable: false };
      return { event: { type: 'tool-blocked', toolCallId: record.toolCallId, toolName: record.toolName, code: String(envelope.code), reason: envelope.error }, envelope, toolCallId: record.toolCallId, toolName: record.toolName };
    }
  }
  // Re-dispatch with the approval: input validation, hooks and the gate run again against the current policy.
  const input = JSON.parse(record.inputJson) as unknown;
  const outcome = await tools.dispatchDetailed(record.toolName, input, { context: ctx, approvalId: record.id, toolCallId: record.toolCallId });
  const envelope = outcome.envelope;
  const event: AgentEvent =
    !envelope.ok && BLOCK_CODES.has(String(envelope.code))
      ? { type: 'tool-blocked', toolCallId: record.toolCallId, toolName: record.toolName, code: String(envelope.code), reason: envelope.error }
      : { type: 'tool-result', toolCallId: record.toolCallId, toolName: record.toolName, output: envelope };
  return { event, envelope, toolCallId: record.toolCallId, toolName: record.toolName, input, outcome };
}

function recordCall(list: TurnToolCall[], toolCallId: string, toolName: string, input: unknown, outcome: DispatchOutcome): void {
  list.push({ toolCallId, toolName, input, decision: outcome.decision, ok: outcome.envelope.ok, code: outcome.envelope.ok ? undefined : String(outcome.envelope.code) });
}

/** Put the fourth cache breakpoint on the last history message, so the conversation so far is read from cache. */
function withHistoryBreakpoint(history: readonly ModelMessage[]): ModelMessage[] {
  if (history.length === 0) return [];
  const out = [...history];
  const i = out.length - 1;
  out[i] = { ...out[i]!, providerOptions: { ...out[i]!.providerOptions, anthropic: { cacheControl: { type: 'ephemeral' } } } } as ModelMessage;
  return out;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}

