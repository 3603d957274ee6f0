/**
 * The autopilot's tools: `autopilot_start`, `autopilot_modify` (both need the user's approval), `autopilot_stop`
 * and `autopilot_list`. They store a plan and its grants; they never trade (the job in `autopilot-tick.ts` does).
 */
import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import { defineTool } from '../tools/define-tool';
import type { ToolEntry, ToolExecutionContext } from '../tools/types';
import { generateId } from '../util/ids';
import {
  type AutopilotState, type AutopilotStrategy, checkStrategy, describeStrategy, grantStrategy, INDEX_KEY, INTERVALS, listStrategies, ownStrategy,
  revokeStrategy, saveStrategy, strategyIds,
} from './autopilot-state';

const symbol = z.string().trim().min(1).max(20);
const userOf = (ctx: { call: { userId?: string | undefined } }) => ctx.call.userId ?? 'default';

const startInput = z.object({
  kind: z.enum(['dca', 'grid']),
  symbol,
  amountUsd: z.number().finite().positive().describe('USD per order'),
  maxTotalUsd: z.number().finite().positive().describe('Budget for all buys'),
  every: z.enum(['1h', '4h', '1d', '1w']).nullish().describe('DCA: time between buys'),
  lower: z.number().finite().positive().nullish().describe('Grid: bottom of the range (USD)'),
  upper: z.number().finite().positive().nullish().describe('Grid: top of the range (USD)'),
  levels: z.number().int().min(2).max(50).nullish().describe('Grid: number of levels'),
  days: z.number().int().min(1).max(365).nullish().describe('How long it runs (default 30)'),
});

const modifyInput = z.object({
  id: z.string().min(1).max(64),
  amountUsd: z.number().finite().positive().nullish(),
  maxTotalUsd: z.number().finite().positive().nullish(),
  every: z.enum(['1h', '4h', '1d', '1w']).nullish(),
  lower: z.number().finite().positive().nullish(),
  upper: z.number().finite().positive().nullish(),
  levels: z.number().int().min(2).max(50).nullish(),
  paused: z.boolean().nullish(),
});

