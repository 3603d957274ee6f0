/**
 * The REPL's slash commands. Every one works without a model: they talk to the tool registry, memory,
 * the workspace and the runtime's prompt builder directly.
 */
import { type ApprovalDecision, createToolCallContext, type MinaraApp, permissionTierName } from '@minara/agent';
import { previewApproval } from './approval-preview';
import { compactJson, formatApproval, formatBlocked, formatToolCall, formatToolResult, loadFinanceWords, truncate } from './render';

/** What a slash command can use. The REPL provides it. */
export interface ReplContext {
  readonly app: MinaraApp;
  /** The current session id. */
  readonly sessionId: string;
  /** Start a new session (the memory snapshot reloads); returns its id. */
  newSession(): string;
  /** Print one or more lines. */
  print(text: string): void;
  /** Ask a yes/no question; anything but y/yes is No. */
  confirm(question: string): Promise<boolean>;
  /** Resume a session's turn with approval decisions, rendering it like any turn. */
  resume(sessionId: string, approvals: readonly ApprovalDecision[]): Promise<void>;
  /** Whether tool calls, results and approvals also show their whole JSON (`/json`). @default false */
  json?: boolean;
  /** Whether the engine's own lines (background jobs, activated skills) show (`/verbose`). @default false */
  verbose?: boolean;
  /** The terminal's width in columns (tables fit it). @default 100 */
  readonly columns?: number | undefined;
  /** What runs in the background, printed by `/verbose`. */
  readonly backgroundInfo?: string | undefined;
  /** Leave the REPL. */
  exit(): void;
}

export interface SlashCommand {
  readonly name: string;
  readonly usage: string;
  readonly description: string;
  readonly aliases?: readonly string[];
  run(ctx: ReplContext, args: string): Promise<void> | void;
}

/** `/workspace <name>` names and the files they print. */
export const WORKSPACE_VIEWS: Readonly<Record<string, string>> = {
  soul: 'SOUL.md',
  agents: 'AGENTS.md',
  identity: 'IDENTITY.md',
  user: 'USER.md',
  memory: 'MEMORY.md',
  heartbeat: 'HEARTBEAT.md',
  bootstrap: 'BOOTSTRAP.md',
  tools: 'TOOLS.md',
};

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** Split `word rest…` once. */
function head(args: string): [string, string] {
  const t = args.trim();
  const i = t.search(/\s/);
  return i < 0 ? [t, ''] : [t.slice(0, i), t.slice(i).trim()];
}

async function printWorkspaceFile(ctx: ReplContext, view: string): Promise<void> {
  const workspace = ctx.app.workspace;
  if (!workspace) return ctx.print('No workspace is configured.');
  const file = WORKSPACE_VIEWS[view.toLowerCase()];
  if (!file) return ctx.print(`Unknown workspace file "${view}". Expected one of: ${Object.keys(WORKSPACE_VIEWS).join(', ')}.`);
  const read = await workspace.readFile(file);
  if (!read.exists) return ctx.print(`${file} does not exist yet (${workspace.dir}).`);
  ctx.print(`── ${file} (${workspace.dir}) ──\n${read.content.replace(/\n$/, '')}`);
}

