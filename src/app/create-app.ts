import { ConfigError } from '../errors/subclasses';
import { type AgentBackground, type AgentBackgroundOptions, createAgentBackground, type Delivery } from '../background/agent';
import { createWebhookDelivery } from '../background/delivery';
import path from 'node:path';
import type { EmbeddingModel, LanguageModel } from 'ai';
import { loadConfig, type MinaraConfig, type MinaraConfigInput } from '../config/config';
import { loadEnv, type LoadEnvResult } from '../config/load-env';
import { MinaraError } from '../errors/minara-error';
import { createEventBus, type MinaraBus } from '../events/bus';
import { minaraProvidersFromEnv } from '../finance/adapters/factory';
import { createFinancePack, type FinancePack, type FinancePackOptions } from '../finance/create-finance-pack';
import { endpointWarnings, modelConfigStatus, type ModelConfigStatus, resolveEmbedder, resolveModel } from '../llm/resolve-model';
import { createMemoryStore } from '../memory/store';
import { createFactConsolidator } from '../memory/consolidator';
import { createMemoryTools } from '../memory/tools';
import type { MemoryStore } from '../memory/types';
import { createAgentRuntime, type AgentRuntime } from '../runtime/runtime';
import { createDelegateTool } from '../runtime/delegate';
import { createWebTools, type WebToolsOptions } from '../tools/web-tools';
import { type BrowserToolsOptions, createBrowserTools } from '../tools/browser-tools';
import { createFallbackModel } from '../llm/fallback-model';
import type { ModelPrice } from '../llm/pricing';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { AgentRuntimeOptions, ScenarioClassifier, TurnStartInfo, TurnSummary } from '../runtime/types';
import { createExternalSkillsManager, type ExternalSkillsManager } from '../skills/external';
import { createSkillRegistry, type SkillRegistry } from '../skills/registry';
import { loadSkillDirectories, type SkillLoadIssue } from '../skills/skill-md';
import type { Skill, SkillDefinition } from '../skills/types';
import type { Storage } from '../storage/types';
import { createFileTools } from '../tools/file-tools';
import type { McpTools } from '../mcp/client';
import { loadMcpConfigFile, type McpConfig, parseMcpConfig } from '../mcp/config';
import { mcpToolName } from '../mcp/names';
import { createToolRegistry } from '../tools/registry';
import { resolveApprovalKey } from '../safety/approval-key';
import type { ToolEntry, ToolHook, ToolRegistry } from '../tools/types';
import { createConsoleLogger, type Logger } from '../util/logger';
import { createWorkspace, type Workspace } from '../workspace/workspace';
import { createTenantWorkspace } from '../workspace/tenant';
import { workspaceConfigFromEnv } from '../workspace/config';
import { readHardConstraints } from './hard-constraints';
import { createLearningStore } from '../learning/store';
import { createTurnLearning } from '../learning/turn-learning';
import type { LearningStore, LearningStoreOptions } from '../learning/types';
import { createLearningTools } from '../learning/tools';
import { learningJobs } from './learning-jobs';
import { parseDuration, parseHours } from './env-parse';
import { createNotConfiguredModel } from './not-configured-model';
import { createArtifactStore } from '../artifacts/artifact-store';
import { createArtifactMaterializer, type ArtifactMaterializer, type MaterializedArtifact } from '../artifacts/materializer';
import { createArtifactTools } from '../artifacts/tools';
import type { ArtifactStore, ArtifactStoreOptions } from '../artifacts/types';
import { createFileStore } from '../files/file-store';
import { createMessageTranslator } from '../files/message-translator';
import type { FileStore } from '../files/types';

/** What a domain pack contributes (the finance pack is one). */
export interface AppPack {
  readonly tools?: readonly ToolEntry[] | undefined;
  readonly hooks?: readonly ToolHook[] | undefined;
  readonly skills?: ReadonlyArray<Skill | SkillDefinition> | undefined;
  readonly scenarios?: ScenarioClassifier | undefined;
  /** Called once the registry exists (e.g. to hand the pack the emergency-stop handle). */
  readonly attach?: ((registry: ToolRegistry) => void) | undefined;
}

