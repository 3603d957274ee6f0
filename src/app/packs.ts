import { definedOnly } from '../util/defined';
import { ConfigError } from '../errors/subclasses';
import type { ArtifactStore } from '../artifacts/types';
import { createResearchPack } from './research-pack';
import path from 'node:path';
import { minaraProvidersFromEnv } from '../finance/adapters/factory';
import { parseDuration } from './env-parse';
import { createFinancePack, type FinancePack } from '../finance/create-finance-pack';
import type { McpTools } from '../mcp/client';
import { loadMcpConfigFile, type McpConfig, parseMcpConfig } from '../mcp/config';
import { mcpToolName } from '../mcp/names';
import type { ScenarioClassifier } from '../runtime/types';
import type { Storage } from '../storage/types';
import type { DisposerStack } from './disposers';
import { readHardConstraints } from './hard-constraints';
import type { AppMemory } from './memory';
import type { AppSettings } from './settings';
import type { AppPack, CreateAppOptions } from './types';

/** The domain packs and MCP servers. */
export interface AppPacks {
  /** The finance pack, unless disabled. */
  readonly finance: FinancePack | undefined;
  /** Every pack in order: finance first (its hooks run first), then the host's. */
  readonly packs: readonly AppPack[];
  /** The MCP connections when any server is configured. */
  readonly mcp: McpTools | undefined;
}

/**
 * The finance and MCP packs part: the finance pack (paper trading on the simulated feed unless env says
 * otherwise; the operator's `hard_constraint.*` entries tighten its limits), the host's packs, and the MCP
 * servers' tools, connected only when configured (so the optional SDK is never needed otherwise). MCP
 * connections are closed on release.
 */
export async function assemblePacks(settings: AppSettings, storage: Storage, memory: AppMemory, disposers: DisposerStack): Promise<AppPacks> {
  const { options, env, config, logger, now, userId } = settings;
  let finance: FinancePack | undefined;
  if (options.finance !== false) {
    const minara = minaraProvidersFromEnv(env);
    // Price alerts are checked every MINARA_ALERTS_CHECK_EVERY (default 1m; 0 turns alerts off).
    const alertsEnv = env.MINARA_ALERTS_CHECK_EVERY?.trim();
    const alertsEvery = alertsEnv ? parseDuration(alertsEnv, 'MINARA_ALERTS_CHECK_EVERY') : 60_000;
    // MINARA_TRADING_MODE (or finance.tradingMode) decides; the older MINARA_TRADING=live keeps its meaning (live when a key is set).
    // A mode from the environment without the live adapter starts on paper (feature-gates.ts warned once); the
    // option without a provider is the finance pack's ConfigError.
    const hostProvider = options.finance && options.finance.provider !== undefined && options.finance.provider !== 'paper';
    const fromEnv = tradingModeOf(undefined, env, { explicitOnly: true });
    // Shadow mode from the environment without the live adapter runs against the simulated market (labelled so).
    const explicit = (options.finance ? options.finance.tradingMode : undefined) ?? (fromEnv === 'live' && !minara.provider && !hostProvider ? undefined : fromEnv);
    const live = explicit !== undefined ? explicit !== 'paper' : env.MINARA_TRADING === 'live';
    finance = createFinancePack({
      storage,
      now,
      logger,
      ...(minara.market ? { market: minara.market } : {}),
      ...(minara.provider && live ? { provider: minara.provider } : {}),
      ...(explicit !== undefined ? { tradingMode: explicit } : {}),
      preferences: () => readHardConstraints(memory.memoryFor(userId)),
      alerts: alertsEvery === 0 ? false : { checkEveryMs: alertsEvery, defaultUserId: userId },
      // An option left undefined keeps what env and defaults resolved (tradingMode: undefined is not "live").
      ...definedOnly(options.finance),
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

  let mcp: McpTools | undefined;
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
          durationMs: 0, argsJson: JSON.stringify({ target: 'tool', server: f.server, tool: f.tool, pattern: f.pattern }), kind: 'input_flag',
        }),
    });
    const connected = mcp;
    disposers.push(() => connected.close());
  }
  return { finance, packs, mcp };
}

/**
 * The trading mode: the option, else `MINARA_TRADING_MODE` (`paper`, `live`, `shadow`), else `live` when the older
 * `MINARA_TRADING=live` is set, else `paper`. An unknown value throws `ConfigError` naming the variable.
 */
export function tradingModeOf(option: 'paper' | 'live' | 'shadow' | undefined, env: Readonly<Record<string, string | undefined>>, how: { readonly explicitOnly: true }): 'paper' | 'live' | 'shadow' | undefined;
export function tradingModeOf(option: 'paper' | 'live' | 'shadow' | undefined, env: Readonly<Record<string, string | undefined>>): 'paper' | 'live' | 'shadow';
export function tradingModeOf(option: 'paper' | 'live' | 'shadow' | undefined, env: Readonly<Record<string, string | undefined>>, how?: { readonly explicitOnly: true }): 'paper' | 'live' | 'shadow' | undefined {
  if (option !== undefined) return option;
  const raw = env.MINARA_TRADING_MODE?.trim();
  if (raw !== undefined && raw !== '') {
    if (raw === 'paper' || raw === 'live' || raw === 'shadow') return raw;
    throw new ConfigError(`MINARA_TRADING_MODE: expected paper, live or shadow, got ${JSON.stringify(raw)}`, ['MINARA_TRADING_MODE']);
  }
  if (how?.explicitOnly) return undefined;
  return env.MINARA_TRADING === 'live' ? 'live' : 'paper';
}

/**
 * The research part, once artifacts exist: web search, the code sandbox, deep research and the session tools
 * (`createResearchPack`), appended after the finance pack and the host's packs; its sandbox worker is released
 * with the rest.
 */
export function withResearchPack(settings: AppSettings, storage: Storage, memory: AppMemory, artifacts: ArtifactStore | undefined, packs: AppPacks, disposers: DisposerStack): AppPacks {
  const { options, env, userId } = settings;
  const research = createResearchPack({
    env, storage, options: options.research, urlPolicy: options.web || {}, artifacts, userId,
    ...(options.learning === false ? {} : { learningFor: (ctx) => memory.learningFor(ctx.call.userId ?? userId, ctx.call.agentId) }),
  });
  const all = [...packs.packs, research];
  for (const p of all) {
    const close = p.close;
    if (close) disposers.push(() => close().catch((error: unknown) => settings.logger.warn('pack close failed', { error: error instanceof Error ? error.message : String(error) })));
  }
  return { ...packs, packs: all };
}

/** The MCP config createApp uses: the option, else MINARA_MCP_CONFIG, else `<workspace>/mcp.json` when present. */
async function resolveMcpConfig(option: CreateAppOptions['mcp'], env: Readonly<Record<string, string | undefined>>, workspaceDir: string): Promise<McpConfig | undefined> {
  if (option === false) return undefined;
  if (typeof option === 'object') return parseMcpConfig(option, env);
  const file = option ?? env.MINARA_MCP_CONFIG ?? path.join(workspaceDir, 'mcp.json');
  return loadMcpConfigFile(file, env);
}

/** One classifier over several packs': the highest score wins; ties go to the earlier pack. Still at most one. */
export function composeScenarios(classifiers: readonly ScenarioClassifier[]): ScenarioClassifier {
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