async function callTool(ctx: ReplContext, args: string): Promise<void> {
  const [name, json] = head(args);
  if (!name) return ctx.print('Usage: /call <tool> <json>   e.g. /call get_price {"symbol":"BTC"}');
  let input: unknown = {};
  if (json) {
    try {
      input = JSON.parse(json);
    } catch (e) {
      return ctx.print(`Arguments must be JSON: ${errorText(e)}`);
    }
  }
  const { tools } = ctx.app;
  if (!tools.has(name)) {
    const near = suggest(name, tools.list().map((t) => t.name));
    return ctx.print(`No tool named "${name}".${near.length ? ` Did you mean ${near.join(', ')}?` : ' See /tools.'}`);
  }
  const context = createToolCallContext({ sessionId: ctx.sessionId, source: 'user' });
  await loadFinanceWords();
  ctx.print(formatToolCall(name, input, { json: ctx.json }));
  let outcome = await tools.dispatchDetailed(name, input, { context });
  // A call can need approval more than once (e.g. a tier raised by a hook); ask each time.
  for (let round = 0; outcome.decision === 'approval_required' && outcome.approval && round < 3; round++) {
    const approval = outcome.approval;
    const approvalInput = JSON.parse(approval.inputJson) as unknown;
    const { preview, refused } = await previewApproval(ctx.app, { toolName: approval.toolName, input: approvalInput, sessionId: ctx.sessionId });
    ctx.print(formatApproval({ toolName: approval.toolName, input: approvalInput, reason: approval.reason, approvalId: approval.id }, { json: ctx.json, ...(preview !== undefined ? { preview } : {}), refused }));
    const approved = await ctx.confirm('Approve? [y/N] ');
    await tools.approvals.decide(approval.id, { approved, reason: 'REPL /call' });
    if (!approved) return ctx.print(`  ✗ ${name} → denied`);
    outcome = await tools.dispatchDetailed(name, input, { context, approvalId: approval.id });
  }
  const env = outcome.envelope;
  if (!env.ok && outcome.decision === 'blocked') {
    return ctx.print(formatBlocked(name, String(env.code), env.error));
  }
  ctx.print(formatToolResult(name, env, { json: ctx.json, input }));
}

async function approvalsCommand(ctx: ReplContext, args: string): Promise<void> {
  const [verb, id] = head(args);
  const { approvals } = ctx.app.tools;
  if (verb === '' || verb === 'list') {
    const pending = await approvals.list({ status: 'pending' });
    if (pending.length === 0) return ctx.print('No pending approvals.');
    for (const a of pending) {
      ctx.print(`${a.id}  ${a.toolName} ${compactJson(JSON.parse(a.inputJson) as unknown, 80)}  session ${a.sessionId ?? '-'}  expires ${a.expiresAt}\n    ${truncate(a.reason, 120)}`);
    }
    return ctx.print('Decide with /approvals approve <id> or /approvals deny <id>.');
  }
  if (verb !== 'approve' && verb !== 'deny') return ctx.print('Usage: /approvals [list] | /approvals approve <id> | /approvals deny <id>');
  if (!id) return ctx.print(`Usage: /approvals ${verb} <id>`);
  const record = await approvals.get(id);
  if (!record) return ctx.print(`No approval "${id}".`);
  if (record.status !== 'pending') return ctx.print(`Approval ${id} is ${record.status}.`);
  const approved = verb === 'approve';
  if (record.sessionId && record.source !== 'mcp') {
    ctx.print(`${approved ? 'Approving' : 'Denying'} ${record.toolName} (${id}) and resuming session ${record.sessionId}…`);
    await ctx.resume(record.sessionId, [{ approvalId: id, approved, reason: 'REPL /approvals' }]);
  } else {
    await approvals.decide(id, { approved, reason: 'REPL /approvals' });
    ctx.print(`${approved ? 'Approved' : 'Denied'} ${id}.${record.source === 'mcp' ? ' The MCP host runs it when it calls the tool again.' : ''}`);
  }
}

