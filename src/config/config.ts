import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors/subclasses';

const expandHome = (p: string) => (p === '~' ? os.homedir() : p.startsWith('~/') ? path.join(os.homedir(), p.slice(2)) : p);

const boolFromEnv = z
  .union([z.boolean(), z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'])])
  .transform((v) => (typeof v === 'boolean' ? v : ['1', 'true', 'yes', 'on'].includes(v)));

/** The zod schema of the core configuration. Later modules read their own keys alongside. */
export const MinaraConfigSchema = z.object({
  /** Where the database, sandbox and workspace live. @default ~/.minara */
  dataDir: z.string().min(1).default('~/.minara').transform(expandHome),
  /** Workspace directory. @default `${dataDir}/workspace` */
  workspaceDir: z.string().min(1).transform(expandHome).optional(),
  /** `provider:model`, e.g. `anthropic:claude-sonnet-4-5`. */
  // Any text: a value that is not "provider:model" leaves the model not configured, with the reason (modelConfigStatus).
  model: z.string().optional(),
  /** Base URL for OpenAI-compatible servers (Ollama, LM Studio, vLLM, OpenRouter). */
  baseUrl: z.url().optional(),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('warn'),
  /** Maximum model steps per turn. @default 12 */
  maxSteps: z.coerce.number().int().min(1).max(100).default(12),
  /** HTTP gateway port. @default 8080 */
  gatewayPort: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Bearer token the gateway requires when set. */
  gatewayAuthToken: z.string().min(16, 'must be at least 16 characters').optional(),
  /** Audit every dispatch. @default true */
  audit: boolFromEnv.default(true),
  /**
   * A PostgreSQL URL (`postgres://user:password@host:5432/db`): state lives in that database (every gateway and
   * worker of a fleet points at the same one) instead of the SQLite file under `dataDir`. Needs the `pg` package.
   * Unset: SQLite.
   */
  databaseUrl: z.string().regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// URL').optional(),
  /** The schema of the PostgreSQL database the tables live in (with `databaseUrl`). @default 'public' */
  databaseSchema: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'must be lower-case letters, digits and _').default('public'),
});

/** The resolved configuration. */
export type MinaraConfig = z.output<typeof MinaraConfigSchema> & { readonly workspaceDir: string; readonly dbPath: string };

/** Input to {@link loadConfig}: any subset, as strings (env) or typed values. */
export type MinaraConfigInput = z.input<typeof MinaraConfigSchema>;

const ENV_KEYS: Record<keyof MinaraConfigInput, string> = {
  dataDir: 'MINARA_DATA_DIR',
  workspaceDir: 'MINARA_WORKSPACE_DIR',
  model: 'MINARA_MODEL',
  baseUrl: 'MINARA_MODEL_BASE_URL',
  logLevel: 'MINARA_LOG_LEVEL',
  maxSteps: 'MINARA_MAX_STEPS',
  gatewayPort: 'GATEWAY_PORT',
  gatewayAuthToken: 'GATEWAY_AUTH_TOKEN',
  audit: 'MINARA_AUDIT',
  databaseUrl: 'MINARA_DATABASE_URL',
  databaseSchema: 'MINARA_DATABASE_SCHEMA',
};

/**
 * Resolve the configuration from explicit options over environment variables over defaults.
 * A bad value throws {@link ConfigError} naming each bad field, its env variable and what was expected.
 *
 * @example
 * ```ts
 * const config = loadConfig({ env: process.env, overrides: { dataDir: './data' } });
 * config.dbPath; // ./data/minara.db
 * ```
 */
export function loadConfig(options: { env?: Readonly<Record<string, string | undefined>>; overrides?: Partial<MinaraConfigInput> } = {}): MinaraConfig {
  const { env = process.env, overrides = {} } = options;
  const raw: Record<string, unknown> = {};
  for (const [key, envName] of Object.entries(ENV_KEYS)) {
    const v = env[envName];
    if (v !== undefined && v !== '') raw[key] = v;
  }
  // The model endpoint's old name keeps working for the model only (the Minara API has MINARA_API_BASE_URL).
  if (raw.baseUrl === undefined && env.MINARA_BASE_URL) raw.baseUrl = env.MINARA_BASE_URL;
  for (const [key, v] of Object.entries(overrides)) if (v !== undefined) raw[key] = v;
  // Parsed once per process: zod's compiled fast path (generated code, never in the compile cache) costs more than it saves.
  const parsed = MinaraConfigSchema.safeParse(raw, { jitless: true });
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => i.path.join('.') || '(config)');
    const detail = parsed.error.issues
      .map((i) => {
        const key = i.path.join('.');
        const envName = ENV_KEYS[key as keyof MinaraConfigInput];
        return `${key}${envName ? ` (${envName})` : ''}: ${i.message}`;
      })
      .join('; ');
    throw new ConfigError(`Invalid configuration: ${detail}`, fields);
  }
  const c = parsed.data;
  const dataDir = path.resolve(c.dataDir);
  return { ...c, dataDir, workspaceDir: path.resolve(c.workspaceDir ?? path.join(dataDir, 'workspace')), dbPath: path.join(dataDir, 'minara.db') };
}
