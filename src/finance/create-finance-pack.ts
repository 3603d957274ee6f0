import { ConfigError } from '../errors/subclasses';
import { createEmergencyStop } from '../safety/emergency-stop';
import type { Skill } from '../skills/types';
import type { Storage } from '../storage/types';
import type { EmergencyStopApi, ToolEntry, ToolHook, ToolRegistry } from '../tools/types';
import { type Logger, silentLogger } from '../util/logger';
import type { FinanceDeps } from './context';
import { createLimitsResolver, type FinanceLimits, type PreferenceReader, resolveFinanceLimits } from './limits';
import { isStableLike, type PaperCosts } from './paper-accounting';
import { createPaperTradingProvider } from './paper-provider';
import { createPerpsTools } from './perps-tools';
import { createReadTools } from './read-tools';
import { createAuditedHooks } from './safety/index';
import { createScenarioClassifier, type ScenarioClassifier } from './scenario-classifier';
import type { ScenarioDefinition } from './scenarios';
import { createSimulatedMarket } from './simulated-market';
import { createFinanceSkills } from './skills';
import { createShadowTradingProvider, type ShadowTradingProvider } from './shadow-provider';
import { createShadowReport, type ShadowReport } from './shadow-report';
import { createShadowReportTool } from './shadow-tool';
import { createTradeTools } from './trade-tools';
import { createEmergencyStopTool, createTransferTools } from './transfer-tools';
import type { MarketDataProvider, TradingProvider } from './types';
import { createAccountTools } from './account-tools';
import { createAlertTool } from './alerts';
import { type Autopilot, type AutopilotJob, createAutopilot } from './autopilot';

/** Options of {@link createFinancePack}. */
export interface FinancePackOptions {
  /** Holds the paper books (`storage.trading`), the emergency-stop flag and the safety audit rows. */
  readonly storage: Storage;
  /** `'paper'` (the embedded paper provider on `storage.trading`) or a real {@link TradingProvider}. @default 'paper' */
  readonly provider?: 'paper' | TradingProvider | undefined;
  /**
   * `paper` (the paper provider), `live` (orders to `provider`), or `shadow`: market data and previews from the live
   * `provider` and `market`, orders filled in a paper book on the live market (account `shadow`, or `seed.accountId`),
   * recorded as shadow; adds the `shadow_report` tool and `pack.shadowReport()`. @default 'paper' with
   * `provider: 'paper'`, else 'live'
   */
  readonly tradingMode?: 'paper' | 'live' | 'shadow' | undefined;
  /** Market data. @default the simulated feed (deterministic for `seed.market`) */
  readonly market?: MarketDataProvider | undefined;
  /** Risk limits over the defaults (validated; bad fields throw ConfigError naming them). */
  readonly limits?: Partial<FinanceLimits> | undefined;
  /** Reads `hard_constraint` preferences; merged field by field, stricter value wins. */
  readonly preferences?: PreferenceReader | undefined;
  /** Paper account and simulated market seeding. */
  readonly seed?: {
    /** Simulated market seed. @default 42 */
    readonly market?: number | undefined;
    /** Opening balances of a new paper account. @default { USDC: 10000 } */
    readonly balances?: Readonly<Record<string, number>> | undefined;
    /** Paper account id. @default 'paper' */
    readonly accountId?: string | undefined;
  } | undefined;
  /** Paper fees. @default 10 bps spot, 5 bps perps, 2 bps spread */
  readonly paperCosts?: Partial<PaperCosts> | undefined;
  /** Block fund-moving executions that state no `intent`. @default true */
  readonly requireIntent?: boolean | undefined;
  /** Emergency-stop handle; `attach(registry)` replaces it with the registry's. @default one over `storage` */
  readonly emergencyStop?: EmergencyStopApi | undefined;
  /**
   * Autopilot strategies (DCA, grid): the `autopilot_*` tools and the `finance:autopilot` background job that places
   * their orders through the registry; `false` for none. @default on, ticking every minute
   */
  readonly autopilot?: false | { readonly tickMs?: number | undefined; readonly maxFailures?: number | undefined } | undefined;
  /**
   * Price alerts: the `alert_request` tool (`createAlertTool`), checked by the `alerts:check` job (`createAlertCheckJob`,
   * which the host runs: `createApp` adds it to `app.background` every `checkEveryMs`). `false`: no alert tool.
   * @default on, checked every 60000 ms, for the user `defaultUserId` ('default') when a call names none
   */
  readonly alerts?: false | { readonly checkEveryMs?: number | undefined; readonly defaultUserId?: string | undefined } | undefined;
  /** Extra or replacement scenarios. @default FINANCE_SCENARIOS */
  readonly scenarios?: readonly ScenarioDefinition[] | undefined;
  readonly now?: (() => Date) | undefined;
  readonly logger?: Logger | undefined;
}