async function memoryCommand(ctx: ReplContext, args: string): Promise<void> {
  const [verb, rest] = head(args);
  const memory = ctx.app.memory;
  const show = (h: { id: number; category: string; content: string; source?: string | undefined }) =>
    ctx.print(`#${h.id} [${h.category}] ${truncate(h.content, 200)}${h.source ? `  (${h.source})` : ''}`);
  switch (verb) {
    case '':
    case 'list': {
      const hits = await memory.read({ limit: 20, ...(rest ? { category: rest } : {}) });
      if (hits.length === 0) return ctx.print('No memories yet. Add one with /memory add <category> <content>.');
      for (const h of hits) show(h);
      return;
    }
    case 'search': {
      if (!rest) return ctx.print('Usage: /memory search <query>');
      const hits = await memory.search(rest, { limit: 10 });
      if (hits.length === 0) return ctx.print(`No memories match "${rest}".`);
      for (const h of hits) show(h);
      return;
    }
    case 'add': {
      const [category, content] = head(rest);
      if (!category || !content) return ctx.print('Usage: /memory add <category> <content>   e.g. /memory add preference I prefer 0.5% slippage');
      const { id } = await memory.write({ category, content, source: 'user_manual' });
      return ctx.print(`Saved memory #${id} [${category}]. It is in the snapshot of the next session (/new).`);
    }
    case 'delete':
    case 'rm': {
      const id = Number(rest);
      if (!Number.isInteger(id) || id <= 0) return ctx.print('Usage: /memory delete <id>');
      return ctx.print((await memory.softDelete(id)) ? `Deleted memory #${id}.` : `No memory #${id}.`);
    }
    default:
      return ctx.print('Usage: /memory list [category] | search <query> | add <category> <content> | delete <id>');
  }
}

/** `/learning` arguments: words, `--force`, and `--reason <rest of the line>`. */
function learningArgs(args: string): { words: string[]; flags: { force?: boolean; reason?: string } } {
  let text = args.trim();
  let reason: string | undefined;
  const r = /(?:^|\s)--reason(?:\s+|=)(.+)$/su.exec(text);
  if (r) {
    reason = r[1]!.trim();
    text = text.slice(0, r.index).trim();
  }
  const words = text === '' ? [] : text.split(/\s+/);
  const force = words.includes('--force');
  return { words: words.filter((w) => w !== '--force'), flags: { ...(force ? { force } : {}), ...(reason !== undefined ? { reason } : {}) } };
}

/** One line per tool, cut to the terminal's width (`/tools`): name, tool set, tier, then as much description as fits. */
export function formatToolsTable(app: MinaraApp, columns: number): string[] {
  const width = Math.max(40, Math.floor(columns) - 1);
  const rows = app.tools.list().map((t) => ({ name: t.name, set: t.toolSet, tier: permissionTierName(t.permissionTier), description: t.description }));
  const nameW = Math.min(28, Math.max(4, ...rows.map((r) => r.name.length)));
  const setW = Math.min(14, Math.max(3, ...rows.map((r) => r.set.length)));
  const tierW = Math.max(4, ...rows.map((r) => r.tier.length));
  return rows.map((r) => {
    const left = `${truncate(r.name, nameW).padEnd(nameW)} ${truncate(r.set, setW).padEnd(setW)} ${r.tier.padEnd(tierW)} `;
    const room = width - left.length;
    return room >= 8 ? `${left}${truncate(r.description, room)}` : truncate(left.trimEnd(), width);
  });
}

