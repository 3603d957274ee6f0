/**
 * The `minara` command: argument parsing and dispatch. It imports only the public API (`@minara/agent`
 * and its subpaths), and only lazily, so `minara --help` and `minara --version` start fast.
 */
import { readFileSync } from 'node:fs';
import type { CliOptions } from './app';
import { enableCompileCache, loadOnlyEnglishZodLocale } from './start-up';

// Before anything loads the native SQLite addon (built for Node ≥ 22, it crashes older ones without a word).
const [nodeMajor = 0, nodeMinor = 0] = process.versions.node.split('.').map(Number);
if (nodeMajor < 22 || (nodeMajor === 22 && nodeMinor < 12)) {
  process.stderr.write(`minara needs Node.js 22.12 or newer (this is ${process.versions.node}). Install a current Node.js (https://nodejs.org) or run it with \`npx -p node@24 minara\`.\n`);
  process.exit(1);
}

// Cache V8 bytecode of the SDK and its dependencies on disk: about a quarter off every later cold start (in the
// user's own directory, never a shared one another user could write: cli/start-up.ts).
enableCompileCache();
// zod's 58 translations of its error messages are not loaded (cli/start-up.ts).
loadOnlyEnglishZodLocale();

const HELP = `minara — the reference CLI of @minara/agent

Usage:
  minara [options]                      Start the interactive REPL (type /help inside)
  minara --dump-prompt [options]        Print the system prompt a new session would send, then exit
  minara demo                           Run a scripted session offline (no model key needed)
  minara serve [--port N] [--host H] [--no-web] [--open]
                                        Start the HTTP gateway and the web app at / (Ctrl-C stops it)
  minara skills add <path|git-url> [--force]
  minara skills list
  minara skills upgrade <id>
  minara skills remove <id>
  minara mcp list                       MCP servers from the config: state, transport, tools
  minara mcp serve [--tool-sets a,b]    Serve the agent's tools to an MCP host over stdio
  minara mcp serve --http [--port N] [--host H]
                                        …or over Streamable HTTP at /mcp (bearer auth as the gateway)
  minara jobs                           Background jobs: schedule, next runs, recent runs
  minara workflows [list] | runs [<name>] | run <run-id> | start <name>
                                        Workflows (code and <workspace>/workflows/*.yaml) and their stored runs
  minara alerts [list [all]] | cancel <id>
                                        Price alerts ("tell me when ETH drops below 3,000")
  minara import openclaw <dir> [--force] | minara import hermes <dir>
                                        Bring an OpenClaw workspace or Hermes memories into the workspace
  minara learning [list|cases]          Methodologies (confidence, uses, state) and pending trade cases
  minara learning accept|graduate|quarantine|reinstate <id> [--force] [--reason text]
                                        The operator's decisions on a methodology
  minara learning seed <file> | reflect [n] | synthesize | page <asset>
  minara preferences [list] | approve|reject <id>
                                        Learned preferences and hard constraints
  minara doctor [--anonymous] [--json]  Health of storage, memory, learning, approvals, workspace, model
  minara doctor --fix [--apply] [--only embeddings,edges,methodology_demotion,reflect_pending]
                                        Idempotent repairs (dry run without --apply)
  minara memory export [--out dir] [--sign] [--include-constraints]
  minara memory import <dir> [--apply] [--approve-hard-constraints]
                                        Learned memory as markdown, and back
  minara memory list [--source chat_extracted] [--category c] [--limit n]
                                        Memories with their source
  minara memory delete <id>             Soft-delete one (what was learned from chat, too)
  minara memory profile [set <k> <v> | delete <k>]
                                        Profile keys and who set each (yours win over the agent's)
  minara memory review | accept <id> | reject <id>
                                        Memories written after reading untrusted content, held for you
  minara audit list [--user id] [--trace id] [--tool name] [--since 24h|ISO] [--limit n] [--json]
  minara audit trace <id> [--json]      What one trace did, in order: signal, skills, calls and results, job run
  minara audit verify [--anchor seq:hash] [--checkpoints file] [--json]
                                        Walk the keyed audit chain against the newest signed checkpoint; exits 1
                                        and names the rows when rows were edited, deleted, reordered, inserted or cut
  minara audit checkpoint               Take a signed checkpoint now (also taken every N rows, T seconds, at close)
  minara audit prove <seq> [--out file] An inclusion proof of one row (Merkle path + signed tree head)
  minara audit verify-proof <file> --public-key <pem file>
                                        Check a proof offline with the public key alone (no data directory needed)
  minara audit public-key               Print the Ed25519 public key checkpoints and proofs are signed with
  minara audit export --format jsonl|csv [--out file] [filters]
  minara breakers [list] | status [--user id] [--json]
                                        Circuit breakers: who is halted and why, limits and current measures
  minara breakers reset <user> [--reason text]
  minara breakers set <user> maxConsecutiveLosses=5 … | clear
                                        A person resets a tripped breaker; per-user limits
  minara shadow report [--since 7d|ISO] [--json]
                                        Shadow mode: the agent's shadow fills against the market and holding
  minara backtest run --synthetic --strategy sma-cross [--fast 10 --slow 30] [--out dir]
  minara backtest run --data prices.csv [--strategy momentum] [--fee-bps 10] [--slippage-bps 5]
                                        Backtest a strategy (with buy-and-hold and random baselines) into a
                                        run folder: metrics, CSVs, report.html (minara backtest --help)
  minara approvals [list]               Pending approvals
  minara approvals approve|deny <id> [--reason text]
                                        Decide one (an MCP host's call runs when the host calls again)
  minara grants list|create|revoke      Grants for autonomous runs: tools or tool sets, sources, caps per
                                        call and per day in USD, expiry (docs/operations.md)
  minara stop [--global] [--release] [--user u] [--reason text] | minara stop status
                                        The emergency stop: a user's, or everyone's (--global)
  minara tools list | disable|enable <tool-set> [--user u]
                                        Capability switches: turn a user's tool set off or on
  minara usage [--user u | --all] | minara usage set <user> [--rpm N] [--usd-per-day USD]
                                        Where each user stands against the quotas; set a user's limits
  minara --version                      Print the version
  minara --help                         Show this help

Options:
  --workspace <dir>          Workspace directory (default: <data-dir>/workspace, or MINARA_WORKSPACE_DIR)
  --data-dir <dir>           Data directory: database, sandbox, skills, history (default: ~/.minara, or MINARA_DATA_DIR)
  --model <provider:model>   The model, e.g. anthropic:claude-sonnet-4-5 (default: MINARA_MODEL and provider keys)
  --mcp-config <path>        MCP servers (mcp.json; default: MINARA_MCP_CONFIG, else <workspace>/mcp.json)
  --verbose                  REPL: also show the background jobs at start and the skills each turn activates (/verbose)

Without a model the REPL still starts and every slash command works; a message explains how to configure one.
`;

