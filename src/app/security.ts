import path from 'node:path';
import { createArtifactTools } from '../artifacts/tools';
import { createBacktestTools } from '../backtest/tool';
import { createLearningTools } from '../learning/tools';
import { createMemoryTools } from '../memory/tools';
import { resolveApprovalKey } from '../safety/approval-key';
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
      ...createMemoryTools({ resolveStore: (ctx) => memory.memoryFor(ctx.call.userId ?? userId) }),
      ...(options.learning === false ? [] : createLearningTools({ learningFor: (ctx) => memory.learningFor(ctx.call.userId ?? userId, ctx.call.agentId) })),
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
  if (unlisten) disposers.push(unlisten);
}
