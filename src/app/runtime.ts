import { definedOnly } from '../util/defined';
import type { MaterializedArtifact } from '../artifacts/materializer';
import { createMessageTranslator } from '../files/message-translator';
import { createTurnLearning } from '../learning/turn-learning';
import { createDelegateTool } from '../runtime/delegate';
import { createAgentRuntime, type AgentRuntime } from '../runtime/runtime';
import type { TurnStartInfo, TurnSummary } from '../runtime/types';
import type { SkillRegistry } from '../skills/registry';
import type { Storage } from '../storage/types';
import type { ToolRegistry } from '../tools/types';
import type { AppArtifacts } from './artifacts';
import type { AppExtraction } from './extraction';
import type { AppMemory } from './memory';
import type { AppModels } from './models';
import { composeScenarios, type AppPacks } from './packs';
import type { AppSettings } from './settings';
import type { AppWorkspace } from './workspace';

/** The parts the runtime is assembled from. */
export interface RuntimeParts {
  readonly storage: Storage;
  readonly models: AppModels;
  readonly memory: AppMemory;
  readonly packs: AppPacks;
  readonly artifacts: AppArtifacts;
  readonly tools: ToolRegistry;
  readonly skills: SkillRegistry;
  readonly workspace: AppWorkspace;
  /** Memory from conversations: the user's message of every user turn is queued for the extraction pass. */
  readonly extraction: AppExtraction;
  /** Notices for the operator's next own turn (the background runner's; read at turn time). */
  readonly operatorNotices: () => readonly string[];
}

/**
 * The runtime part: the agent runtime over the other parts, with the app's turn-end hooks (every turn's
 * tokens and cost to the usage ledger, then the artifact materializer, then the host's), its turn-start hooks
 * (lazy MCP servers connect and changed tool lists join the registry, then the host's) and its notices. Then
 * the delegate tool, which runs child turns on this runtime.
 */
export function assembleRuntime(settings: AppSettings, parts: RuntimeParts): AgentRuntime {
  const { options, config, logger, bus, now, userId } = settings;
  const { storage, models, memory, packs, tools, skills, workspace } = parts;
  const { model } = models;
  const { files } = parts.artifacts;
  const liveMaterializer = parts.artifacts.materializer;
  const liveMcp = packs.mcp;
  const runtime = createAgentRuntime({
    maxSteps: config.maxSteps,
    ...definedOnly(options.runtime),
    model,
    tools,
    storage,
    skills,
    memory: (scope) => memory.memoryFor(scope.userId),
    ...(workspace.workspace ? { workspace: (scope: { userId: string }) => workspace.workspaceFor(scope.userId) } : {}),
    ...(packs.packs.some((p) => p.scenarios) ? { scenarios: composeScenarios(packs.packs.flatMap((p) => (p.scenarios ? [p.scenarios] : []))) } : {}),
    ...(options.utilityModel ? { utilityModel: options.utilityModel } : {}),
    defaultUserId: userId,
    ...(files ? { messageTranslator: createMessageTranslator({ files, logger, ...(options.files && options.files.spreadsheetRows !== undefined ? { spreadsheetRows: options.files.spreadsheetRows } : {}) }) } : {}),
    ...(memory.learningOptions ? { learning: createTurnLearning({ learningFor: (s) => memory.learningFor(s.userId, s.agentId) }) } : {}),
    // The runtime records every turn's tokens and cost in the usage ledger, at these prices over the defaults.
    ...(options.prices ? { prices: options.prices } : {}),
    onTurnEnd: [
      // Memory from conversations: the user's message is queued for the extraction pass (a background job).
      ...(parts.extraction.extractor
        ? [async (summary: TurnSummary) => {
            // A message from outside (content the host labelled untrusted) is not the user's own words: nothing is learned from it.
            if (summary.source !== 'user' || !summary.userText || summary.messageUntrusted === true) return;
            await parts.extraction.extractor!.enqueue({ userId: summary.userId, sessionId: summary.sessionId, turnId: summary.turnId, text: summary.userText });
          }]
        : []),
      // The materializer: browsable files for the artifact URIs in the final message.
      ...(liveMaterializer
        ? [async (summary: TurnSummary) => {
            const written: MaterializedArtifact[] = await liveMaterializer.materialize({ userId: summary.userId, sessionId: summary.sessionId }, summary.text);
            if (written.length > 0) logger.debug('artifacts materialized', { turnId: summary.turnId, ids: written.map((w) => w.id) });
          }]
        : []),
      ...(options.runtime?.onTurnEnd ?? []),
    ],
    // The turn boundary: lazy MCP servers connect and servers' changed tool lists join the registry here.
    onTurnStart: [
      ...(liveMcp ? [async () => tools.register(await liveMcp.applyToolListChanges())] : []),
      ...(options.runtime?.onTurnStart ?? []),
    ],
    // A HEARTBEAT.md schedule line the runner ignores is told to the operator in their next own turn, once.
    notices: async (turn: TurnStartInfo) => {
      const own = turn.source === 'user' && turn.userId === userId ? parts.operatorNotices() : [];
      const host = (await options.runtime?.notices?.(turn)) ?? [];
      return [...own, ...host];
    },
    surface: options.surface ?? 'sdk',
    bus,
    logger,
    now,
  });
  // Sub-agents: the delegate tool runs child turns on this runtime (tool set `agents`; autonomous turns need it allowed).
  if (!tools.has('delegate')) tools.register(createDelegateTool({ runtime, tools }));
  return runtime;
}
