import type { ToolSetDefinition } from './types';

/**
 * The built-in tool sets. Skills reference tools by name; the registry, gateway and turn policy talk
 * about sets. Cron turns run with `['read', 'memory', 'web']` by default.
 */
export const BUILTIN_TOOL_SETS: readonly ToolSetDefinition[] = [
  { name: 'read', description: 'Look up prices, balances and your portfolio; never moves money' },
  { name: 'trade', description: 'Buy, sell and swap tokens (each order waits for your approval unless a grant covers it)', includes: ['read'] },
  { name: 'perps', description: 'Open and close leveraged futures positions', includes: ['read'] },
  { name: 'transfer', description: 'Send tokens or withdraw funds to an outside address' },
  { name: 'memory', description: 'Remember things about you and look them up later' },
  { name: 'file', description: "Read and write files in the agent's own sandbox folder" },
  { name: 'web', description: 'Search the web and read web pages' },
  { name: 'browser', description: 'Open and read web pages in a headless browser' },
  { name: 'analysis', description: 'Research and analysis from market data and the web', includes: ['read', 'web'] },
  { name: 'documents', description: 'Make and read documents and reports', includes: ['file', 'artifacts'] },
  { name: 'artifacts', description: 'Make charts, reports and spreadsheets for you' },
  { name: 'skills', description: "Let the agent switch on its playbooks (skills) and reach their tools; needed for most answers" },
  { name: 'system', description: 'The emergency stop: let the agent stop itself' },
  { name: 'code', description: 'Run calculations in a sealed sandbox (no internet, no files)' },
  { name: 'session', description: 'Ask you a clarifying question, keep a task list for the conversation, point to features' },
  { name: 'backtest', description: 'Test a trading idea on simulated past prices; never touches your account or places an order' },
  { name: 'autopilot', description: 'Automated strategies such as regular buys (DCA) or grids: start, change, stop', includes: ['read'] },
  { name: 'agents', description: 'Hand part of a task to a helper agent with fewer permissions' },
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
