import { definedOnly } from '../util/defined';
import { type AgentBackground, createAgentBackground, type Delivery } from '../background/agent';
import { createWebhookDelivery } from '../background/delivery';
import { createAlertCheckJob } from '../finance/alerts';
import { createWorkflowAutomation, type WorkflowAutomation } from '../background/workflows';
import path from 'node:path';
import { ConfigError } from '../errors/subclasses';
import type { FinancePack } from '../finance/create-finance-pack';
import type { AgentRuntime } from '../runtime/runtime';
import { type AutonomousAdmission, autonomousStopReason, createAutonomousBudget, unreservedAdmission } from '../safety/autonomy-admission';
import type { Storage } from '../storage/types';
import type { ToolRegistry } from '../tools/types';
import type { Workspace } from '../workspace/workspace';
import { MEMORY_EXTRACTION_USAGE_SOURCE } from '../learning/extraction';
import { METHODOLOGY_SYNTHESIS_USAGE_SOURCE } from '../learning/synthesis';
import type { DisposerStack } from './disposers';
import type { AppExtraction } from './extraction';
import { parseDuration, parseHours } from './env-parse';
import { learningJobs } from './learning-jobs';
import type { AppMemory } from './memory';
import type { AppModels } from './models';
import type { AppSettings } from './settings';

/**
 * The usage-ledger sources the daily budget of autonomous spend sums: autonomous turns, and the background passes
 * that call a model on their own (memory extraction, methodology synthesis).
 */
export const AUTONOMOUS_SPEND_SOURCES: readonly string[] = ['heartbeat', 'cron', 'webhook', 'workflow', MEMORY_EXTRACTION_USAGE_SOURCE, METHODOLOGY_SYNTHESIS_USAGE_SOURCE];

/** The background runner and the autonomous-turn budget. */
export interface AppBackground {
  /** Built, not started: the host starts it (`minara serve`, the REPL) with `background.start()`. */
  readonly background: AgentBackground;
  /**
   * Why an autonomous turn for `userId` (default: the app's user) may not start now: the global stop or the user's
   * stop is engaged, or the daily budget is spent; undefined when it may.
   */
  readonly admit: (userId?: string) => Promise<string | undefined>;
  /**
   * Admit one autonomous turn for `userId` (default: the app's user) and reserve its estimated cost against the
   * daily budget until `release()` (call it when the turn ends), so turns started in parallel all count; the
   * admission's `refusal` says why not (a stop, the spent budget).
   */
  readonly reserve: (userId?: string) => Promise<AutonomousAdmission>;
  /** The code and workspace workflows and their stored runs. */
  readonly workflows: WorkflowAutomation;
}

/**
 * The background jobs part: the runner (heartbeat within its active hours, the user's schedule, the purge,
 * dreaming, the learning jobs), the delivery of autonomous answers (the host's `deliver` hook, and a signed
 * webhook when `MINARA_DELIVERY_WEBHOOK_URL` is set) and the daily budget of autonomous turns. The runner is
 * stopped on release.
 */