/** A bad command line: printed with a hint, exit code 2. */
class UsageError extends Error {}

interface Parsed {
  readonly command: 'repl' | 'help' | 'version' | 'dump-prompt' | 'demo' | 'serve' | 'skills' | 'mcp' | 'approvals' | 'jobs' | 'import' | 'learning' | 'preferences' | 'doctor' | 'memory' | 'workflows' | 'alerts' | 'audit' | 'breakers' | 'shadow';
  readonly options: CliOptions;
  readonly positionals: readonly string[];
  readonly port?: number | undefined;
  readonly host?: string | undefined;
  readonly force: boolean;
  /** `--http` (mcp serve) */
  readonly http: boolean;
  /** `--tool-sets a,b` (mcp serve) */
  readonly toolSets?: readonly string[] | undefined;
  /** `--reason text` (approvals) */
  readonly reason?: string | undefined;
  /** doctor and memory export/import flags */
  readonly ops: {
    anonymous: boolean; json: boolean; fix: boolean; apply: boolean; only?: readonly string[] | undefined; out?: string | undefined; sign: boolean; includeConstraints: boolean;
    approveHardConstraints: boolean; source?: string | undefined; category?: string | undefined; limit?: number | undefined;
  };
  /** `--no-web` (serve) */
  readonly noWeb: boolean;
  /** `--no-background` (serve, the REPL) */
  readonly noBackground: boolean;
  /** `--verbose` (the REPL) */
  readonly verbose: boolean;
  /** `--open` (serve): open the one-time login link in the browser */
  readonly open: boolean;
  /** audit, breakers and shadow flags */
  readonly controls: { user?: string | undefined; trace?: string | undefined; tool?: string | undefined; since?: string | undefined; limit?: string | undefined; format?: string | undefined; out?: string | undefined; anchor?: string | undefined; checkpoints?: string | undefined; publicKey?: string | undefined; json: boolean; reason?: string | undefined };
}

