import type { AutonomousAdmission } from '../safety/autonomy-admission';
import type { UntrustedContentPolicy } from '../safety/untrusted';
import type { AuditIntegrity, AuditIntegrityOptions } from '../safety/audit-integrity';
import type { BreakerLimits } from '../safety/breaker-rules';
import type { DisabledFeature } from './feature-gates';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { EmbeddingModel, LanguageModel } from 'ai';
import type { ArtifactMaterializer } from '../artifacts/materializer';
import type { ArtifactStore, ArtifactStoreOptions } from '../artifacts/types';
import type { AgentBackground, AgentBackgroundOptions } from '../background/agent';
import type { WorkflowAutomation } from '../background/workflows';
import type { MinaraConfig, MinaraConfigInput } from '../config/config';
import type { LoadEnvResult } from '../config/load-env';
import type { MinaraBus } from '../events/bus';
import type { FinancePack, FinancePackOptions } from '../finance/create-finance-pack';
import type { FileStore } from '../files/types';
import type { MemoryExtractionMode, MemoryExtractor } from '../learning/extraction';
import type { LearningStore, LearningStoreOptions } from '../learning/types';
import type { ModelPrice } from '../llm/pricing';
import type { ModelConfigStatus } from '../llm/resolve-model';
import type { McpTools } from '../mcp/client';
import type { McpConfig } from '../mcp/config';
import type { MemoryStore } from '../memory/types';
import type { AgentRuntime } from '../runtime/runtime';
import type { AgentRuntimeOptions, ScenarioClassifier } from '../runtime/types';
import type { WorkflowDefinition } from '../runtime/workflows';
import type { ExternalSkillsManager } from '../skills/external';
import type { SkillRegistry } from '../skills/registry';
import type { SkillLoadIssue } from '../skills/skill-md';
import type { Skill, SkillDefinition } from '../skills/types';
import type { Storage } from '../storage/types';
import type { BrowserToolsOptions } from '../tools/browser-tools';
import type { WebSearchProvider } from '../tools/search-providers';
import type { UrlPolicyOptions } from '../tools/url-policy';
import type { CodeSandbox, QuickJsSandboxOptions } from '../research/quickjs-sandbox';
import type { ToolEntry, ToolHook, ToolRegistry } from '../tools/types';
import type { WebToolsOptions } from '../tools/web-tools';
import type { Logger } from '../util/logger';
import type { Workspace } from '../workspace/workspace';