/** What {@link createFinancePack} returns: everything to register. */
export interface FinancePack {
  /** Tools for `createToolRegistry({ tools })`. */
  readonly tools: readonly ToolEntry[];
  /** The safety stack, for `createToolRegistry({ hooks })` (before any host hook that may loosen nothing anyway). */
  readonly hooks: readonly ToolHook[];
  /** Skills for `createSkillRegistry({ skills })`. */
  readonly skills: readonly Skill[];
  /** The L0.5 scenario classifier, for `createAgentRuntime({ scenarios })`. */
  readonly scenarios: ScenarioClassifier;
  readonly market: MarketDataProvider;
  readonly trading: TradingProvider;
  /** Limits in force now (config tightened by preferences). */
  limits(): Promise<FinanceLimits>;
  /** The autopilot (strategies and their job); undefined when `autopilot: false`. */
  readonly autopilot: Autopilot | undefined;
  /** Background jobs for the runner (`createApp` adds them to `app.background`): the autopilot's. */
  readonly jobs: readonly AutopilotJob[];
  /** Price alerts, when on: how often the host should run `createAlertCheckJob` (the tool tells the user). */
  readonly alerts: { readonly checkEveryMs: number } | undefined;
  /** How orders are placed: `paper`, `live` or `shadow`. */
  readonly tradingMode: 'paper' | 'live' | 'shadow';
  /**
   * In shadow mode, which market the shadow book trades against: `live` (the live adapter's) or `simulated` (no live
   * adapter: the offline simulated market, a try-out; every report says so). Undefined outside shadow mode.
   */
  readonly shadowMarket: 'live' | 'simulated' | undefined;
  /** In shadow mode: the shadow fills against what the market did since (see {@link createShadowReport}). */
  readonly shadowReport: ((options?: { readonly since?: string | undefined }) => Promise<ShadowReport>) | undefined;
  /** Use the registry's emergency-stop API (same storage flag, plus its bus events). Returns the registry. */
  attach<R extends ToolRegistry>(registry: R): R;
}

/**
 * The finance domain: read, trade, perps, transfer and emergency-stop tools over injectable market and
 * trading providers (offline paper trading by default), the six-stage safety stack as before-hooks, the
 * built-in skills and the scenario classifier.
 *
 * @example
 * ```ts
 * import { createToolRegistry, createSkillRegistry } from '@minara/agent';
 * import { createFinancePack } from '@minara/agent/finance';
 * import { createSqliteStorage } from '@minara/agent/sqlite';
 *
 * const storage = createSqliteStorage({ path: 'data/minara.db' });
 * const finance = createFinancePack({ storage, limits: { maxTradeUsd: 1000 } });
 * const tools = finance.attach(createToolRegistry({ tools: finance.tools, hooks: finance.hooks, storage }));
 * const skills = createSkillRegistry({ skills: finance.skills, tools });
 * const preview = await tools.dispatch('buy_token', { symbol: 'ETH', amountUsd: 50, intent: 'buy 50 USD of ETH' });
 * ```
 */