const VALUE_FLAGS = new Set(['--workspace', '--data-dir', '--model', '--mcp-config', '--port', '--host', '--tool-sets', '--reason', '--only', '--out', '--source', '--category',
  '--user', '--trace', '--tool', '--since', '--limit', '--format', '--anchor', '--checkpoints', '--public-key']);
const BOOLEAN_FLAGS = new Set([
  '--help', '-h', '--version', '-v', '--verbose', '--dump-prompt', '--force', '--http', '--no-web', '--no-background', '--open', '--anonymous', '--json', '--fix', '--apply', '--sign',
  '--include-constraints', '--approve-hard-constraints',
]);
const COMMANDS = new Set(['demo', 'serve', 'skills', 'mcp', 'approvals', 'jobs', 'import', 'learning', 'preferences', 'doctor', 'memory', 'workflows', 'alerts', 'help', 'grants', 'stop', 'tools', 'usage', 'audit', 'breakers', 'shadow']);
/** Flags only some commands accept. */
const ONLY_FOR: Readonly<Record<string, readonly string[]>> = {
  '--port': ['serve', 'mcp'],
  '--host': ['serve', 'mcp'],
  '--force': ['skills', 'import', 'learning'],
  '--http': ['mcp'],
  '--tool-sets': ['mcp'],
  '--reason': ['approvals', 'learning', 'breakers'],
  '--no-web': ['serve'],
  '--open': ['serve'],
  '--no-background': ['serve', 'repl'],
  '--verbose': ['repl'],
  '--anonymous': ['doctor'],
  '--json': ['doctor', 'audit', 'breakers', 'shadow'],
  '--fix': ['doctor'],
  '--only': ['doctor'],
  '--apply': ['doctor', 'memory'],
  '--out': ['memory', 'audit'],
  '--user': ['audit', 'breakers', 'shadow'],
  '--trace': ['audit'],
  '--tool': ['audit'],
  '--since': ['audit', 'shadow'],
  '--format': ['audit'],
  '--anchor': ['audit'],
  '--checkpoints': ['audit'],
  '--public-key': ['audit'],
  '--sign': ['memory'],
  '--include-constraints': ['memory'],
  '--approve-hard-constraints': ['memory'],
  '--source': ['memory'],
  '--category': ['memory'],
  '--limit': ['memory', 'audit'],
};

