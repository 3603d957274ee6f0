/**
 * Build the app the CLI runs: `createApp` with the REPL surface and the data and workspace directories from
 * the command line. The finance pack comes with `createApp`: paper trading on the simulated market unless
 * the environment says otherwise (`MINARA_API_KEY` for market data, `MINARA_TRADING=live`).
 */
import type { LanguageModel } from 'ai';
import { createApp, type CreateAppOptions, type Logger, type LogFields, type LogLevel, type MinaraApp, CLI_MODEL_HELP } from '@minara/agent';

/** The global options every command accepts. */
export interface CliOptions {
  /** `--workspace <dir>` */
  readonly workspace?: string | undefined;
  /** `--data-dir <dir>` */
  readonly dataDir?: string | undefined;
  /** `--model provider:model` */
  readonly model?: string | undefined;
  /** `--mcp-config <path>`: an mcp.json (default: MINARA_MCP_CONFIG, else <workspace>/mcp.json) */
  readonly mcpConfig?: string | undefined;
}

const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];
const NO_MODEL = CLI_MODEL_HELP.split('\n')[0]!;

/**
 * Log lines for people (`minara: warn: message (key=value)`) on stderr, at MINARA_LOG_LEVEL (default
 * warn). A turn that failed only because no model is configured is not logged: the REPL already says so.
 * With `hideTurnErrors` (the REPL, which shows a failed turn's error itself) no "turn failed" line is logged.
 */
export function createCliLogger(options: { level?: string | undefined; write?: (line: string) => void; hideTurnErrors?: boolean | undefined } = {}): Logger {
  const requested = (options.level ?? process.env['MINARA_LOG_LEVEL'] ?? 'warn') as LogLevel;
  const min = LEVELS.indexOf(LEVELS.includes(requested) ? requested : 'warn');
  const write = options.write ?? ((line: string) => process.stderr.write(`${line}\n`));
  const emit = (level: Exclude<LogLevel, 'silent'>) => (message: string, fields?: LogFields) => {
    if (LEVELS.indexOf(level) < min) return;
    if (fields && typeof fields['error'] === 'string' && fields['error'].includes(NO_MODEL)) return;
    if (options.hideTurnErrors && message === 'turn failed') return;
    const rest = Object.entries(fields ?? {}).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
    write(`minara: ${level}: ${message}${rest.length ? ` (${rest.join(', ')})` : ''}`);
  };
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') };
}

/** Options of {@link buildApp} beyond the command line (tests and the demo inject these). */
export interface BuildAppExtras {
  /** A model object (the demo's scripted model); wins over `--model`. */
  readonly model?: LanguageModel | undefined;
  readonly env?: CreateAppOptions['env'];
  readonly envFileDir?: CreateAppOptions['envFileDir'];
  /** The finance pack's options, or `false` for none. @default createApp's: paper trading on the simulated market */
  readonly finance?: CreateAppOptions['finance'];
  readonly packs?: CreateAppOptions['packs'];
  readonly tools?: CreateAppOptions['tools'];
  readonly logger?: CreateAppOptions['logger'];
  readonly now?: CreateAppOptions['now'];
  /** @default 'repl' */
  readonly surface?: string | undefined;
  /** `false`: connect no MCP servers even when configured (commands that do not use their tools). */
  readonly mcp?: false | undefined;
}

export async function buildApp(options: CliOptions = {}, extras: BuildAppExtras = {}): Promise<MinaraApp> {
  const model = extras.model ?? options.model;
  return createApp({
    surface: extras.surface ?? 'repl',
    modelHelp: CLI_MODEL_HELP,
    config: {
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.workspace ? { workspaceDir: options.workspace } : {}),
    },
    ...(model !== undefined ? { model } : {}),
    ...(extras.mcp === false ? { mcp: false as const } : options.mcpConfig ? { mcp: options.mcpConfig } : {}),
    ...(extras.finance !== undefined ? { finance: extras.finance } : {}),
    ...(extras.packs ? { packs: extras.packs } : {}),
    ...(extras.tools ? { tools: extras.tools } : {}),
    ...(extras.env ? { env: extras.env } : {}),
    ...(extras.envFileDir !== undefined ? { envFileDir: extras.envFileDir } : {}),
    logger: extras.logger ?? createCliLogger(),
    ...(extras.now ? { now: extras.now } : {}),
  });
}
