import { definedOnly } from '../util/defined';
import path from 'node:path';
import { createArtifactTools } from '../artifacts/tools';
import { createBacktestTools } from '../backtest/tool';
import { createLearningTools } from '../learning/tools';
import { createMemoryTools } from '../memory/tools';
import { resolveApprovalKey } from '../safety/approval-key';
import { DEFAULT_GRANT_MAX_LIFETIME_MS, type GrantBounds } from '../safety/grant-input';
import { ConfigError } from '../errors/subclasses';
import type { Storage } from '../storage/types';
import { createBrowserTools } from '../tools/browser-tools';
import { createFileTools } from '../tools/file-tools';
import { createToolRegistry } from '../tools/registry';
import type { ToolRegistry } from '../tools/types';
import { createWebTools } from '../tools/web-tools';
import type { AppArtifacts } from './artifacts';
import { resolveBreakers } from './breakers';
import type { DisposerStack } from './disposers';
import type { AppMemory } from './memory';
import type { AppPacks } from './packs';
import type { AppSettings } from './settings';

/**
 * The security part: the approval key (kept outside the database), and the tool registry, the one path that
 * runs a tool, with its approvals, grants and emergency stop. Its tools: the built-in factories (files, web,
 * browser, memory, learning, artifacts), the packs', the MCP servers', the host's; its hooks: the packs' first,
 * then the host's. Each pack is then handed the registry.
 */
export function assembleSecurity(
  settings: AppSettings,
  storage: Storage,
  parts: { readonly memory: AppMemory; readonly packs: AppPacks; readonly artifacts: AppArtifacts },
): ToolRegistry {
  const { options, env, config, logger, bus, now, userId } = settings;
  const { memory, artifacts } = parts;
  const { packs, mcp } = parts.packs;
  const approvalKey = options.approvalKey ?? resolveApprovalKey({ env, dataDir: config.dataDir }).key;
  const tools = createToolRegistry({
    storage,
    approvalKey,
    bus,
    logger,
    now,
    audit: config.audit,
    breakers: resolveBreakers(settings, storage, parts.packs),
    untrustedContent: options.untrustedContent,
    grantBounds: grantBoundsFor(env, parts.packs),
    hooks: [...packs.flatMap((p) => p.hooks ?? []), ...(options.hooks ?? [])],
    tools: [
      ...createFileTools({ root: path.join(config.dataDir, 'sandbox', 'files') }),
      ...(options.web === false ? [] : createWebTools(options.web ?? {})),
      ...(options.browser === false
        ? []
        : createBrowserTools({
          env,
          ...(options.web ? { ...(options.web.allowHosts ? { allowHosts: options.web.allowHosts } : {}), ...(options.web.denyHosts ? { denyHosts: options.web.denyHosts } : {}) } : {}),
          ...definedOnly(options.browser),
        })),
      ...createMemoryTools({ resolveStore: (ctx) => memory.memoryFor(ctx.call.userId ?? userId), mcpHostLearning: options.untrustedContent?.mcpHostLearning === true }),
      ...(options.learning === false ? [] : createLearningTools({ learningFor: (ctx) => memory.learningFor(ctx.call.userId ?? userId, ctx.call.agentId), mcpHostLearning: options.untrustedContent?.mcpHostLearning === true })),
      ...(artifacts.artifacts ? createArtifactTools({ store: artifacts.artifacts, defaultUserId: userId }) : []),
      ...(artifacts.artifacts && options.backtest !== false ? createBacktestTools({ artifacts: artifacts.artifacts, defaultUserId: userId }) : []),
      ...packs.flatMap((p) => p.tools ?? []),
      ...(mcp?.tools ?? []),
      ...(options.tools ?? []),
    ],
  });
  for (const p of packs) p.attach?.(tools);
  return tools;
}

/**
 * What a stored grant may allow in this app: the finance limits the operator set (`maxTradeUsd` per call,
 * `maxTotalExposureUsd` per day, read at each create so they follow a change) and `MINARA_GRANT_MAX_DAYS`
 * (default 90) as the longest lifetime.
 */
export function grantBoundsFor(env: Readonly<Record<string, string | undefined>>, packs: Pick<AppPacks, 'finance'>): () => Promise<GrantBounds> {
  const raw = env.MINARA_GRANT_MAX_DAYS?.trim();
  let maxLifetimeMs = DEFAULT_GRANT_MAX_LIFETIME_MS;
  if (raw !== undefined && raw !== '') {
    const n = Number(raw);
    if (!(Number.isFinite(n) && n > 0 && n <= 3650)) throw new ConfigError(`MINARA_GRANT_MAX_DAYS: expected a number of days from 1 to 3650, got ${JSON.stringify(raw)}`, ['MINARA_GRANT_MAX_DAYS']);
    maxLifetimeMs = Math.round(n * 86_400_000);
  }
  const finance = packs.finance;
  return async () => {
    if (!finance) return { maxLifetimeMs };
    const limits = await finance.limits();
    return { maxCapPerCallUsd: limits.maxTradeUsd, maxCapPerDayUsd: limits.maxTotalExposureUsd, maxLifetimeMs };
  };
}

/**
 * The last part, the fleet's emergency stop: on PostgreSQL, a stop engaged or released on another instance
 * reaches this bus at once (LISTEN/NOTIFY; polled on PGlite). The tier gate itself reads the flag from the
 * database on every call. The listener is removed first on release.
 */
export function listenForFleetStop(settings: AppSettings, storage: Storage, tools: ToolRegistry, disposers: DisposerStack): void {
  const { bus, logger } = settings;
  const listen = (storage as { listen?: (channel: string, fn: (change: { payload: string; local: boolean }) => void) => () => void }).listen;
  const unlisten =
    typeof listen === 'function'
      ? listen.call(storage, 'meta', ({ payload, local }) => {
          const user = /^emergency_stop:(?:user|self):(.+)$/.exec(payload);
          if (local || (payload !== 'emergency_stop' && !user)) return;
          const userId = user?.[1];
          const scope = userId === undefined ? {} : { userId };
          // A user's change reports that user's own state: a global stop it does not touch is not its news.
          (userId === undefined ? tools.emergencyStop.status() : tools.emergencyStop.userStatus(userId)).then(
            (st) => bus.emit('emergency-stop:changed', st.engaged ? { engaged: true, reason: st.reason, ...scope } : { engaged: false, ...scope }),
            (error: unknown) => logger.warn('emergency stop changed on another instance; reading it failed', { error: error instanceof Error ? error.message : String(error) }),
          );
        })
      : undefined;
  if (unlisten) disposers.push(unlisten);
}