export function createFinancePack(options: FinancePackOptions): FinancePack {
  if (!options || typeof options !== 'object' || !options.storage) throw new ConfigError('createFinancePack: options.storage is required', ['storage']);
  const { storage, provider = 'paper', seed = {}, requireIntent = true, now = () => new Date(), logger = silentLogger } = options;
  const configLimits = resolveFinanceLimits(options.limits);
  const market = options.market ?? createSimulatedMarket({ seed: seed.market ?? 42, now });
  const tradingMode = options.tradingMode ?? (provider === 'paper' ? 'paper' : 'live');
  if (!['paper', 'live', 'shadow'].includes(tradingMode)) throw new ConfigError(`createFinancePack: tradingMode must be 'paper', 'live' or 'shadow', got ${JSON.stringify(tradingMode)}`, ['tradingMode']);
  if (tradingMode === 'live' && provider === 'paper') {
    throw new ConfigError(`createFinancePack: tradingMode 'live' needs the live adapter as provider (and its market): set MINARA_API_KEY, or pass provider and market`, ['provider']);
  }
  // Shadow mode without a live adapter runs against the simulated market: a try-out, labelled as such everywhere.
  const shadowMarket: 'live' | 'simulated' | undefined = tradingMode !== 'shadow' ? undefined : provider === 'paper' ? 'simulated' : 'live';
  if (tradingMode === 'paper' && provider !== 'paper') throw new ConfigError(`createFinancePack: tradingMode 'paper' uses the paper provider; drop provider or choose 'live' or 'shadow'`, ['tradingMode']);
  let trading: TradingProvider;
  let shadow: ShadowTradingProvider | undefined;
  if (tradingMode === 'shadow') {
    if (!storage.trading) throw new ConfigError('createFinancePack: storage has no trading domain (update the storage engine)', ['storage']);
    let quotes: TradingProvider;
    if (provider === 'paper') {
      // Quotes from a paper venue on the simulated market (its own account, never traded).
      quotes = createPaperTradingProvider({ trading: storage.trading, market, now, accountId: `${seed.accountId ?? 'shadow'}-quotes`, seedBalances: seed.balances, costs: options.paperCosts });
    } else {
      if (!options.market) throw new ConfigError("createFinancePack: tradingMode 'shadow' with a live provider needs its market (market data from the live adapter)", ['market']);
      if (typeof provider !== 'object' || typeof provider.quoteSpot !== 'function') throw new ConfigError(`createFinancePack: provider must be a TradingProvider in shadow mode`, ['provider']);
      quotes = provider;
    }
    shadow = createShadowTradingProvider({
      live: quotes, market, trading: storage.trading, now, accountId: seed.accountId ?? 'shadow', seedBalances: seed.balances, costs: options.paperCosts,
    });
    trading = shadow;
  } else if (provider === 'paper') {
    if (!storage.trading) throw new ConfigError('createFinancePack: storage has no trading domain (update the storage engine)', ['storage']);
    trading = createPaperTradingProvider({
      trading: storage.trading, market, now, accountId: seed.accountId, seedBalances: seed.balances, costs: options.paperCosts,
    });
  } else if (provider && typeof provider === 'object' && typeof provider.executeSpot === 'function') trading = provider;
  else throw new ConfigError(`createFinancePack: provider must be 'paper' or a TradingProvider`, ['provider']);

  let stop: EmergencyStopApi = options.emergencyStop ?? createEmergencyStop({ storage, now });
  const deps: FinanceDeps = {
    market,
    trading,
    configLimits,
    limits: createLimitsResolver(configLimits, options.preferences),
    emergencyStop: () => stop,
    isStable: (s) => isStableLike(s),
    requireIntent,
    now,
  };

  let attached: ToolRegistry | undefined;
  const autopilot = options.autopilot === false ? undefined : createAutopilot({ deps, storage, registry: () => attached, logger, ...options.autopilot });
  const tools: ToolEntry[] = [
    ...createReadTools(deps),
    ...createAccountTools(deps),
    ...createTradeTools(deps),
    ...createPerpsTools(deps),
    ...createTransferTools(deps),
    createEmergencyStopTool(deps),
    ...(autopilot?.tools ?? []),
  ];
  const alerts = options.alerts === false ? undefined : { checkEveryMs: options.alerts?.checkEveryMs ?? 60_000 };
  if (alerts) tools.push(createAlertTool({ storage, market, now, checkEveryMs: alerts.checkEveryMs, ...(options.alerts && options.alerts.defaultUserId ? { defaultUserId: options.alerts.defaultUserId } : {}) }));
  const book = shadow;
  const shadowReport = book
    ? (o: { readonly since?: string | undefined } = {}) =>
        createShadowReport({ trading: storage.trading, provider: book, market, accountId: book.accountId, now, marketKind: shadowMarket ?? 'live', ...(o.since !== undefined ? { since: o.since } : {}) })
    : undefined;
  if (shadowReport) tools.push(createShadowReportTool(shadowReport));
  const own = new Set<ToolEntry>(tools);
  const hooks = createAuditedHooks(deps, (t) => own.has(t), storage, now, logger);
  const skills = createFinanceSkills(new Set(tools.map((t) => t.name)));

  return {
    tools,
    hooks,
    skills,
    scenarios: createScenarioClassifier({ scenarios: options.scenarios }),
    market,
    trading,
    limits: deps.limits,
    autopilot,
    jobs: autopilot ? [autopilot.job] : [],
    alerts,
    tradingMode,
    shadowMarket,
    shadowReport,
    attach(registry) {
      stop = registry.emergencyStop;
      attached = registry;
      return registry;
    },
  };
}
