import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseEnv } from 'node:util';

/** Where a variable's value came from. */
export type EnvSource = 'shell' | 'file';

/** What {@link loadEnv} did, for start-up logs. */
export interface LoadEnvResult {
  /** Absolute path of the env file looked for. */
  readonly path: string;
  /** True when the file existed and was read. */
  readonly loaded: boolean;
  /** For every variable the file defines: `file` when it was applied, `shell` when the shell already had it. */
  readonly sources: Readonly<Record<string, EnvSource>>;
  /** Variables the file set. */
  readonly fromFile: readonly string[];
  /** Variables the file also defines but the shell value was kept. */
  readonly shadowedByShell: readonly string[];
}

/** Options for {@link loadEnv}. */
export interface LoadEnvOptions {
  /** Env file path, relative to `cwd`. @default '.env' */
  readonly path?: string | undefined;
  /** @default process.cwd() */
  readonly cwd?: string | undefined;
  /** The environment to fill. With `process.env`, Node's `process.loadEnvFile` does the work. @default process.env */
  readonly env?: Record<string, string | undefined> | undefined;
}

/**
 * Load `.env` when present, never overriding a variable the shell already set, and report which
 * variables came from where. Call it first in every entry point, before anything reads the env.
 *
 * @example
 * ```ts
 * const { loaded, fromFile } = loadEnv();
 * if (loaded) logger.info('env loaded', { fromFile });
 * ```
 */
export function loadEnv(options: LoadEnvOptions = {}): LoadEnvResult {
  const { path: file = '.env', cwd = process.cwd(), env = process.env } = options;
  const abs = path.resolve(cwd, file);
  if (!existsSync(abs)) return { path: abs, loaded: false, sources: {}, fromFile: [], shadowedByShell: [] };
  const parsed = parseEnv(readFileSync(abs, 'utf8')) as Record<string, string>;
  const sources: Record<string, EnvSource> = {};
  const fromFile: string[] = [];
  const shadowedByShell: string[] = [];
  for (const key of Object.keys(parsed)) {
    if (env[key] !== undefined) {
      sources[key] = 'shell';
      shadowedByShell.push(key);
    } else {
      sources[key] = 'file';
      fromFile.push(key);
    }
  }
  if (env === process.env) {
    // Node's loader keeps variables already set in the shell.
    process.loadEnvFile(abs);
  } else {
    for (const key of fromFile) env[key] = parsed[key];
  }
  return { path: abs, loaded: true, sources, fromFile, shadowedByShell };
}