/** Words of a command line; `"quoted text"` stays one word. */
function words(args: string): string[] {
  return [...args.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

/** The REPL's output as the CLI commands' io: each write printed without its last newline. */
function printer(ctx: ReplContext): { write: (s: string) => void; writeErr: (s: string) => void } {
  const print = (s: string) => ctx.print(s.replace(/\n$/, '').replace(/^minara: usage: minara /, 'Usage: /').replace(/^minara: /, ''));
  return { write: print, writeErr: print };
}

/** `--flag value` pairs and the other words of `/audit` and `/shadow`. */
function flagWords(args: string, valueFlags: readonly string[]): { positionals: string[]; values: Map<string, string>; flags: Set<string> } {
  const positionals: string[] = [];
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const list = words(args);
  for (let i = 0; i < list.length; i++) {
    const w = list[i]!;
    if (valueFlags.includes(w) && list[i + 1] !== undefined) values.set(w, list[++i]!);
    else if (w.startsWith('--')) flags.add(w);
    else positionals.push(w);
  }
  return { positionals, values, flags };
}

/**
 * The operator's controls, the same functions as `minara grants|stop|audit|shadow` acting on this REPL's app:
 * a change is seen by every process on the database at its next call.
 */
const OPERATOR_COMMANDS: readonly SlashCommand[] = [
  {
    name: 'grants',
    usage: '/grants [list|create …|revoke <id>]',
    description: 'Grants for autonomous runs (as `minara grants`)',
    run: async (ctx, args) => {
      const { runControlsCli } = await import('./controls-command');
      await runControlsCli(['grants', ...words(args)], printer(ctx), { app: ctx.app });
    },
  },
  {
    name: 'stop',
    usage: '/stop [--global] [--release] | status',
    description: 'The emergency stop: engage, release, or show it (as `minara stop`)',
    run: async (ctx, args) => {
      const { runControlsCli } = await import('./controls-command');
      await runControlsCli(['stop', ...words(args)], printer(ctx), { app: ctx.app });
    },
  },
  {
    name: 'audit',
    usage: '/audit [list|trace <id>|verify] [--since 24h]',
    description: 'The audit log: recent rows, one trace, the hash chain (as `minara audit`)',
    run: async (ctx, args) => {
      const { positionals, values, flags } = flagWords(args, ['--since', '--limit', '--tool', '--user', '--trace', '--anchor']);
      const { runAuditCommand } = await import('./audit-command');
      await runAuditCommand({}, positionals, {
        app: ctx.app, ...printer(ctx), json: flags.has('--json'), limit: values.get('--limit') ?? '20',
        since: values.get('--since'), tool: values.get('--tool'), user: values.get('--user'), trace: values.get('--trace'), anchor: values.get('--anchor'),
      });
    },
  },
  {
    name: 'shadow',
    usage: '/shadow [report] [--since 7d]',
    description: 'Shadow mode: the shadow fills against the market and holding (as `minara shadow report`)',
    run: async (ctx, args) => {
      const { positionals, values, flags } = flagWords(args, ['--since']);
      const { runShadowCommand } = await import('./shadow-command');
      await runShadowCommand({}, positionals, { app: ctx.app, ...printer(ctx), json: flags.has('--json'), since: values.get('--since') });
    },
  },
];

/** All slash commands, in the order /help lists them. */
export const SLASH_COMMANDS: readonly SlashCommand[] = [
  { name: 'help', usage: '/help', description: 'Show this list', run: (ctx) => ctx.print(helpText()) },
  {
    name: 'json',
    usage: '/json',
    description: 'Also show the whole JSON of tool calls, results and approvals (toggle)',
    run: (ctx) => {
      ctx.json = !ctx.json;
      ctx.print(ctx.json ? 'JSON on: tool calls, results and approvals show their whole JSON.' : 'JSON off: one readable line per tool call and result.');
    },
  },
  {
    name: 'new',
    usage: '/new',
    description: 'Start a new session (reloads the memory snapshot)',
    run: (ctx) => ctx.print(`New session ${ctx.newSession()}.`),
  },
  {
    name: 'prompt',
    usage: '/prompt',
    description: 'Print the system prompt of this session',
    run: async (ctx) => ctx.print(await ctx.app.runtime.buildSystemPrompt({ sessionId: ctx.sessionId })),
  },
  {
    name: 'profile',
    usage: '/profile',
    description: 'Profile entries and the memory snapshot',
    run: async (ctx) => {
      const entries = await ctx.app.memory.profile.list();
      ctx.print(entries.length === 0 ? 'Profile: (empty)' : `Profile:\n${entries.map((e) => `  ${e.key}: ${e.value}`).join('\n')}`);
      const snapshot = await ctx.app.memory.loadSnapshot();
      ctx.print(snapshot.text ? `Memory snapshot (what a new session loads):\n${snapshot.text}` : 'Memory snapshot: (empty)');
    },
  },
  { name: 'memory', usage: '/memory list|search|add|delete', description: 'List, search, add or delete memories', run: memoryCommand },
  {
    name: 'skills',
    usage: '/skills',
    description: 'Registered skills',
    run: (ctx) => {
      const list = ctx.app.skills.list();
      if (list.length === 0) ctx.print('No skills registered.');
      for (const s of list) ctx.print(`${s.id.padEnd(24)} ${s.activation.padEnd(7)} ${truncate(s.description, 90)}`);
      for (const h of ctx.app.skills.hidden()) ctx.print(`${h.id.padEnd(24)} hidden  ${h.reason}`);
      for (const i of ctx.app.skillLoadIssues) ctx.print(`! ${i.file}: ${i.field}: ${i.message}`);
    },
  },
  {
    name: 'tools',
    usage: '/tools',
    description: 'Registered tools with their tool set and permission tier',
    run: (ctx) => {
      for (const l of formatToolsTable(ctx.app, ctx.columns ?? 100)) ctx.print(l);
    },
  },
  { name: 'mcp', usage: '/mcp', description: 'MCP servers: state, transport, tool count, skipped tools', run: (ctx) => ctx.print(formatMcpStatus(ctx.app)) },
  { name: 'cost', usage: '/cost', description: 'Tokens and USD: this session, today, today\'s autonomous turns', run: async (ctx) => ctx.print(await formatCost(ctx.app, ctx.sessionId)) },
  { name: 'jobs', usage: '/jobs', description: 'Background jobs: schedule, next run, last runs, schedule problems', run: async (ctx) => ctx.print(await formatJobs(ctx.app)) },
  {
    name: 'workflows',
    usage: '/workflows [runs [<name>]|run <id>|start <name>]',
    description: 'Workflows (code and workspace files), their stored runs, one run step by step; start one by hand',
    run: async (ctx, args) => {
      const { workflowsCommand } = await import('./automation-command');
      const out = await workflowsCommand(ctx.app, args.trim() === '' ? [] : args.trim().split(/\s+/));
      ctx.print(out.ok ? out.text : out.text.replace(/^usage: /, 'Usage: /'));
    },
  },
  {
    name: 'alerts',
    usage: '/alerts [list [all]|cancel <id>]',
    description: 'Your price alerts; cancel one',
    run: async (ctx, args) => {
      const { alertsCommand } = await import('./automation-command');
      const out = await alertsCommand(ctx.app, args.trim() === '' ? [] : args.trim().split(/\s+/));
      ctx.print(out.ok ? out.text : out.text.replace(/^usage: /, 'Usage: /'));
    },
  },
  {
    name: 'learning',
    usage: '/learning [cases|graduate <id>|…]',
    description: 'Methodologies (confidence, uses, state), pending trade cases; graduate, quarantine, reinstate, seed, reflect, page <asset>',
    run: async (ctx, args) => {
      const { words, flags } = learningArgs(args);
      const { learningCommand } = await import('./learning-command');
      const out = await learningCommand(ctx.app, words, flags);
      ctx.print(out.ok ? out.text : out.text.replace(/^usage: /, 'Usage: /'));
    },
  },
  {
    name: 'preferences',
    usage: '/preferences [approve|reject <id>]',
    description: 'Learned preferences and hard constraints; approve or reject a proposed one',
    run: async (ctx, args) => {
      const { preferencesCommand } = await import('./learning-command');
      const out = await preferencesCommand(ctx.app, args.trim() === '' ? [] : args.trim().split(/\s+/));
      ctx.print(out.ok ? out.text : out.text.replace(/^usage: /, 'Usage: /'));
    },
  },
  { name: 'call', usage: '/call <tool> <json>', description: 'Run a tool through the same gate (confirmation included)', run: callTool },
  { name: 'approvals', usage: '/approvals [approve|deny <id>]', description: 'Pending approvals; approve or deny one and resume its turn', run: approvalsCommand },
  { name: 'soul', usage: '/soul', description: 'Print SOUL.md', run: (ctx) => printWorkspaceFile(ctx, 'soul') },
  { name: 'identity', usage: '/identity', description: 'Print IDENTITY.md', run: (ctx) => printWorkspaceFile(ctx, 'identity') },
  { name: 'heartbeat', usage: '/heartbeat', description: 'Print HEARTBEAT.md', run: (ctx) => printWorkspaceFile(ctx, 'heartbeat') },
  {
    name: 'workspace',
    usage: `/workspace [${Object.keys(WORKSPACE_VIEWS).join('|')}]`,
    description: 'Print a live workspace file (no name: list them)',
    run: async (ctx, args) => {
      if (args.trim()) return printWorkspaceFile(ctx, args.trim());
      const ws = ctx.app.workspace;
      if (!ws) return ctx.print('No workspace is configured.');
      ctx.print(`Workspace: ${ws.dir}`);
      for (const [view, file] of Object.entries(WORKSPACE_VIEWS)) {
        const f = await ws.readFile(file);
        ctx.print(`  ${view.padEnd(10)} ${file.padEnd(13)} ${f.exists ? `${Buffer.byteLength(f.content)} bytes` : '(missing)'}`);
      }
    },
  },
  ...OPERATOR_COMMANDS,
  {
    name: 'verbose',
    usage: '/verbose',
    description: 'Also show the background jobs and the skills each turn activates (toggle)',
    run: (ctx) => {
      ctx.verbose = !ctx.verbose;
      ctx.print(ctx.verbose ? `Verbose on: each turn shows the skills it activated.${ctx.backgroundInfo ? `\n${ctx.backgroundInfo}` : ''}` : 'Verbose off.');
    },
  },
  { name: 'exit', usage: '/exit', description: 'Leave the REPL', aliases: ['quit'], run: (ctx) => ctx.exit() },
];

export function helpText(): string {
  const rows = SLASH_COMMANDS.map((c) => `  ${c.usage.padEnd(34)} ${c.description}`);
  return ['Type a message to talk to the agent, or a command:', ...rows, '', 'Ctrl-C cancels a running turn; Ctrl-C twice (or at an empty prompt) exits.'].join('\n');
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}

/** Close matches of `word` among `candidates` (prefix matches first, then edit distance ≤ 2). */
export function suggest(word: string, candidates: readonly string[], max = 3): string[] {
  const w = word.toLowerCase();
  if (w === '') return [];
  // A word that is the start of a name (or a name plus a few letters) means that name: suggest only those.
  const prefixed = candidates.filter((c) => c.toLowerCase().startsWith(w) || (w.startsWith(c.toLowerCase()) && w.length - c.length <= 2));
  if (prefixed.length > 0) return [...prefixed].sort((a, b) => a.length - b.length || a.localeCompare(b)).slice(0, max);
  // Otherwise a typo: one edit for short words, more for long ones.
  const scored = candidates
    .map((c) => ({ c, d: distance(w, c.toLowerCase()) }))
    .filter((x) => x.d <= Math.max(1, Math.floor(w.length / 3)))
    .sort((a, b) => a.d - b.d || a.c.localeCompare(b.c));
  return scored.slice(0, max).map((x) => x.c);
}

/** Run one `/command args` line. Returns false when the command is unknown. */
export async function runSlashCommand(ctx: ReplContext, line: string): Promise<boolean> {
  const [word, args] = head(line.slice(1));
  const name = word.toLowerCase();
  const command = SLASH_COMMANDS.find((c) => c.name === name || c.aliases?.includes(name));
  if (!command) {
    const names = SLASH_COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]);
    const near = suggest(name, names);
    ctx.print(`Unknown command /${word}.${near.length ? ` Did you mean ${near.map((n) => `/${n}`).join(', ')}?` : ''} Type /help for the list.`);
    return false;
  }
  try {
    await command.run(ctx, args);
  } catch (e) {
    ctx.print(`/${command.name} failed: ${errorText(e)}`);
  }
  return true;
}

