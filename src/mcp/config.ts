import { readFile } from 'node:fs/promises';
import { ConfigError } from '../errors/subclasses';
import { PermissionTier } from '../safety/permission-tier';

/** Per-tool settings an operator gives a server's tool. */
export interface McpToolSettings {
  /** The tool's tier, overriding the server's and the annotations'. */
  readonly tier?: PermissionTier | undefined;
  /** Do not register the tool at all. */
  readonly hidden?: boolean | undefined;
}

/** What every server entry may carry besides how to reach it (the operator's policy). */
interface McpServerPolicy {
  /**
   * Tier of every tool of this server unless a tool sets its own. Without it a tool is CONFIRM_ONCE, lowered
   * to READ_ONLY by `readOnlyHint: true` only when {@link trustAnnotations} is set, and raised to
   * ALWAYS_CONFIRM by `destructiveHint: true` (raising needs no trust).
   */
  readonly tier?: PermissionTier | undefined;
  /** Per-tool settings, by the server's own tool name. */
  readonly tools?: Readonly<Record<string, McpToolSettings>> | undefined;
  /** Let `readOnlyHint` lower a tool to READ_ONLY. @default false */
  readonly trustAnnotations?: boolean | undefined;
  /** Let autonomous sources (cron, webhook, workflow) call this server's tools at all. @default false */
  readonly allowAutonomous?: boolean | undefined;
  /**
   * The operator vouches for this server's output (their own server over their own data): its results do not label
   * the turn untrusted. @default false (an MCP tool's result is untrusted content, `mcp:<server>/<tool>`)
   */
  readonly trusted?: boolean | undefined;
  /**
   * Connect at the first turn (its tools join the registry at that turn boundary) instead of at startup, so a
   * command or session that never runs a turn never starts the server. @default false (eager)
   */
  readonly lazy?: boolean | undefined;
  /** Time for `initialize` and `tools/list`, in ms. @default 10000 */
  readonly connectTimeoutMs?: number | undefined;
  /** Time for one tool call, in ms (also the registry timeout of its tools). @default 60000 */
  readonly callTimeoutMs?: number | undefined;
  /** Text kept from one result, in bytes (UTF-8); the rest is cut with a note. @default 65536 */
  readonly maxResultBytes?: number | undefined;
}

/** A server started as a child process that talks MCP on stdin/stdout. */
export interface McpStdioServerConfig extends McpServerPolicy {
  readonly command: string;
  readonly args?: readonly string[] | undefined;
  /** Added to a minimal safe environment (PATH, HOME, …), not to the whole parent environment. */
  readonly env?: Readonly<Record<string, string>> | undefined;
  readonly cwd?: string | undefined;
}

/** A server reached over Streamable HTTP (with the SSE transport as a fallback). */
export interface McpHttpServerConfig extends McpServerPolicy {
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

/** One server entry. */
export type McpServerConfig = McpStdioServerConfig | McpHttpServerConfig;

/** The shape other MCP hosts use: `{ "mcpServers": { "<name>": { … } } }`. */
export interface McpConfig {
  readonly mcpServers: Readonly<Record<string, McpServerConfig>>;
}

const TIERS = new Set<number>([PermissionTier.READ_ONLY, PermissionTier.CONFIRM_ONCE, PermissionTier.ALWAYS_CONFIRM, PermissionTier.MANUAL_ONLY]);
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$/;
const POLICY_KEYS = ['tier', 'tools', 'trustAnnotations', 'allowAutonomous', 'trusted', 'lazy', 'connectTimeoutMs', 'callTimeoutMs', 'maxResultBytes'];

const fail = (field: string, message: string): never => {
  throw new ConfigError(`mcp: ${field}: ${message}`, [field]);
};

/**
 * Replace `${NAME}` in a string with `env.NAME`; a missing variable is an error naming it and the field
 * (never the value). `$${…}` stays literal.
 */
function expand(value: string, env: Readonly<Record<string, string | undefined>>, field: string): string {
  return value.replace(/\$?\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, name: string) => {
    if (match.startsWith('$$')) return match.slice(1);
    const v = env[name];
    if (v === undefined) fail(field, `environment variable ${name} is not set`);
    return v as string;
  });
}

function stringRecord(value: unknown, field: string, env: Readonly<Record<string, string | undefined>>): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(field, 'expected an object of strings');
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (typeof v !== 'string') fail(`${field}.${k}`, `expected a string, got ${typeof v}`);
    out[k] = expand(v as string, env, `${field}.${k}`);
  }
  return out;
}

function positive(value: unknown, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) fail(field, `expected a positive integer, got ${JSON.stringify(value)}`);
  return value as number;
}

function tier(value: unknown, field: string): PermissionTier | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !TIERS.has(value)) fail(field, `expected a permission tier 1–4, got ${JSON.stringify(value)}`);
  return value as PermissionTier;
}

function bool(value: unknown, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') fail(field, `expected true or false, got ${JSON.stringify(value)}`);
  return value as boolean;
}

