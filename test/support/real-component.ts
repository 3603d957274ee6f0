/**
 * Tests that need a real component which a fresh machine may lack (PostgreSQL binaries, Chromium, an MCP
 * server from npm) call this once at module level. Without the component they skip loudly; with
 * `MINARA_REQUIRE_REAL_COMPONENTS=1` (set by `.ci/run`, which installs them) the missing component fails
 * the run instead of skipping.
 */
export function realComponent(name: string, available: boolean, howToInstall: string): boolean {
  if (available) return true;
  const message = `${name} is not available on this machine: ${howToInstall}`;
  if (process.env.MINARA_REQUIRE_REAL_COMPONENTS === '1') {
    throw new Error(`${message} (MINARA_REQUIRE_REAL_COMPONENTS=1 turns this skip into a failure)`);
  }
  console.warn(`\n[SKIPPED] ${message}\n`);
  return false;
}
