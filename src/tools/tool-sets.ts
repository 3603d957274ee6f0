import type { ToolSetDefinition } from './types';

/**
 * The built-in tool sets. Skills reference tools by name; the registry, gateway and turn policy talk
 * about sets. Cron turns run with `['read', 'memory', 'web']` by default.
 */
export const BUILTIN_TOOL_SETS: readonly ToolSetDefinition[] = [
  { name: 'read', description: 'Market data, balances and lookups; never moves funds' },
  { name: 'trade', description: 'Spot swaps, buys and sells', includes: ['read'] },
  { name: 'perps', description: 'Perpetual futures positions', includes: ['read'] },
  { name: 'transfer', description: 'Transfers and withdrawals to external addresses' },
  { name: 'memory', description: 'Memory search, read and write' },
  { name: 'file', description: 'Sandboxed file read, write and list' },
  { name: 'web', description: 'Web search and page extraction' },
  { name: 'browser', description: 'Headless browser automation' },
  { name: 'analysis', description: 'Analysis and research tools', includes: ['read', 'web'] },
  { name: 'documents', description: 'Document and artifact tools', includes: ['file', 'artifacts'] },
  { name: 'artifacts', description: 'Charts, reports and spreadsheets the agent makes for the user (never the sandbox)' },
  { name: 'skills', description: 'Skill activation and tool_invoke meta-tools' },
  { name: 'system', description: 'Agent control: the emergency stop' },
  { name: 'code', description: 'Computation in the code sandbox (run_code): no network, no files' },
  { name: 'session', description: 'Conversation helpers: clarifying questions, the task list, feature pointers' },
  { name: 'backtest', description: 'Backtests on simulated bars (run_backtest): never reads an account or places an order' },
  { name: 'autopilot', description: 'Automated strategies (DCA, grid): start, modify, stop', includes: ['read'] },
];

/** Transitive closure of `names` over `includes` (each set covers itself). Unknown names cover only themselves. */
export function expandToolSetNames(names: readonly string[], sets: ReadonlyMap<string, ToolSetDefinition>): Set<string> {
  const out = new Set<string>();
  const stack = [...names];
  while (stack.length > 0) {
    const name = stack.pop()!;
    if (out.has(name)) continue;
    out.add(name);
    for (const inc of sets.get(name)?.includes ?? []) stack.push(inc);
  }
  return out;
}