/** What a domain pack contributes (the finance pack is one). */
export interface AppPack {
  readonly tools?: readonly ToolEntry[] | undefined;
  readonly hooks?: readonly ToolHook[] | undefined;
  readonly skills?: ReadonlyArray<Skill | SkillDefinition> | undefined;
  readonly scenarios?: ScenarioClassifier | undefined;
  /** Called once the registry exists (e.g. to hand the pack the emergency-stop handle). */
  readonly attach?: ((registry: ToolRegistry) => void) | undefined;
  /** Called once the skill registry exists (e.g. for a tool that recommends skills). */
  readonly attachSkills?: ((skills: SkillRegistry) => void) | undefined;
  /** Called by `app.close()` (e.g. to stop a worker the pack started). */
  readonly close?: (() => Promise<void>) | undefined;
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
  /**
   * The audit trail's integrity: links keyed with a key derived from the approval key (or `MINARA_AUDIT_KEY`),
   * and signed checkpoints to `<dataDir>/audit-checkpoints.jsonl` plus these sinks, every `checkpointEveryRows`
   * rows (`MINARA_AUDIT_CHECKPOINT_ROWS`, default 1000), every `checkpointEverySeconds` seconds
   * (`MINARA_AUDIT_CHECKPOINT_SECONDS`, default 60) and at close; `MINARA_AUDIT_CHECKPOINT_URL` adds an HTTP
   * sink. `false` takes no checkpoints and leaves the links to the tool registry (keyed with the approval key).
   */
  readonly auditIntegrity?: Pick<AuditIntegrityOptions, 'sinks' | 'checkpointEveryRows' | 'checkpointEverySeconds' | 'instance'> | false | undefined;
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
  /**
   * Days a soft-deleted memory is kept before the background purge deletes it for good (every tenant's store,
   * and tenants this process has not served). From 0 (the next purge) to 36,500.
   * @default 30, or `MEMORY_SOFT_DELETE_RETENTION_DAYS`
   */
  readonly softDeleteRetentionDays?: number | undefined;
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
  /**
   * What untrusted content (web pages, search results, MCP tool results, webhook payloads, uploads) changes once it
   * entered a conversation: grants stop covering fund-moving calls, MANUAL_ONLY calls are refused, an MCP host may not
   * write learnings (docs/safety.md, "Untrusted content"). A bad value throws `CONFIG_INVALID` naming the field.
   * @default `DEFAULT_UNTRUSTED_CONTENT_POLICY` (all three on)
   */
  readonly untrustedContent?: UntrustedContentPolicy | undefined;
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
  /** The `backtest` tool set (`run_backtest` on seeded synthetic bars, its report as artifacts; docs/backtest.md), or `false` for none. @default on when artifacts are */
  readonly backtest?: false | undefined;
  /** Web search, the code sandbox, deep research and the baseline tools (docs/tools.md), or `false` for none. @default from env */
  readonly research?: ResearchPackOptions | false | undefined;
  /** Prices per model id (USD per million tokens), merged over `DEFAULT_MODEL_PRICES`; every turn's cost goes to `storage.usage`. */
  readonly prices?: Readonly<Record<string, ModelPrice>> | undefined;
  /**
   * USD autonomous turns (heartbeat, schedule) may spend per UTC day; once spent they are skipped, saying why. User
   * turns are never stopped. @default `MINARA_DAILY_BUDGET_USD`, else no budget
   */
  readonly dailyBudgetUsd?: number | undefined;
  /**
   * Per-user circuit breakers (docs/operations.md): limits over `DEFAULT_BREAKER_LIMITS` and the equity source of
   * the drawdown rule, or `false` for none. @default on: the env's `MINARA_BREAKER_*` limits, equity from the
   * finance pack's portfolio (`MINARA_BREAKERS=off` turns them off)
   */
  readonly breakers?: false | { readonly limits?: Partial<BreakerLimits> | undefined; readonly equity?: ((userId: string) => Promise<number | undefined>) | undefined } | undefined;
  /**
   * The learning loop (docs/learning.md): decision capture and outcome attribution after every turn, learned
   * methodologies and preferences in the dynamic prompt tail, preference graduation before each turn; `false`
   * turns it off. @default on, with the thresholds of NOTES.md §8
   */
  /**
   * Memory from conversations (docs/learning.md#memory-from-conversations): after each user turn the message is
   * queued, and a background pass asks the utility model for durable facts and preferences the user stated and
   * records them as `chat_extracted` memories. `after_turn` drains the queue every `MEMORY_EXTRACTION_EVERY`
   * (1m); `nightly` once a day at 03:00 UTC; `off` queues nothing. Without a model it is skipped (one log line).
   * @default `MEMORY_EXTRACTION`, else `nightly`
   */
  readonly memoryExtraction?: MemoryExtractionMode | undefined;
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
  /**
   * Workflows defined in code (docs/autonomy.md#workflows), beside the workspace's `workflows/<name>.yaml`: run by a
   * HEARTBEAT.md `## Schedule` entry (`- every 1h: workflow <name>`), a signed webhook, `minara workflows start`, or
   * `app.workflows.trigger(name)`, each run stored. @default none
   */
  readonly workflows?: readonly WorkflowDefinition[] | undefined;
  /**
   * How long `app.close()` waits for running turns (and the work kept open after them, such as a webhook run's
   * record) before aborting them; storage closes only after. @default 10000 (`DEFAULT_RUNTIME_CLOSE_TIMEOUT_MS`)
   */
  readonly closeTimeoutMs?: number | undefined;
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
  /**
   * Features the configuration turned on that started disabled because something they need is missing (a
   * model, a key, a secret), each with the one warning logged at start; `minara doctor` lists them. Empty when
   * everything that is on has what it needs.
   */
  readonly disabledFeatures: readonly DisabledFeature[];
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
  /**
   * Memory from conversations: the mode (`MEMORY_EXTRACTION`) and the pass, undefined when off or without a model
   * (`memoryExtraction.extractor.run()` drains the queue now; the background job `memory:extraction` does it on its schedule).
   */
  readonly memoryExtraction: { readonly mode: MemoryExtractionMode; readonly extractor: MemoryExtractor | undefined };
  readonly runtime: AgentRuntime;
  /** The finance pack, unless disabled. */
  readonly finance: FinancePack | undefined;
  /** The MCP connections when any server is configured (`status()`, `close()`); their tools are in `tools`. */
  readonly mcp: McpTools | undefined;
  /** The background runner (heartbeat, the user's schedule, maintenance); built, not started. */
  readonly background: AgentBackground;
  /** Keyed links, signed checkpoints, verification and proofs of the audit trail (undefined with `auditIntegrity: false`). */
  readonly auditIntegrity: AuditIntegrity | undefined;
  /** The artifact store (charts, reports, spreadsheets); undefined when `artifacts: false`. */
  readonly artifacts: ArtifactStore | undefined;
  /** The file store of uploads (`<dataDir>/files`); undefined when `files: false`. */
  readonly files: FileStore | undefined;
  /** Writes `<dataDir>/artifacts/<id>/` for the URIs in each final message (a turn-end hook); undefined when `artifacts: false`. */
  readonly materializer: ArtifactMaterializer | undefined;
  /** The workflows (code and workspace) and their stored runs: `list()`, `trigger(name)`, `runs()`, `getRun(id)`. */
  readonly workflows: WorkflowAutomation;
  /**
   * Why an autonomous turn for the user (default: the app's user) may not start now: the global stop or the user's
   * stop is engaged, or the daily budget is spent; undefined when it may.
   */
  admitAutonomousTurn(context?: { readonly userId?: string | undefined }): Promise<string | undefined>;
  /**
   * Admit one autonomous turn for the user (default: the app's user) and reserve its estimated cost against the
   * daily budget (`MINARA_DAILY_BUDGET_USD`) until `release()`, so turns started in parallel (webhooks, instances)
   * all count; `refusal` says why not. Call `release()` when the turn ends, ok or not.
   */
  reserveAutonomousTurn(context?: { readonly userId?: string | undefined }): Promise<AutonomousAdmission>;
  readonly bus: MinaraBus;
  readonly logger: Logger;
  /** Close memory stores, the workspace and storage (if the app opened it). */
  close(): Promise<void>;
}

