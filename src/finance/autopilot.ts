/**
 * Autopilot strategies: DCA (buy a fixed USD amount every interval) and grid (buy a level's amount when the price
 * steps down a level, sell it when it steps back up), within a budget and an end date.
 *
 * The tools store a plan; they never trade. Orders are placed by the background job `finance:autopilot`, each one
 * through the registry's dispatch as a `cron` call of `buy_token` / `sell_token` with `confirm: true` — so every order
 * meets the tier gate and the whole finance safety stack (intent, token safety, exposure, slippage, risk caps, the
 * emergency stop) like any other trade. What lets those autonomous calls pass the gate is a stored grant that
 * `autopilot_start` creates once the user approved it (ALWAYS_CONFIRM): limited to the strategy's symbol, side,
 * per-order size and exact intent text, expiring at the strategy's end, revoked by `autopilot_stop`.
 */
import type { Storage } from '../storage/types';
import type { ToolEntry, ToolRegistry } from '../tools/types';
import type { Logger } from '../util/logger';
import { type AutopilotState, type AutopilotStrategy, listStrategies } from './autopilot-state';
import { tickAutopilot } from './autopilot-tick';
import { autopilotTools } from './autopilot-tools';
import type { FinanceDeps } from './context';

export { autopilotIntent, type AutopilotOrder, type AutopilotStrategy } from './autopilot-state';

/** Options of {@link createAutopilot}. */
export interface AutopilotOptions {
  readonly deps: FinanceDeps;
  readonly storage: Storage;
  /** The registry orders are dispatched through (set by the finance pack's `attach`). */
  readonly registry: () => ToolRegistry | undefined;
  /** How often the job looks for due work. @default 60000 */
  readonly tickMs?: number | undefined;
  /** Failed orders in a row before a strategy is paused. @default 3 */
  readonly maxFailures?: number | undefined;
  readonly logger?: Logger | undefined;
}

/** A job for the background runner (`createBackgroundRunner({ jobs })`, or `app.background` through createApp). */
export interface AutopilotJob {
  readonly id: string;
  readonly description: string;
  readonly every: number;
  readonly run: (context: { readonly signal: AbortSignal }) => Promise<string | { readonly skipped: string }>;
}

/** The autopilot: its tools and its background job. */
export interface Autopilot {
  readonly tools: readonly ToolEntry[];
  readonly job: AutopilotJob;
  /** The stored strategies (every user's), newest first. */
  list(): Promise<AutopilotStrategy[]>;
  /** Run due work now (the job does this every tick). */
  tick(signal?: AbortSignal): Promise<{ readonly orders: number; readonly failed: number }>;
}

/**
 * Build the autopilot over the finance pack's providers and the registry.
 *
 * Wiring only: the state and the stored strategies are `autopilot-state.ts`, the tools `autopilot-tools.ts`, the
 * job's tick `autopilot-tick.ts`.
 */
export function createAutopilot(options: AutopilotOptions): Autopilot {
  const { deps, storage, registry, tickMs = 60_000, maxFailures = 3, logger } = options;
  const a: AutopilotState = { deps, storage, registry, tickMs, maxFailures, logger, now: deps.now };
  const tick = (signal?: AbortSignal) => tickAutopilot(a, signal);
  return {
    tools: autopilotTools(a),
    list: () => listStrategies(a),
    tick,
    job: {
      id: 'finance:autopilot',
      description: 'Place due orders of autopilot strategies (DCA, grid) through the trade checks',
      every: tickMs,
      run: async ({ signal }) => {
        const r = await tick(signal);
        return r.orders === 0 ? { skipped: 'no order due' } : `${r.orders} orders (${r.failed} failed)`;
      },
    },
  };
}
