import { definedOnly } from '../util/defined';
import { loadConfig, type MinaraConfig } from '../config/config';
import { loadEnv, type LoadEnvResult } from '../config/load-env';
import { createEventBus, type MinaraBus } from '../events/bus';
import { endpointWarnings } from '../llm/resolve-model';
import { createConsoleLogger, type Logger } from '../util/logger';
import type { CreateAppOptions } from './types';

/** What every part of the app reads: the options, the environment, the config and the shared seams. */
export interface AppSettings {
  readonly options: CreateAppOptions;
  /** The environment (a copy of `options.env`, or `process.env`), filled from `.env`. */
  readonly env: Record<string, string | undefined>;
  readonly envLoad: LoadEnvResult | undefined;
  readonly config: MinaraConfig;
  readonly logger: Logger;
  readonly bus: MinaraBus;
  readonly now: () => Date;
  /** The operator: the tenant when a run gives none. */
  readonly userId: string;
}

/** The first part: load `.env`, the config (options over env over defaults), the logger, the bus and the clock. */
export function resolveAppSettings(options: CreateAppOptions): AppSettings {
  // A given env is copied (and the .env file fills the copy); otherwise process.env is used and filled.
  const env: Record<string, string | undefined> = options.env ? { ...options.env } : process.env;
  const envLoad = options.envFileDir === false ? undefined : loadEnv({ cwd: options.envFileDir ?? process.cwd(), env });
  const config = loadConfig({ env, overrides: { ...definedOnly(options.config), ...(typeof options.model === 'string' ? { model: options.model } : {}) } });
  const logger = options.logger ?? createConsoleLogger({ level: config.logLevel });
  const bus = options.bus ?? createEventBus();
  const now = options.now ?? (() => new Date());
  const userId = options.userId ?? 'default';
  for (const warning of endpointWarnings(env)) logger.warn(warning);
  return { options, env, envLoad, config, logger, bus, now, userId };
}