/**
 * Options of the research pack `createApp` adds (`CreateAppOptions.research`): web search, the code sandbox,
 * deep research and the baseline tools. Every part can be turned off with `false`.
 */
export interface ResearchPackOptions {
  /**
   * The `web_search` provider, or `false` for none. @default `webSearchProviderFromEnv(env)`: `MINARA_WEB_SEARCH`,
   * else the first of `BRAVE_API_KEY`, `TAVILY_API_KEY`, `SEARXNG_URL`; absent when none is set
   */
  readonly webSearch?: WebSearchProvider | false | undefined;
  /** Searches per turn. @default 8 */
  readonly maxSearchesPerTurn?: number | undefined;
  /**
   * `run_code`: the JavaScript sandbox's limits (or another sandbox), the Python sandbox, or `false` for no tool.
   * @default QuickJS (WebAssembly) for JavaScript; Python on e2b when `E2B_API_KEY` is set (`E2B_API_URL` or
   * `E2B_DOMAIN` move the endpoint)
   */
  /** The baseline session tools `clarify`, `todo` and `recommend_features`; `false` for none. @default on */
  readonly sessionTools?: boolean | undefined;
  /**
   * The research skills (`deep-research`, `analysis`, `code-analysis`, `memory.alerts`) and their tools
   * (`create_research_report`, `methodology_lens`; `memory.alerts` uses the finance pack's `alert_request`); `false` for
   * none. A SKILL.md with the same id wins.
   * @default on
   */
  readonly skills?: boolean | undefined;
  readonly runCode?: false | (QuickJsSandboxOptions & { readonly sandbox?: CodeSandbox | undefined; readonly python?: CodeSandbox | false | undefined }) | undefined;
}
