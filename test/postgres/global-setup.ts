/**
 * Vitest global setup: one throwaway PostgreSQL server for the whole run (when the server binaries are on
 * PATH), its URL in `MINARA_TEST_POSTGRES_URL` for the suites that run their engines against it. Stopped and
 * removed at the end. Without the binaries nothing starts; the real-server suites skip loudly (or fail under
 * `MINARA_REQUIRE_REAL_COMPONENTS=1`).
 */
import { serverBinariesAvailable, startRealPostgres, type RealPostgres } from './support';

let server: RealPostgres | undefined;

export async function setup(): Promise<void> {
  if (process.env.MINARA_TEST_POSTGRES_URL !== undefined || !serverBinariesAvailable()) return;
  server = await startRealPostgres();
  process.env.MINARA_TEST_POSTGRES_URL = server.url;
}

export async function teardown(): Promise<void> {
  server?.stop();
}