export function assembleBackground(
  settings: AppSettings,
  parts: {
    readonly storage: Storage; readonly runtime: AgentRuntime; readonly tools: ToolRegistry; readonly workspace: Workspace | undefined; readonly memory: AppMemory; readonly models: AppModels;
    readonly finance: FinancePack | undefined; readonly extraction: AppExtraction;
  },
  disposers: DisposerStack,
): AppBackground {
  const { options, env, logger, bus, now, userId } = settings;
  const { storage, runtime, workspace, memory, finance } = parts;
  const webhookUrl = env.MINARA_DELIVERY_WEBHOOK_URL;
  // Without its secret the webhook delivery starts disabled (models.disabledFeatures warned once): nothing unsigned is sent.
  const toWebhook = webhookUrl && !parts.models.isOff('delivery-webhook') ? createWebhookDelivery({ url: webhookUrl, secret: env.MINARA_DELIVERY_WEBHOOK_SECRET!, storage, now, logger }) : undefined;
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
  const budget = dailyBudgetUsd === undefined
    ? undefined
    : async () => {
        const spent = (await storage.usage.totals({ day: now().toISOString().slice(0, 10), sources: AUTONOMOUS_SPEND_SOURCES })).costUsd;
        return spent >= dailyBudgetUsd ? `daily budget spent: $${spent.toFixed(4)} of $${dailyBudgetUsd.toFixed(2)} on autonomous turns today (UTC)` : undefined;
      };
  // Autonomous turns reserve their estimated cost, so turns in parallel (webhooks, instances) all count.
  const turnBudget = dailyBudgetUsd === undefined ? undefined : createAutonomousBudget({ storage, dailyBudgetUsd, sources: AUTONOMOUS_SPEND_SOURCES, now });
  const reserve = async (forUser: string = userId): Promise<AutonomousAdmission> => {
    const stopped = await autonomousStopReason(parts.tools.emergencyStop, forUser);
    if (stopped !== undefined) {
      logger.warn(`autonomous run skipped: ${stopped}`, { userId: forUser });
      return unreservedAdmission(stopped);
    }
    return turnBudget ? turnBudget.reserve() : unreservedAdmission();
  };
  // A stopped user's autonomous runs are skipped with the reason (stored on the job run and logged), like a spent budget.
  const admit = async (forUser: string = userId): Promise<string | undefined> => {
    const stopped = await autonomousStopReason(parts.tools.emergencyStop, forUser);
    if (stopped !== undefined) {
      logger.warn(`autonomous run skipped: ${stopped}`, { userId: forUser });
      return stopped;
    }
    return budget?.();
  };
  // Workflows: the host's (code) and the workspace's workflows/<name>.yaml, each run stored and claimed once per fleet.
  const workflows = createWorkflowAutomation({
    runtime,
    storage,
    tools: parts.tools,
    workflows: options.workflows ?? [],
    ...(workspace ? { dir: path.join(workspace.dir, 'workflows') } : {}),
    userId,
    ...(options.background?.owner ? { owner: options.background.owner } : {}),
    now,
    logger,
  });
  const heartbeatEnv = env.MINARA_HEARTBEAT_EVERY;
  const activeEnv = env.MINARA_HEARTBEAT_ACTIVE_HOURS;
  const background = createAgentBackground({
    runtime,
    storage,
    workspace,
    userId,
    memoryStores: memory.memoryStores,
    // Tenants not served since the start are purged on the same terms as its stores.
    unservedRetentionDays: memory.retentionDays,
    now,
    logger,
    ...(heartbeatEnv !== undefined && heartbeatEnv.trim() !== '' ? { heartbeatEveryMs: parseDuration(heartbeatEnv, 'MINARA_HEARTBEAT_EVERY') * (parts.models.isOff('heartbeat') ? 0 : 1) } : {}),
    ...(activeEnv !== undefined && activeEnv.trim() !== '' ? { activeHours: parseHours(activeEnv, 'MINARA_HEARTBEAT_ACTIVE_HOURS') } : {}),
    ...definedOnly(options.background),
    jobs: [...(options.background?.jobs ?? []), ...(finance?.jobs ?? []), ...(parts.extraction.job ? [parts.extraction.job] : []), ...learningJobs({ env, learning: memory.learningFor(userId), storage, finance, memory: memory.memoryFor(userId), model: parts.models.backgroundModel, userId, bus, now, logger, admit: () => admit(), prices: options.prices, onDispose: (off) => disposers.push(off) })],
    ...(deliver ? { deliver } : {}),
    admit: () => admit(),
    reserve: () => reserve(),
    workflows,
  });
  // Price alerts: checked against the finance pack's market, each fired once through the same delivery as the turns.
  if (finance?.alerts) {
    background.add(createAlertCheckJob({ storage, market: finance.market, deliver: (d) => background.deliver(d), now, logger, every: finance.alerts.checkEveryMs }));
  }
  disposers.push(() => background.stop());
  return { background, admit, reserve, workflows };
}