export function parseArgs(argv: readonly string[]): Parsed {
  const values = new Map<string, string>();
  const flags = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg.startsWith('-') && arg !== '-') {
      const eq = arg.indexOf('=');
      const name = eq > 0 ? arg.slice(0, eq) : arg;
      if (VALUE_FLAGS.has(name)) {
        const value = eq > 0 ? arg.slice(eq + 1) : argv[++i];
        if (value === undefined || value === '' || (eq < 0 && value.startsWith('--'))) throw new UsageError(`option ${name} needs a value`);
        values.set(name, value);
      } else if (BOOLEAN_FLAGS.has(name) && eq < 0) flags.add(name);
      else throw new UsageError(`unknown option ${name}`);
      continue;
    }
    positionals.push(arg);
  }

  let command: Parsed['command'] = 'repl';
  const first = positionals[0];
  if (first !== undefined) {
    if (!COMMANDS.has(first)) throw new UsageError(`unknown command "${first}"`);
    command = first === 'help' ? 'help' : (first as Parsed['command']);
    positionals.shift();
  }
  if (flags.has('--help') || flags.has('-h')) command = 'help';
  else if (flags.has('--version') || flags.has('-v')) command = 'version';
  else if (flags.has('--dump-prompt')) {
    if (first !== undefined) throw new UsageError(`--dump-prompt cannot be combined with "${first}"`);
    command = 'dump-prompt';
  }
  for (const flag of [...values.keys(), ...flags]) {
    const only = ONLY_FOR[flag];
    if (only && !only.includes(command) && command !== 'help') throw new UsageError(`option ${flag} only applies to ${only.map((c) => (c === 'repl' ? 'the REPL ("minara")' : `"minara ${c}"`)).join(' and ')}`);
  }
  if (command === 'repl' || command === 'dump-prompt' || command === 'demo' || command === 'serve' || command === 'jobs') {
    if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  }

  const model = values.get('--model');
  if (model !== undefined && !/^[a-z][a-z0-9-]*:.+$/.test(model)) throw new UsageError(`--model expects "provider:model", e.g. anthropic:claude-sonnet-4-5, got "${model}"`);
  let port: number | undefined;
  const rawPort = values.get('--port');
  if (rawPort !== undefined) {
    if (!/^\d{1,5}$/.test(rawPort) || Number(rawPort) > 65535) throw new UsageError(`--port expects a number from 0 to 65535, got "${rawPort}"`);
    port = Number(rawPort);
  }
  const options: CliOptions = {
    ...(values.has('--workspace') ? { workspace: values.get('--workspace') } : {}),
    ...(values.has('--data-dir') ? { dataDir: values.get('--data-dir') } : {}),
    ...(values.has('--model') ? { model: values.get('--model') } : {}),
    ...(values.has('--mcp-config') ? { mcpConfig: values.get('--mcp-config') } : {}),
  };
  const rawSets = values.get('--tool-sets');
  const toolSets = rawSets?.split(',').map((s) => s.trim());
  if (toolSets?.some((s) => s === '')) throw new UsageError(`--tool-sets expects comma-separated tool-set names, e.g. read,memory, got "${rawSets}"`);
  const rawOnly = values.get('--only');
  const only = rawOnly?.split(',').map((s) => s.trim());
  if (only?.some((s) => s === '')) throw new UsageError(`--only expects comma-separated fix names, e.g. embeddings,edges, got "${rawOnly}"`);
  const rawLimit = values.get('--limit');
  if (rawLimit !== undefined && (!/^\d{1,4}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > 1000)) throw new UsageError(`--limit expects a number from 1 to 1000, got "${rawLimit}"`);
  const ops = {
    anonymous: flags.has('--anonymous'), json: flags.has('--json'), fix: flags.has('--fix'), apply: flags.has('--apply'), only, out: values.get('--out'), sign: flags.has('--sign'),
    includeConstraints: flags.has('--include-constraints'), approveHardConstraints: flags.has('--approve-hard-constraints'),
    source: values.get('--source'), category: values.get('--category'), limit: rawLimit === undefined ? undefined : Number(rawLimit),
  };
  return { command, options, positionals, port, host: values.get('--host'), force: flags.has('--force'), http: flags.has('--http'), toolSets, reason: values.get('--reason'), ops, noWeb: flags.has('--no-web'), noBackground: flags.has('--no-background'), verbose: flags.has('--verbose'), open: flags.has('--open'),
    controls: {
      user: values.get('--user'), trace: values.get('--trace'), tool: values.get('--tool'), since: values.get('--since'), limit: values.get('--limit'), format: values.get('--format'),
      out: values.get('--out'), anchor: values.get('--anchor'), checkpoints: values.get('--checkpoints'), publicKey: values.get('--public-key'), json: flags.has('--json'), reason: values.get('--reason'),
    } };
}

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** The operator's controls parse their own flags (cli/controls-command.ts). */
const CONTROL_COMMANDS = new Set(['grants', 'stop', 'tools', 'usage']);

