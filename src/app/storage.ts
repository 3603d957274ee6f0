import type { Storage } from '../storage/types';
import { ensurePrivateDirSync } from '../util/private-fs';
import type { DisposerStack } from './disposers';
import type { AppSettings } from './settings';

/**
 * The storage part: the data directory made private (0700), then the given storage, else PostgreSQL when
 * `MINARA_DATABASE_URL` is set (a fleet's shared database), else the SQLite file under `dataDir`. Storage the
 * app opened is closed last.
 */
export async function openAppStorage(settings: AppSettings, disposers: DisposerStack): Promise<Storage> {
  const { options, config, logger, now } = settings;
  // The data directory is the owner's alone (0700), whatever the umask: other local users read nothing in it.
  ensurePrivateDirSync(config.dataDir);
  // Loaded only here, so importing the package root never loads the native SQLite addon.
  const storage =
    options.storage ??
    (config.databaseUrl !== undefined
      ? await (await import('../storage/postgres/index')).createPostgresStorage({ connectionString: config.databaseUrl, schema: config.databaseSchema, logger, now })
      : (await import('../storage/sqlite/index')).createSqliteStorage({ path: config.dbPath, logger, now }));
  if (options.storage === undefined) disposers.push(() => storage.close());
  return storage;
}