/** The MCP servers of an app, one line each (shared by `/mcp` and `minara mcp list`). */
/** Tokens and cost of this session, of today (UTC) and of today's autonomous turns (`/cost`). */
export async function formatCost(app: MinaraApp, sessionId: string): Promise<string> {
  const day = new Date().toISOString().slice(0, 10);
  const line = (label: string, t: { turns: number; inputTokens: number; outputTokens: number; cacheReadTokens: number; costUsd: number }) =>
    `  ${label.padEnd(30)} ${String(t.turns).padStart(4)} turns  ${String(t.inputTokens).padStart(9)} in (${t.cacheReadTokens} cached)  ${String(t.outputTokens).padStart(8)} out  $${t.costUsd.toFixed(4)}`;
  const [session, today, autonomous] = await Promise.all([
    app.storage.usage.totals({ sessionId }),
    app.storage.usage.totals({ day }),
    app.storage.usage.totals({ day, sources: ['heartbeat', 'cron', 'webhook', 'workflow'] }),
  ]);
  return [line('this session', session), line(`today (${day} UTC)`, today), line('today, autonomous turns', autonomous), '  Prices: DEFAULT_MODEL_PRICES, or createApp({ prices }); a model without a price counts $0.'].join('\n');
}

/** The background jobs, their next times and recent runs, and HEARTBEAT.md schedule problems (`/jobs`, `minara jobs`). */
export async function formatJobs(app: MinaraApp): Promise<string> {
  const bg = app.background;
  await bg.syncSchedule();
  const lines = [`Background runner: ${bg.started ? 'running' : 'not started in this process'}.`];
  for (const j of bg.status()) {
    const state = j.running ? 'running' : j.backoffUntil ? `backing off until ${j.backoffUntil} (${j.failures} failures: ${truncate(j.lastError ?? '', 80)})` : `next ${j.nextRunAt}`;
    lines.push(`  ${j.id.padEnd(18)} ${j.schedule.padEnd(18)} ${state}\n    ${truncate(j.description, 100)}`);
  }
  const runs = await bg.runs({ limit: 10 });
  if (runs.length > 0) {
    lines.push('Recent runs (every process on this data directory):');
    for (const r of runs) lines.push(`  ${r.startedAt}  ${r.jobId.padEnd(18)} ${r.outcome.padEnd(8)} ${truncate(r.error ?? r.detail ?? '', 90)}${r.attempt > 1 ? ` (attempt ${r.attempt})` : ''}`);
  }
  for (const p of bg.schedule().problems) lines.push(`  ! HEARTBEAT.md: "${p.line}" is ignored: ${p.reason}`);
  if (bg.status().every((j) => !j.id.startsWith('schedule:')) && bg.schedule().tasks.length === 0) {
    lines.push('Add work in HEARTBEAT.md under ## Schedule: "- every 6h: check BTC funding", "- daily 09:00: morning brief", or a plain task for every heartbeat.');
  }
  return lines.join('\n');
}

export function formatMcpStatus(app: MinaraApp): string {
  const servers = app.mcp?.status() ?? [];
  if (servers.length === 0) return 'No MCP servers configured (see docs/mcp.md: --mcp-config, MINARA_MCP_CONFIG or <workspace>/mcp.json).';
  const lines = servers.map((s) => `${s.name.padEnd(16)} ${s.state.padEnd(10)} ${s.transport.padEnd(15)} ${s.state === 'idle' ? '  (lazy: connects at the first turn)' : `${String(s.tools).padStart(3)} tools`}${s.error ? `  ! ${s.error}` : ''}`);
  for (const s of servers) for (const k of s.skipped) lines.push(`  ${s.name}: skipped ${k.tool}: ${k.reason}`);
  return lines.join('\n');
}