function parseServer(name: string, raw: unknown, env: Readonly<Record<string, string | undefined>>): McpServerConfig {
  const at = `mcpServers.${name}`;
  if (!SERVER_NAME.test(name)) fail(at, 'a server name is 1–48 letters, digits, "_", "." or "-", starting with a letter or digit');
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(at, 'expected an object with "command" or "url"');
  const o = raw as Record<string, unknown>;
  const hasCommand = o.command !== undefined;
  const hasUrl = o.url !== undefined;
  if (hasCommand === hasUrl) fail(at, 'give exactly one of "command" (stdio) or "url" (Streamable HTTP)');
  const known = new Set([...POLICY_KEYS, ...(hasCommand ? ['command', 'args', 'env', 'cwd'] : ['url', 'headers']), 'type', 'description']);
  for (const key of Object.keys(o)) if (!known.has(key)) fail(`${at}.${key}`, `unknown field (expected one of ${[...known].join(', ')})`);
  let tools: Record<string, McpToolSettings> | undefined;
  if (o.tools !== undefined) {
    if (typeof o.tools !== 'object' || o.tools === null || Array.isArray(o.tools)) fail(`${at}.tools`, 'expected an object keyed by tool name');
    tools = {};
    for (const [toolName, settings] of Object.entries(o.tools as Record<string, unknown>)) {
      const f = `${at}.tools.${toolName}`;
      if (typeof settings !== 'object' || settings === null) fail(f, 'expected { tier?, hidden? }');
      const s = settings as Record<string, unknown>;
      for (const key of Object.keys(s)) if (key !== 'tier' && key !== 'hidden') fail(`${f}.${key}`, 'unknown field (expected tier or hidden)');
      tools[toolName] = { tier: tier(s.tier, `${f}.tier`), hidden: bool(s.hidden, `${f}.hidden`) };
    }
  }
  const policy: McpServerPolicy = {
    tier: tier(o.tier, `${at}.tier`),
    tools,
    trustAnnotations: bool(o.trustAnnotations, `${at}.trustAnnotations`),
    allowAutonomous: bool(o.allowAutonomous, `${at}.allowAutonomous`),
    trusted: bool(o.trusted, `${at}.trusted`),
    lazy: bool(o.lazy, `${at}.lazy`),
    connectTimeoutMs: positive(o.connectTimeoutMs, `${at}.connectTimeoutMs`),
    callTimeoutMs: positive(o.callTimeoutMs, `${at}.callTimeoutMs`),
    maxResultBytes: positive(o.maxResultBytes, `${at}.maxResultBytes`),
  };
  if (hasCommand) {
    if (typeof o.command !== 'string' || o.command === '') fail(`${at}.command`, 'expected a non-empty string');
    if (o.args !== undefined && (!Array.isArray(o.args) || o.args.some((a) => typeof a !== 'string'))) fail(`${at}.args`, 'expected an array of strings');
    if (o.cwd !== undefined && typeof o.cwd !== 'string') fail(`${at}.cwd`, 'expected a string');
    return {
      ...policy,
      command: expand(o.command as string, env, `${at}.command`),
      args: ((o.args as string[] | undefined) ?? []).map((a, i) => expand(a, env, `${at}.args[${i}]`)),
      env: stringRecord(o.env, `${at}.env`, env),
      cwd: o.cwd === undefined ? undefined : expand(o.cwd as string, env, `${at}.cwd`),
    };
  }
  if (typeof o.url !== 'string') fail(`${at}.url`, 'expected a URL string');
  const url = expand(o.url as string, env, `${at}.url`);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) fail(`${at}.url`, 'expected an http: or https: URL');
  return { ...policy, url, headers: stringRecord(o.headers, `${at}.headers`, env) };
}

/**
 * Check an MCP configuration and expand `${ENV}` references in `command`, `args`, `env`, `cwd`, `url` and
 * `headers`. Throws `ConfigError` naming the field (`mcpServers.<name>.<field>`) on a bad shape, an unknown
 * field or a missing variable; the values of variables never appear in errors.
 *
 * @example
 * ```ts
 * const config = parseMcpConfig(
 *   { mcpServers: { github: { url: 'https://api.githubcopilot.com/mcp/', headers: { Authorization: 'Bearer ${GITHUB_TOKEN}' } } } },
 *   process.env,
 * );
 * ```
 */
export function parseMcpConfig(raw: unknown, env: Readonly<Record<string, string | undefined>> = process.env): McpConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail('config', 'expected an object { "mcpServers": { … } }');
  const servers = (raw as { mcpServers?: unknown }).mcpServers;
  if (servers === undefined) return { mcpServers: {} };
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) fail('mcpServers', 'expected an object keyed by server name');
  const out: Record<string, McpServerConfig> = {};
  for (const [name, entry] of Object.entries(servers as Record<string, unknown>)) out[name] = parseServer(name, entry, env);
  return { mcpServers: out };
}

/** Read and check an `mcp.json` file (see {@link parseMcpConfig}); a missing file is an empty config. */
export async function loadMcpConfigFile(path: string, env: Readonly<Record<string, string | undefined>> = process.env): Promise<McpConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { mcpServers: {} };
    throw new ConfigError(`mcp: cannot read ${path}: ${(error as Error).message}`, ['mcpConfig']);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`mcp: ${path} is not valid JSON: ${(error as Error).message}`, ['mcpConfig']);
  }
  return parseMcpConfig(json, env);
}