async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'backtest') {
    const { runBacktestCli } = await import('./backtest-command');
    return runBacktestCli(argv.slice(1));
  }
  if (argv[0] !== undefined && CONTROL_COMMANDS.has(argv[0]) && !argv.includes('--help') && !argv.includes('-h')) {
    const { runControlsCli } = await import('./controls-command');
    return runControlsCli(argv);
  }
  let parsed: Parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`minara: ${error.message}\nRun "minara --help" for usage.\n`);
    return 2;
  }
  const { options } = parsed;
  switch (parsed.command) {
    case 'help':
      process.stdout.write(HELP);
      return 0;
    case 'version':
      process.stdout.write(`${version()}\n`);
      return 0;
    case 'demo': {
      const { runDemo } = await import('./demo');
      return runDemo({ write: (s) => process.stdout.write(s) });
    }
    case 'dump-prompt': {
      const { buildApp } = await import('./app');
      const app = await buildApp(options);
      try {
        process.stdout.write(`${await app.runtime.buildSystemPrompt({ sessionId: `dump-${Date.now()}` })}\n`);
      } finally {
        await app.close();
      }
      return 0;
    }
    case 'serve': {
      const { runServe } = await import('./serve');
      return runServe(options, { port: parsed.port, host: parsed.host, web: !parsed.noWeb, background: !parsed.noBackground, open: parsed.open });
    }
    case 'skills': {
      const { runSkillsCommand } = await import('./skills-command');
      return runSkillsCommand(options, parsed.positionals, { force: parsed.force });
    }
    case 'mcp': {
      const { runMcpCommand } = await import('./mcp-command');
      return runMcpCommand(options, parsed.positionals, { http: parsed.http, port: parsed.port, host: parsed.host, toolSets: parsed.toolSets });
    }
    case 'jobs': {
      const [{ buildApp }, { formatJobs }] = await Promise.all([import('./app'), import('./slash-commands')]);
      const app = await buildApp(options, { mcp: false });
      try {
        process.stdout.write(`${await formatJobs(app)}\n`);
      } finally {
        await app.close();
      }
      return 0;
    }
    case 'import': {
      const { runImportCommand } = await import('./import-command');
      return runImportCommand(options, parsed.positionals, { force: parsed.force });
    }
    case 'doctor': {
      const { runDoctorCommand } = await import('./ops-command');
      return runDoctorCommand(options, parsed.positionals, parsed.ops);
    }
    case 'memory': {
      const { runMemoryCommand } = await import('./ops-command');
      return runMemoryCommand(options, parsed.positionals, { ...parsed.ops, interactive: Boolean(process.stdin.isTTY && process.stdout.isTTY) });
    }
    case 'learning':
    case 'preferences': {
      const { runLearningCli } = await import('./learning-command');
      return runLearningCli(options, parsed.command, parsed.positionals, { reason: parsed.reason, force: parsed.force });
    }
    case 'workflows':
    case 'alerts': {
      const { runAutomationCli } = await import('./automation-command');
      return runAutomationCli(options, parsed.command, parsed.positionals);
    }
    case 'breakers': {
      const { runBreakersCommand } = await import('./breakers-command');
      return runBreakersCommand(options, parsed.positionals, parsed.controls);
    }
    case 'shadow': {
      const { runShadowCommand } = await import('./shadow-command');
      return runShadowCommand(options, parsed.positionals, parsed.controls);
    }
    case 'audit': {
      const { runAuditCommand } = await import('./audit-command');
      return runAuditCommand(options, parsed.positionals, parsed.controls);
    }
    case 'approvals': {
      const { runApprovalsCommand } = await import('./approvals-command');
      return runApprovalsCommand(options, parsed.positionals, { reason: parsed.reason });
    }
    case 'repl': {
      const [{ buildApp, createCliLogger }, { runRepl }, { tradingModeLine }] = await Promise.all([import('./app'), import('./repl'), import('./serve')]);
      // The REPL prints a failed turn's error itself: the log line would say it twice.
      const app = await buildApp(options, { logger: createCliLogger({ hideTurnErrors: true }) });
      if (!parsed.noBackground) {
        await app.background.syncSchedule();
        app.background.start();
      }
      const isTTY = Boolean(process.stdin.isTTY && process.stdout.isTTY);
      try {
        await runRepl({
          app, input: process.stdin, output: process.stdout, isTTY, handleProcessSignals: !isTTY, banner: `minara ${version()}\n${tradingModeLine(app)}`, verbose: parsed.verbose,
          backgroundInfo: parsed.noBackground ? 'background: off (--no-background)' : `${app.background.describe()} (--no-background to turn off)`,
        });
      } finally {
        await app.close();
      }
      return 0;
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // Serve keeps its own lifetime; everything else is done: don't wait on idle handles (stdin, timers).
    process.exit(code);
  },
  (error: unknown) => {
    const e = error as { code?: unknown; message?: unknown };
    process.stderr.write(`minara: ${typeof e?.code === 'string' ? `${e.code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
