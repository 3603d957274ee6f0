import { DEFAULT_RUNTIME_CLOSE_TIMEOUT_MS } from '../runtime/runtime';
import { assembleArtifactsAndFiles } from './artifacts';
import { assembleBackground } from './background';
import { createDisposerStack } from './disposers';
import { assembleExtraction } from './extraction';
import { assembleMemoryAndLearning, indexTradeCases } from './memory';
import { resolveAppModels } from './models';
import { assemblePacks, withResearchPack } from './packs';
import { assembleRuntime } from './runtime';
import { assembleSecurity, listenForFleetStop } from './security';
import { resolveAppSettings } from './settings';
import { assembleSkills } from './skills';
import { openAppStorage } from './storage';
import { assembleAuditIntegrity } from './audit-integrity';
import type { CreateAppOptions, MinaraApp } from './types';
import { assembleWorkspace } from './workspace';

export type { AppPack, CreateAppOptions, MinaraApp } from './types';

/**
 * The composition root: load env, open storage under `dataDir`, build the tool registry (built-in
 * factories; a factory whose env is missing contributes nothing), the skill registry (packs + SKILL.md
 * directories + external skills), memory, the seeded workspace, and the runtime. Given the same options
 * and env it builds the same app, so the CLI and the gateway get an identical runtime.
 *
 * @example
 * ```ts
 * import { createApp } from '@minara/agent';
 *
 * const app = await createApp({ finance: { limits: { maxTradeUsd: 500 } } });
 * for await (const e of app.runtime.run({ sessionId: 's1', message: 'BTC price?' })) { … }
 * await app.close();
 * ```
 */
export async function createApp(options: CreateAppOptions = {}): Promise<MinaraApp> {
  // Each part is assembled by its own function in src/app/, in this order. A part that holds something pushes
  // its release on one stack; close() (or a failure part-way) releases them last part first.
  const settings = resolveAppSettings(options); // env, config, logger, bus, clock
  const { config, envLoad, bus, logger, userId } = settings;
  const disposers = createDisposerStack();
  const storage = await openAppStorage(settings, disposers);
  try {
    const auditIntegrity = await assembleAuditIntegrity(settings, storage, disposers); // keyed audit links (this instance's key), signed checkpoints
    const models = await resolveAppModels(settings); // model, its status, embedder
    const memory = assembleMemoryAndLearning(settings, storage, models, disposers); // per tenant, made on first use
    await indexTradeCases(storage, memory, logger); // trade cases without their memory row get one (learning migration v3)
    const base = await assemblePacks(settings, storage, memory, disposers); // finance, the host's packs, MCP servers
    const artifacts = assembleArtifactsAndFiles(settings, storage, disposers); // artifacts, materializer, uploads
    const packs = withResearchPack(settings, storage, memory, artifacts.artifacts, base, disposers); // web search, code sandbox, research
    const tools = assembleSecurity(settings, storage, { memory, packs, artifacts }); // approval key, registry, grants, stop
    const skills = assembleSkills(settings, tools, packs); // packs', host's, SKILL.md directories, external
    const workspace = await assembleWorkspace(settings, models, disposers); // the operator's (seeded) and tenants'
    // Memory from conversations: queued after user turns, drained by a background job within the daily budget.
    const extraction = assembleExtraction(settings, { storage, models, memory, admit: async () => jobs.admit?.() });
    const runtime = assembleRuntime(settings, { // the runtime, its turn hooks, the delegate tool
      storage, models, memory, packs, artifacts, tools, skills: skills.skills, workspace, extraction, operatorNotices: () => jobs.background.takeNotices(),
    });
    // Closed before storage (and after the background runner, released earlier): running turns and the work kept
    // open after them finish, or are aborted past closeTimeoutMs.
    disposers.push(async () => {
      await runtime.close({ timeoutMs: options.closeTimeoutMs ?? DEFAULT_RUNTIME_CLOSE_TIMEOUT_MS });
    });
    const jobs = assembleBackground(settings, { storage, runtime, tools, workspace: workspace.workspace, memory, models, finance: packs.finance, extraction }, disposers);
    listenForFleetStop(settings, storage, tools, disposers); // the fleet's emergency stop, released first

    return {
      config,
      envLoad,
      modelStatus: models.modelStatus,
      embedderConfigured: models.embedder !== undefined,
      disabledFeatures: models.disabledFeatures,
      storage,
      tools,
      skills: skills.skills,
      skillLoadIssues: skills.skillLoadIssues,
      externalSkills: skills.externalSkills,
      workspace: workspace.workspace,
      workspaceFor: workspace.workspaceFor,
      memoryFor: memory.memoryFor,
      memory: memory.memoryFor(userId),
      learningFor: memory.learningFor,
      learning: memory.learningFor(userId),
      memoryExtraction: { mode: extraction.mode, extractor: extraction.extractor },
      runtime,
      finance: packs.finance,
      mcp: packs.mcp,
      background: jobs.background,
      auditIntegrity,
      workflows: jobs.workflows,
      artifacts: artifacts.artifacts,
      materializer: artifacts.materializer,
      files: artifacts.files,
      admitAutonomousTurn: (context) => jobs.admit(context?.userId),
      reserveAutonomousTurn: (context) => jobs.reserve(context?.userId),
      bus,
      logger,
      close: () => disposers.releaseAll(),
    };
  } catch (error) {
    await disposers.releaseQuietly();
    throw error;
  }
}