/** Options of {@link createApp}. Every part can be replaced; everything else comes from env and defaults. */
export interface CreateAppOptions {
  /** The environment to read. @default process.env (after `.env` is loaded) */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Load `.env` from this directory first (never overriding the shell); `false` to skip. @default process.cwd() */
  readonly envFileDir?: string | false | undefined;
  /** Config overrides (dataDir, workspaceDir, model, logLevel, …) over env over defaults. */
  readonly config?: Partial<MinaraConfigInput> | undefined;
  /**
   * The key that signs approvals, outside the database. @default `resolveApprovalKey({ env, dataDir })`:
   * `MINARA_APPROVAL_KEY`, `MINARA_APPROVAL_KEY_FILE`, or `<dataDir>.approval-key` (created with mode 0600
   * on first run; never created in production mode, where a missing key refuses to start).
   */
  readonly approvalKey?: Uint8Array | undefined;
  /** Storage. @default SQLite at `${dataDir}/minara.db` */
  readonly storage?: Storage | undefined;
  /** The model, or a `provider:model` string. @default resolved from MINARA_MODEL and provider keys */
  readonly model?: LanguageModel | string | undefined;
  /**
   * How to configure a model, in the words of your surface: the text every turn's `MODEL_NOT_CONFIGURED` error
   * and `modelStatus.help` carry when no model is configured. @default MODEL_HELP (the env variables and this
   * `model` option); the `minara` CLI passes CLI_MODEL_HELP (its `--model` flag)
   */
  readonly modelHelp?: string | undefined;
  /**
   * Model objects tried in order: the next answers when one fails with overload, a 5xx, a timeout or a network
   * error (never a 400 or a refusal); `turn-end.modelId` says which answered (`createFallbackModel`). Wins over `model`.
   */
  readonly models?: readonly LanguageModelV4[] | undefined;
  /** A cheaper model for compaction and dreaming. @default the main model */
  readonly utilityModel?: LanguageModel | undefined;
  /** Embeddings for hybrid memory search; `false` disables. @default resolved from EMBEDDING_PROVIDER */
  readonly embedder?: EmbeddingModel | false | undefined;
  /**
   * The finance pack: options over the defaults, or `false` for none. Paper trading on the simulated feed
   * by default; with `MINARA_API_KEY` the market data comes from the Minara API, and trading stays on paper
   * unless `MINARA_TRADING=live` (or a `provider` is given here). `hard_constraint.*` profile entries of the
   * default user tighten the limits. @default {}
   */
  readonly finance?: false | Omit<FinancePackOptions, 'storage'> | undefined;
  /** More domain packs (tools, hooks, skills, scenarios). */
  readonly packs?: ReadonlyArray<AppPack | ((ctx: { storage: Storage; env: Readonly<Record<string, string | undefined>>; dataDir: string }) => AppPack)> | undefined;
  /**
   * MCP servers whose tools join the registry (docs/mcp.md), or `false` for none. A string is a path to an
   * `mcp.json`. Needs the optional peer dependency `@modelcontextprotocol/sdk` when any server is configured.
   * @default `MINARA_MCP_CONFIG`, else `${workspaceDir}/mcp.json` when it exists
   */
  readonly mcp?: McpConfig | string | false | undefined;
  /** Extra tools and hooks. */
  readonly tools?: readonly ToolEntry[] | undefined;
  readonly hooks?: readonly ToolHook[] | undefined;
  /** Extra skills (TypeScript definitions). */
  readonly skills?: ReadonlyArray<Skill | SkillDefinition> | undefined;
  /** SKILL.md directories to load. @default `${workspaceDir}/skills` */
  readonly skillDirs?: readonly string[] | undefined;
  /** The workspace, or `false` for none. @default a seeded workspace at `workspaceDir` */
  readonly workspace?: Workspace | false | undefined;
  /** Tenant when a run gives none. @default 'default' */
  readonly userId?: string | undefined;
  /** Surface for the heartbeat: `repl`, `gateway`, … @default 'sdk' */
  readonly surface?: string | undefined;
  /** Extra runtime options (maxSteps, compaction, onTurnEnd, …). */
  readonly runtime?: Partial<Omit<AgentRuntimeOptions, 'model' | 'tools' | 'storage' | 'skills' | 'memory' | 'workspace'>> | undefined;
  /**
   * The background runner's settings (docs/autonomy.md). It is built, not started: `app.background.start()`
   * (`minara serve` and the REPL start it). @default heartbeat every `MINARA_HEARTBEAT_EVERY` (30m; `0` off) within
   * `MINARA_HEARTBEAT_ACTIVE_HOURS` (e.g. `08:00-22:00` UTC), purge every 30 minutes, dreaming when enabled
   */
  readonly background?: Partial<Pick<AgentBackgroundOptions, 'heartbeatEveryMs' | 'activeHours' | 'purgeEveryMs' | 'dreaming' | 'deliver' | 'jobs' | 'owner' | 'resolutionMs'>> | undefined;
  /** The `web` tool set (`web_fetch`: public pages as text, SSRF-checked), or `false` for none. @default on, any public host */
  readonly web?: WebToolsOptions | false | undefined;
  /**
   * The `browser` tool set (`browser_read`: a page rendered in headless Chromium, every request of the page under the
   * same URL policy as `web_fetch`), or `false` for none. Registered only when Chromium (`MINARA_BROWSER_PATH`,
   * /usr/bin/chromium) and `playwright-core` are installed. Inherits `web`'s allow and deny lists unless given.
   * @default on when available
   */
  readonly browser?: BrowserToolsOptions | false | undefined;
  /** Prices per model id (USD per million tokens), merged over `DEFAULT_MODEL_PRICES`; every turn's cost goes to `storage.usage`. */
  readonly prices?: Readonly<Record<string, ModelPrice>> | undefined;
  /**
   * USD autonomous turns (heartbeat, schedule) may spend per UTC day; once spent they are skipped, saying why. User
   * turns are never stopped. @default `MINARA_DAILY_BUDGET_USD`, else no budget
   */
  readonly dailyBudgetUsd?: number | undefined;
  /**
   * The learning loop (docs/learning.md): decision capture and outcome attribution after every turn, learned
   * methodologies and preferences in the dynamic prompt tail, preference graduation before each turn; `false`
   * turns it off. @default on, with the thresholds of NOTES.md §8
   */
  readonly learning?: false | Partial<Pick<LearningStoreOptions, 'policy' | 'preferenceGraduation' | 'maxPromptMethodologies' | 'maxPromptPreferences' | 'minePreferences'>> | undefined;
  /**
   * Artifacts (docs/artifacts.md): the `artifacts` tool set (`create_chart`, `create_report`, `create_spreadsheet`,
   * `get_artifact`) and the turn-end materializer writing `<dataDir>/artifacts/<id>/`; `false` turns both off.
   * `png: false` (or `MINARA_CHART_PNG=0`) skips the headless-Chromium PNG of charts; `chromiumPath` (or
   * `MINARA_CHROMIUM_PATH`) names the browser. @default on, PNG when Chromium is installed
   */
  readonly artifacts?: false | (Partial<Pick<ArtifactStoreOptions, 'chartLimits' | 'maxReportChars' | 'maxCsvBytes'>> & { readonly png?: 'auto' | false | undefined; readonly chromiumPath?: string | undefined }) | undefined;
  /**
   * Uploads (docs/artifacts.md): the file store under `<dataDir>/files` and the message translator that turns a
   * run's `attachments` into image, file or text parts for the model; `false` turns both off.
   * @default on, 20 MiB per file, 200 spreadsheet rows shown to the model
   */
  readonly files?: false | { readonly maxBytes?: number | undefined; readonly spreadsheetRows?: number | undefined } | undefined;
  readonly logger?: Logger | undefined;
  readonly bus?: MinaraBus | undefined;
  readonly now?: (() => Date) | undefined;
}

