import type { ToolHook, ToolRegistry } from '../../tools/types';

/**
 * Tools that answer from the simulated clock in an agent backtest: market reads go to the point-in-time market,
 * account reads and spot orders to the backtest trading adapter, memory, learning and workspace files to stores
 * that hold only what existed at the simulated time (history is released as the clock reaches it).
 */
export const POINT_IN_TIME_TOOLS: ReadonlySet<string> = new Set([
  'get_price', 'search_tokens', 'lookup_token', 'get_ohlcv', 'analyze_token', 'get_portfolio', 'minara_total_balance', 'minara_pnl', 'get_account_info',
  'buy_token', 'sell_token', 'swap_tokens',
  'memory_write', 'memory_search', 'memory_read', 'memory_learn', 'memory_compiled_page', 'alert_request',
  'read_file', 'list_files', 'write_file',
  'activate_skills', 'tool_invoke',
]);

/** Tool sets an agent backtest turn may use (everything else is out of the turn before the model sees it). */
export const BACKTEST_TOOL_SETS: readonly string[] = ['read', 'analysis', 'trade', 'memory', 'file', 'skills'];

/** A tool or feature off for the run, and why (the report lists every one). */
export interface DisabledTool {
  readonly name: string;
  readonly reason: string;
}

/** Features a backtest app is built without, each with its reason (they would answer from the live world). */
export const DISABLED_FEATURES: readonly DisabledTool[] = [
  { name: 'web_search', reason: 'search results cannot be filtered to the simulated date (later articles, undated results)' },
  { name: 'web_fetch', reason: 'fetches the live web: a page today is not the page at the simulated time' },
  { name: 'browser_read', reason: 'renders the live web' },
  { name: 'run_code', reason: 'sandboxed code can fetch live data and read the wall clock' },
  { name: 'deep_research', reason: 'searches and fetches the live web' },
  { name: 'mcp', reason: 'MCP servers answer from the live world; none is point in time' },
  { name: 'get_trending', reason: 'no point-in-time source of trending tokens' },
  { name: 'get_fear_greed', reason: 'no point-in-time source of the fear & greed index' },
  { name: 'background', reason: 'heartbeat, dreaming, autopilot and alert checks run on wall-clock timers; the backtest schedules decisions itself' },
  { name: 'memory_extraction', reason: 'a background pass on the wall clock' },
  { name: 'run_backtest', reason: 'a backtest inside a backtest would run on bars of its own, not the simulated clock' },
];

const REASON_BY_SET: Readonly<Record<string, string>> = {
  perps: 'perpetuals are not simulated by the engine (spot only)',
  transfer: 'transfers and withdrawals are not simulated by the engine',
  autopilot: 'autopilot strategies run on wall-clock timers outside the simulated clock',
  agents: 'sub-agent turns are not scheduled by the backtest',
  system: 'the emergency stop is global state outside the run',
};

/** Why a registered tool is off for the run, or undefined when it answers point in time. */
export function disabledReason(name: string, toolSet: string, extra: ReadonlySet<string>): string | undefined {
  if (POINT_IN_TIME_TOOLS.has(name) || extra.has(name)) return undefined;
  return REASON_BY_SET[toolSet] ?? `not known to answer from the simulated clock (tool set ${toolSet}); declare it with pointInTimeTools if it does`;
}

/** Every registered tool that is off for the run, with its reason, plus the features the app was built without. */
export function disabledTools(registry: ToolRegistry, extra: ReadonlySet<string>): DisabledTool[] {
  const out: DisabledTool[] = [...DISABLED_FEATURES];
  for (const t of registry.list()) {
    const reason = disabledReason(t.name, t.toolSet, extra);
    if (reason !== undefined) out.push({ name: t.name, reason });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The before-hook that fails closed: a call to any tool not known to answer point in time is blocked with its
 * reason (a second line of defence behind the turn's allowed tool sets).
 */
export function pointInTimeHook(extra: ReadonlySet<string>): ToolHook {
  return {
    name: 'backtest-point-in-time',
    before: (call) => {
      const reason = disabledReason(call.tool.name, call.tool.toolSet, extra);
      return reason === undefined ? undefined : { block: `disabled for this backtest: ${reason}`, code: 'TOOL_BLOCKED', retryable: false };
    },
  };
}