/** The four autopilot tools over one autopilot's state. */
export function autopilotTools(a: AutopilotState): ToolEntry[] {
  return [
    defineTool({
      name: 'autopilot_start',
      toolSet: 'autopilot',
      description:
        'Start an automated strategy on the account: kind "dca" buys amountUsd of symbol every interval; kind "grid" buys amountUsd each time the price steps down a level between lower and upper and sells it when it steps back up. ' +
        'Spends at most maxTotalUsd on buys and ends after days. Every start needs the user\'s approval; each order is then placed by the background runner through the normal trade checks.',
      inputSchema: startInput,
      permissionTier: PermissionTier.ALWAYS_CONFIRM,
      execute: (input, ctx) => startStrategy(a, input, ctx),
    }),
    defineTool({
      name: 'autopilot_modify',
      toolSet: 'autopilot',
      description: 'Change a running strategy (size, budget, interval, grid range) or pause/resume it. Needs the user\'s approval.',
      inputSchema: modifyInput,
      permissionTier: PermissionTier.ALWAYS_CONFIRM,
      execute: (input, ctx) => modifyStrategy(a, input, ctx),
    }),
    defineTool({
      name: 'autopilot_stop',
      toolSet: 'autopilot',
      // Stopping only takes risk away, so it needs no confirmation (and an alert turn can stop a strategy).
      description: 'Stop a strategy now: no further orders; its grants are revoked. Holdings it bought stay.',
      inputSchema: z.object({ id: z.string().min(1).max(64), reason: z.string().max(300).nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: ({ id, reason }, ctx) => stopStrategy(a, id, reason, ctx),
    }),
    defineTool({
      name: 'autopilot_list',
      toolSet: 'autopilot',
      description: 'The user\'s automated strategies: status, spent, orders, next run, last error.',
      inputSchema: z.object({ includeStopped: z.boolean().nullish() }),
      permissionTier: PermissionTier.READ_ONLY,
      sideEffects: false,
      execute: async ({ includeStopped }, ctx) => ({
        strategies: (await listStrategies(a)).filter((s) => s.userId === userOf(ctx) && (includeStopped === true || s.status === 'active' || s.status === 'paused')).map(describeStrategy),
      }),
    }),
  ];
}

/** `autopilot_start`: check the plan, grant its orders, store it and add it to the index. */
async function startStrategy(a: AutopilotState, input: z.output<typeof startInput>, ctx: ToolExecutionContext) {
  const created = a.now();
  const base = {
    kind: input.kind, symbol: input.symbol.toUpperCase(), amountUsd: input.amountUsd, maxTotalUsd: input.maxTotalUsd,
    ...(input.kind === 'dca' ? { everyMs: INTERVALS[input.every ?? '1d'] } : { lower: input.lower ?? undefined, upper: input.upper ?? undefined, levels: input.levels ?? undefined }),
  } as const;
  await checkStrategy(a, base);
  const draft: AutopilotStrategy = {
    ...base, id: generateId('ap'), userId: userOf(ctx), status: 'active', spentUsd: 0, orders: 0, createdAt: created.toISOString(),
    endsAt: new Date(created.getTime() + (input.days ?? 30) * 86_400_000).toISOString(),
    ...(input.kind === 'dca' ? { nextRunAt: created.toISOString() } : {}),
    grantIds: [], failures: 0, history: [],
  };
  const s = { ...draft, grantIds: await grantStrategy(a, draft) };
  await saveStrategy(a, s);
  await a.storage.meta.set(INDEX_KEY, JSON.stringify([...(await strategyIds(a)), s.id]));
  return { started: describeStrategy(s), note: 'The background runner places each order as a checked trade (limits, token safety, emergency stop apply). Stop it any time with autopilot_stop.' };
}

/** `autopilot_modify`: apply the changes, check them, and replace the strategy's grants. */
async function modifyStrategy(a: AutopilotState, input: z.output<typeof modifyInput>, ctx: ToolExecutionContext) {
  const s = await ownStrategy(a, input.id, userOf(ctx));
  if (s.status === 'stopped' || s.status === 'completed') throw new MinaraError('INVALID_ARGUMENT', `id: strategy ${s.id} is ${s.status}; start a new one`);
  const next: AutopilotStrategy = {
    ...s,
    ...(input.amountUsd != null ? { amountUsd: input.amountUsd } : {}),
    ...(input.maxTotalUsd != null ? { maxTotalUsd: input.maxTotalUsd } : {}),
    ...(input.every != null && s.kind === 'dca' ? { everyMs: INTERVALS[input.every] } : {}),
    ...(s.kind === 'grid' ? { ...(input.lower != null ? { lower: input.lower } : {}), ...(input.upper != null ? { upper: input.upper } : {}), ...(input.levels != null ? { levels: input.levels } : {}) } : {}),
    ...(input.paused != null ? { status: input.paused ? 'paused' : 'active', failures: 0, statusReason: input.paused ? 'paused by the user' : undefined } : {}),
  };
  await checkStrategy(a, next);
  // New size or side limits mean new grants; the old ones are revoked first.
  await revokeStrategy(a, s);
  const saved = { ...next, lastLevel: s.kind === 'grid' && (input.lower != null || input.upper != null || input.levels != null) ? undefined : s.lastLevel, grantIds: await grantStrategy(a, next) };
  await saveStrategy(a, saved);
  return { modified: describeStrategy(saved) };
}

/** `autopilot_stop`: revoke the grants and mark the strategy stopped. */
async function stopStrategy(a: AutopilotState, id: string, reason: string | null | undefined, ctx: ToolExecutionContext) {
  const s = await ownStrategy(a, id, userOf(ctx));
  await revokeStrategy(a, s);
  const stopped: AutopilotStrategy = { ...s, status: 'stopped', statusReason: reason ?? `stopped from a ${ctx.call.source} turn` };
  await saveStrategy(a, stopped);
  return { stopped: describeStrategy(stopped) };
}