/** Everything `createApp` assembled. */
export interface MinaraApp {
  readonly config: MinaraConfig;
  /** What `.env` loading did (undefined when skipped). */
  readonly envLoad: LoadEnvResult | undefined;
  /** Whether a real model is configured; when not, turns explain how to configure one. */
  readonly modelStatus: ModelConfigStatus;
  /** Whether an embedding model is configured (memory search fuses vectors when the index is available). */
  readonly embedderConfigured: boolean;
  readonly storage: Storage;
  readonly tools: ToolRegistry;
  readonly skills: SkillRegistry;
  readonly skillLoadIssues: readonly SkillLoadIssue[];
  readonly externalSkills: ExternalSkillsManager;
  /** The operator's workspace (the app's `userId`). */
  readonly workspace: Workspace | undefined;
  /**
   * The workspace a tenant's turns use: the operator's for the app's `userId`, else a tenant workspace
   * (`createTenantWorkspace`) with the operator's identity read-only and the tenant's own files.
   */
  workspaceFor(userId: string): Workspace | undefined;
  /** The memory store of a tenant (cached per user id). */
  memoryFor(userId: string): MemoryStore;
  /** The default tenant's memory. */
  readonly memory: MemoryStore;
  /** The learning store of a tenant (cached per user and agent); undefined when `learning: false`. */
  learningFor(userId: string, agentId?: string): LearningStore | undefined;
  /** The default tenant's learning store; undefined when `learning: false`. */
  readonly learning: LearningStore | undefined;
  readonly runtime: AgentRuntime;
  /** The finance pack, unless disabled. */
  readonly finance: FinancePack | undefined;
  /** The MCP connections when any server is configured (`status()`, `close()`); their tools are in `tools`. */
  readonly mcp: McpTools | undefined;
  /** The background runner (heartbeat, the user's schedule, maintenance); built, not started. */
  readonly background: AgentBackground;
  /** The artifact store (charts, reports, spreadsheets); undefined when `artifacts: false`. */
  readonly artifacts: ArtifactStore | undefined;
  /** The file store of uploads (`<dataDir>/files`); undefined when `files: false`. */
  readonly files: FileStore | undefined;
  /** Writes `<dataDir>/artifacts/<id>/` for the URIs in each final message (a turn-end hook); undefined when `artifacts: false`. */
  readonly materializer: ArtifactMaterializer | undefined;
  /** Why an autonomous turn may not start now (the daily budget is spent), or undefined when it may. */
  admitAutonomousTurn(): Promise<string | undefined>;
  readonly bus: MinaraBus;
  readonly logger: Logger;
  /** Close memory stores, the workspace and storage (if the app opened it). */
  close(): Promise<void>;
}

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
  // A given env is copied (and the .env file fills the copy); otherwise process.env is used and filled.
  const env: Record<string, string | undefined> = options.env ? { ...options.env } : process.env;
  const envLoad = options.envFileDir === false ? undefined : loadEnv({ cwd: options.envFileDir ?? process.cwd(), env });
  const config = loadConfig({ env, overrides: { ...options.config, ...(typeof options.model === 'string' ? { model: options.model } : {}) } });
  const logger = options.logger ?? createConsoleLogger({ level: config.logLevel });
  const bus = options.bus ?? createEventBus();
  const now = options.now ?? (() => new Date());
  const userId = options.userId ?? 'default';

  for (const warning of endpointWarnings(env)) logger.warn(warning);
  const ownsStorage = options.storage === undefined;
  let mcp: McpTools | undefined;
  let materializer: ArtifactMaterializer | undefined;
  // Loaded only here, so importing the package root never loads the native SQLite addon.
  // MINARA_DATABASE_URL: a fleet's shared PostgreSQL; otherwise the SQLite file under dataDir.
  const storage =
    options.storage ??
    (config.databaseUrl !== undefined
      ? await (await import('../storage/postgres/index')).createPostgresStorage({ connectionString: config.databaseUrl, schema: config.databaseSchema, logger, now })
      : (await import('../storage/sqlite/index')).createSqliteStorage({ path: config.dbPath, logger, now }));
  try {
    // Model and embedder.
    let model: LanguageModel;
    let modelStatus: ModelConfigStatus;
    if (options.models !== undefined) {
      model = createFallbackModel(options.models, { logger });
      modelStatus = { configured: true, provider: 'custom', modelId: model.modelId, label: `fallback:${model.modelId}` };
    } else if (options.model !== undefined && typeof options.model !== 'string') {
      model = options.model;
      const modelId = typeof model === 'string' ? model : model.modelId;
      modelStatus = { configured: true, provider: 'custom', modelId, label: `custom:${modelId}` };
    } else {
      modelStatus = modelConfigStatus({ model: config.model, baseUrl: config.baseUrl, env, help: options.modelHelp });
      model = modelStatus.configured ? await resolveModel({ model: config.model, baseUrl: config.baseUrl, env }) : createNotConfiguredModel(modelStatus);
    }
    const embedder = options.embedder === false ? undefined : (options.embedder ?? (await resolveEmbedder({ env })));

    // Memory, one store per tenant. MEMORY_CONSOLIDATION_ENABLED=1 turns on the LLM fact consolidator (utility model,
    // else the main one; `MEMORY_CONSOLIDATION_GUIDANCE` steers it), only when a model is configured.
    const consolidationOn = /^(1|true|yes|on)$/i.test(env.MEMORY_CONSOLIDATION_ENABLED ?? '');
    const consolidator = consolidationOn && modelStatus.configured
      ? createFactConsolidator({ model: options.utilityModel ?? model, enabled: true, logger, ...(env.MEMORY_CONSOLIDATION_GUIDANCE ? { guidance: env.MEMORY_CONSOLIDATION_GUIDANCE } : {}) })
      : undefined;
    if (consolidationOn && !consolidator) logger.warn('MEMORY_CONSOLIDATION_ENABLED is set but no model is configured: the LLM fact consolidator stays off');
    const stores = new Map<string, MemoryStore>();
    const memoryFor = (uid: string): MemoryStore => {
      if (typeof uid !== 'string' || uid.trim() === '') throw new MinaraError('INVALID_ARGUMENT', 'memoryFor: userId must be a non-empty string.');
      let store = stores.get(uid);
      if (!store) {
        store = createMemoryStore({ storage, scope: { userId: uid }, bus, logger, now, ...(embedder ? { embedder } : {}), ...(consolidator ? { consolidator } : {}) });
        stores.set(uid, store);
      }
      return store;
    };

    // Packs: finance first (its hooks run first), then the host's.
    let finance: FinancePack | undefined;
    if (options.finance !== false) {
      const minara = minaraProvidersFromEnv(env);
      finance = createFinancePack({
        storage,
        now,
        logger,
        ...(minara.market ? { market: minara.market } : {}),
        ...(minara.provider && env.MINARA_TRADING === 'live' ? { provider: minara.provider } : {}),
        preferences: () => readHardConstraints(memoryFor(userId)),
        ...options.finance,
      });
    }
    const packs: AppPack[] = [
      ...(finance ? [finance] : []),
      ...(options.packs ?? []).map((p) => (typeof p === 'function' ? p({ storage, env, dataDir: config.dataDir }) : p)),
    ];
    // The finance pack is built in: a host pack with its tools (a second createFinancePack) says so here, not
    // later as a bare "already registered".
    const builtIn = new Set(finance?.tools.map((t) => t.name) ?? []);
    for (const [i, p] of packs.slice(finance ? 1 : 0).entries()) {
      const clash = (p.tools ?? []).find((t) => builtIn.has(t.name));
      if (clash) throw new ConfigError(`packs[${i}]: its tool "${clash.name}" is the finance pack's, which createApp already adds; configure that one with \`finance: { … }\`, or pass \`finance: false\` to bring your own.`, [`packs[${i}]`]);
    }

    // MCP servers: loaded only when configured, so the SDK (an optional peer) is never needed otherwise.
    const mcpConfig = await resolveMcpConfig(options.mcp, env, config.workspaceDir);
    if (mcpConfig && Object.keys(mcpConfig.mcpServers).length > 0) {
      const { createMcpTools } = await import('../mcp/client');
      mcp = await createMcpTools({
        config: mcpConfig,
        logger,
        onFinding: (f) =>
          storage.audit.append({
            at: now().toISOString(), toolName: mcpToolName(f.server, f.tool), tier: 0, source: f.source, sessionId: f.sessionId, toolCallId: f.toolCallId,
            decision: 'allowed', code: f.kind === 'secret' ? 'INPUT_SECRET' : 'INPUT_PROMPT_INJECTION', reason: `mcp result: ${f.pattern}`,
            durationMs: 0, argsJson: JSON.stringify({ target: 'tool', server: f.server, tool: f.tool, pattern: f.pattern }),
          }),
      });
    }

    // Artifacts: rows in storage, browsable files under <dataDir>/artifacts (never inside the sandbox).
    const artifactOptions = options.artifacts === false ? undefined : (options.artifacts ?? {});
    const artifacts = artifactOptions ? createArtifactStore({ ...artifactOptions, storage, logger, now }) : undefined;
    materializer = artifacts && artifactOptions
      ? createArtifactMaterializer({
          store: artifacts, dir: path.join(config.dataDir, 'artifacts'), logger,
          png: artifactOptions.png ?? (/^(0|false|off|no)$/i.test(env.MINARA_CHART_PNG ?? '') ? false : 'auto'),
          ...(artifactOptions.chromiumPath ?? env.MINARA_CHROMIUM_PATH ? { chromiumPath: artifactOptions.chromiumPath ?? env.MINARA_CHROMIUM_PATH } : {}),
        })
      : undefined;
    const liveMaterializer = materializer;
    const files = options.files === false ? undefined : createFileStore({ dir: path.join(config.dataDir, 'files'), storage, logger, now, ...(options.files?.maxBytes !== undefined ? { maxBytes: options.files.maxBytes } : {}) });

    // Tools: built-in factories, packs, MCP servers, extras. Approvals are signed with a key kept outside the database.
    const approvalKey = options.approvalKey ?? resolveApprovalKey({ env, dataDir: config.dataDir }).key;
    const tools = createToolRegistry({
      storage,
      approvalKey,
      bus,
      logger,
      now,
      audit: config.audit,
      hooks: [...packs.flatMap((p) => p.hooks ?? []), ...(options.hooks ?? [])],
      tools: [
        ...createFileTools({ root: path.join(config.dataDir, 'sandbox', 'files') }),
        ...(options.web === false ? [] : createWebTools(options.web ?? {})),
        ...(options.browser === false
          ? []
          : createBrowserTools({
            env,
            ...(options.web ? { ...(options.web.allowHosts ? { allowHosts: options.web.allowHosts } : {}), ...(options.web.denyHosts ? { denyHosts: options.web.denyHosts } : {}) } : {}),
            ...options.browser,
          })),
        ...createMemoryTools({ resolveStore: (ctx) => memoryFor(ctx.call.userId ?? userId) }),
        ...(options.learning === false ? [] : createLearningTools({ learningFor: (ctx) => learningFor(ctx.call.userId ?? userId, ctx.call.agentId) })),
        ...(artifacts ? createArtifactTools({ store: artifacts, defaultUserId: userId }) : []),
        ...packs.flatMap((p) => p.tools ?? []),
        ...(mcp?.tools ?? []),
        ...(options.tools ?? []),
      ],
    });
    for (const p of packs) p.attach?.(tools);

    // Skills: packs, extras, SKILL.md directories, external skills.
    const externalSkills = createExternalSkillsManager({ dir: path.join(config.dataDir, 'skills', 'external'), now });
    const skills = createSkillRegistry({ tools, env, logger, skills: [...packs.flatMap((p) => p.skills ?? []), ...(options.skills ?? [])] });
    const fromDirs = loadSkillDirectories(options.skillDirs ?? [path.join(config.workspaceDir, 'skills')]);
    const external = externalSkills.load();
    const skillLoadIssues: SkillLoadIssue[] = [...fromDirs.issues, ...external.issues];
    for (const skill of [...fromDirs.skills, ...external.skills]) {
      try {
        skills.register(skill);
      } catch (error) {
        skillLoadIssues.push({ file: skill.origin.file ?? skill.id, field: 'id', message: error instanceof Error ? error.message : String(error), severity: 'error' });
      }
    }
    for (const issue of skillLoadIssues) logger.warn('skill not loaded', { file: issue.file, field: issue.field, message: issue.message });

    // Workspace, seeded.
    let workspace: Workspace | undefined;
    if (options.workspace === false) workspace = undefined;
    else if (options.workspace) workspace = options.workspace;
    else {
      workspace = createWorkspace({ ...workspaceConfigFromEnv(env), dir: config.workspaceDir, logger, now, ...(modelStatus.configured ? { dreaming: { ...workspaceConfigFromEnv(env).dreaming, model: options.utilityModel ?? model } } : {}) });
      await workspace.seed();
    }
    // The operator (the app's user) owns the workspace; every other tenant gets a tenant workspace over it:
    // the operator's identity files, read-only, and the tenant's own USER.md, MEMORY.md, heartbeat and journal.
    const tenantWorkspaces = new Map<string, Workspace>();
    const operatorWorkspace = workspace;
    const workspaceFor = (tenant: string): Workspace | undefined => {
      if (!operatorWorkspace || tenant === userId) return operatorWorkspace;
      let w = tenantWorkspaces.get(tenant);
      if (!w) {
        w = createTenantWorkspace({ ...workspaceConfigFromEnv(env), operator: operatorWorkspace, userId: tenant, logger, now, heartbeat: operatorWorkspace.settings.heartbeat, dailyLog: operatorWorkspace.settings.dailyLog });
        tenantWorkspaces.set(tenant, w);
      }
      return w;
    };

    // The learning loop, one store per tenant (user, agent): decision capture after turns, the learned prompt block.
    const learningStores = new Map<string, LearningStore>();
    const learningOptions = options.learning === false ? undefined : (options.learning ?? {});
    // The role reflector's model (on demand: `learning.reflect()`): the utility model, else the main one, when configured.
    const reflectionModel = modelStatus.configured ? (options.utilityModel ?? model) : undefined;
    const learningFor = (uid: string, agentId?: string): LearningStore | undefined => {
      if (!learningOptions) return undefined;
      const key = `${uid}\u0000${agentId ?? ''}`;
      let store = learningStores.get(key);
      if (!store) {
        store = createLearningStore({ ...learningOptions, storage, audit: storage.audit, ...(reflectionModel ? { model: reflectionModel } : {}), scope: agentId ? { userId: uid, agentId } : { userId: uid }, memory: memoryFor(uid), bus, logger, now });
        learningStores.set(key, store);
      }
      return store;
    };

    const liveMcp = mcp;
    const runtime = createAgentRuntime({
      maxSteps: config.maxSteps,
      ...options.runtime,
      model,
      tools,
      storage,
      skills,
      memory: (scope) => memoryFor(scope.userId),
      ...(workspace ? { workspace: (scope: { userId: string }) => workspaceFor(scope.userId) } : {}),
      ...(packs.some((p) => p.scenarios) ? { scenarios: composeScenarios(packs.flatMap((p) => (p.scenarios ? [p.scenarios] : []))) } : {}),
      ...(options.utilityModel ? { utilityModel: options.utilityModel } : {}),
      defaultUserId: userId,
      ...(files ? { messageTranslator: createMessageTranslator({ files, logger, ...(options.files && options.files.spreadsheetRows !== undefined ? { spreadsheetRows: options.files.spreadsheetRows } : {}) }) } : {}),
      ...(learningOptions ? { learning: createTurnLearning({ learningFor: (s) => learningFor(s.userId, s.agentId) }) } : {}),
      // The runtime records every turn's tokens and cost in the usage ledger, at these prices over the defaults.
      ...(options.prices ? { prices: options.prices } : {}),
      onTurnEnd: [
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
        const own = turn.source === 'user' && turn.userId === userId ? background.takeNotices() : [];
        const host = (await options.runtime?.notices?.(turn)) ?? [];
        return [...own, ...host];
      },
      surface: options.surface ?? 'sdk',
      bus,
      logger,
      now,
    });

    // Background work: built here, started by the host (minara serve, the REPL) with background.start().
    // Sub-agents: the delegate tool runs child turns on this runtime (tool set `agents`; autonomous turns need it allowed).
    if (!tools.has('delegate')) tools.register(createDelegateTool({ runtime, tools }));

    // Answers of autonomous turns: the host's deliver hook, and a signed webhook when MINARA_DELIVERY_WEBHOOK_URL is set.
    const webhookUrl = env.MINARA_DELIVERY_WEBHOOK_URL;
    if (webhookUrl && !env.MINARA_DELIVERY_WEBHOOK_SECRET) throw new ConfigError('MINARA_DELIVERY_WEBHOOK_SECRET: required with MINARA_DELIVERY_WEBHOOK_URL (the HMAC key the receiver verifies, at least 16 characters)', ['MINARA_DELIVERY_WEBHOOK_SECRET']);
    const toWebhook = webhookUrl ? createWebhookDelivery({ url: webhookUrl, secret: env.MINARA_DELIVERY_WEBHOOK_SECRET!, storage, now, logger }) : undefined;
    const hostDeliver = options.background?.deliver;
    const deliver = toWebhook || hostDeliver
      ? async (d: Delivery) => {
          await hostDeliver?.(d);
          await toWebhook?.(d);
        }
      : undefined;
    const budgetEnv = env.MINARA_DAILY_BUDGET_USD;
    const dailyBudgetUsd = options.dailyBudgetUsd ?? (budgetEnv !== undefined && budgetEnv.trim() !== '' ? Number(budgetEnv) : undefined);
    if (dailyBudgetUsd !== undefined && !(Number.isFinite(dailyBudgetUsd) && dailyBudgetUsd >= 0)) {
      throw new ConfigError(`dailyBudgetUsd (MINARA_DAILY_BUDGET_USD): expected a non-negative number of USD, got ${JSON.stringify(budgetEnv ?? dailyBudgetUsd)}`, ['dailyBudgetUsd']);
    }
    const admit = dailyBudgetUsd === undefined
      ? undefined
      : async () => {
          const spent = (await storage.usage.totals({ day: now().toISOString().slice(0, 10), sources: ['heartbeat', 'cron', 'webhook', 'workflow'] })).costUsd;
          return spent >= dailyBudgetUsd ? `daily budget spent: $${spent.toFixed(4)} of $${dailyBudgetUsd.toFixed(2)} on autonomous turns today (UTC)` : undefined;
        };
    const heartbeatEnv = env.MINARA_HEARTBEAT_EVERY;
    const activeEnv = env.MINARA_HEARTBEAT_ACTIVE_HOURS;
    const background = createAgentBackground({
      runtime,
      storage,
      workspace,
      userId,
      memoryStores: () => stores.values(),
      // Its stores keep the default 30-day retention; tenants not served since the start are purged on the same terms.
      unservedRetentionDays: 30,
      now,
      logger,
      ...(heartbeatEnv !== undefined && heartbeatEnv.trim() !== '' ? { heartbeatEveryMs: parseDuration(heartbeatEnv, 'MINARA_HEARTBEAT_EVERY') } : {}),
      ...(activeEnv !== undefined && activeEnv.trim() !== '' ? { activeHours: parseHours(activeEnv, 'MINARA_HEARTBEAT_ACTIVE_HOURS') } : {}),
      ...options.background,
      jobs: [...(options.background?.jobs ?? []), ...learningJobs({ env, learning: learningFor(userId), storage, finance, memory: memoryFor(userId), model: reflectionModel, userId, bus, now, logger })],
      ...(deliver ? { deliver } : {}),
      ...(admit ? { admit } : {}),
    });

    // A fleet on PostgreSQL: an emergency stop engaged or released on another instance reaches this bus at once
    // (LISTEN/NOTIFY; polled on PGlite). The tier gate itself reads the flag from the database on every call.
    const listen = (storage as { listen?: (channel: string, fn: (change: { payload: string; local: boolean }) => void) => () => void }).listen;
    const unlisten =
      typeof listen === 'function'
        ? listen.call(storage, 'meta', ({ payload, local }) => {
            if (local || (payload !== 'emergency_stop' && !payload.startsWith('emergency_stop:user:'))) return;
            const userId = payload === 'emergency_stop' ? undefined : payload.slice('emergency_stop:user:'.length);
            const scope = userId === undefined ? {} : { userId };
            // A user's change reports that user's own state: a global stop it does not touch is not its news.
            (userId === undefined ? tools.emergencyStop.status() : storage.meta.get(payload).then((raw) => (raw === undefined ? { engaged: false, reason: undefined } : tools.emergencyStop.status(scope)))).then(
              (st) => bus.emit('emergency-stop:changed', st.engaged ? { engaged: true, reason: st.reason, ...scope } : { engaged: false, ...scope }),
              (error: unknown) => logger.warn('emergency stop changed on another instance; reading it failed', { error: error instanceof Error ? error.message : String(error) }),
            );
          })
        : undefined;

    return {
      config,
      envLoad,
      modelStatus,
      embedderConfigured: embedder !== undefined,
      storage,
      tools,
      skills,
      skillLoadIssues,
      externalSkills,
      workspace,
      workspaceFor,
      memoryFor,
      memory: memoryFor(userId),
      learningFor,
      learning: learningFor(userId),
      runtime,
      finance,
      mcp,
      background,
      artifacts,
      materializer,
      files,
      admitAutonomousTurn: async () => admit?.(),
      bus,
      logger,
      async close() {
        unlisten?.();
        await background.stop();
        for (const l of learningStores.values()) l.close();
        await mcp?.close();
        await materializer?.close();
        for (const store of stores.values()) await store.close();
        workspace?.close();
        for (const w of tenantWorkspaces.values()) w.close();
        if (ownsStorage) await storage.close();
      },
    };
  } catch (error) {
    await mcp?.close().catch(() => {});
    await materializer?.close().catch(() => {});
    if (ownsStorage) await storage.close().catch(() => {});
    throw error;
  }
}

/** The MCP config createApp uses: the option, else MINARA_MCP_CONFIG, else `<workspace>/mcp.json` when present. */
async function resolveMcpConfig(option: CreateAppOptions['mcp'], env: Readonly<Record<string, string | undefined>>, workspaceDir: string): Promise<McpConfig | undefined> {
  if (option === false) return undefined;
  if (typeof option === 'object') return parseMcpConfig(option, env);
  const file = option ?? env.MINARA_MCP_CONFIG ?? path.join(workspaceDir, 'mcp.json');
  return loadMcpConfigFile(file, env);
}

/** One classifier over several packs': the highest score wins; ties go to the earlier pack. Still at most one. */
function composeScenarios(classifiers: readonly ScenarioClassifier[]): ScenarioClassifier {
  if (classifiers.length === 1) return classifiers[0]!;
  return {
    classify(message, context) {
      let best: ReturnType<ScenarioClassifier['classify']>;
      for (const c of classifiers) {
        const m = c.classify(message, context);
        if (m && (best === undefined || (m.score ?? 0) > (best.score ?? 0))) best = m;
      }
      return best;
    },
  };
}
