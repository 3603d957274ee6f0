import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const src = (p: string) => fileURLToPath(new URL(`./src/${p}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@minara\/agent\/sqlite$/, replacement: src('storage/sqlite/index.ts') },
      { find: /^@minara\/agent\/postgres$/, replacement: src('storage/postgres/index.ts') },
      { find: /^@minara\/agent\/testing$/, replacement: src('testing/index.ts') },
      { find: /^@minara\/agent\/gateway$/, replacement: src('gateway/index.ts') },
      { find: /^@minara\/agent\/finance$/, replacement: src('finance/index.ts') },
      { find: /^@minara\/agent\/mcp$/, replacement: src('mcp/index.ts') },
      { find: /^@minara\/agent\/backtest$/, replacement: src('backtest/index.ts') },
      { find: /^@minara\/agent$/, replacement: src('index.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one on a 2-core host, where the suite then runs file by
    // file. Most files wait on child processes, a browser or PostgreSQL, so two workers there take the suite from
    // about 1,130 to 820–910 s (README, Development); more cores keep the default.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // One throwaway PostgreSQL server for the run when its binaries are on PATH (test/postgres/global-setup.ts).
    globalSetup: ['test/postgres/global-setup.ts'],
    // Records the SQLite statements the SDK prepares when MINARA_SQL_PLAN_LOG is set (CI; scripts/check-query-plans.ts).
    setupFiles: ['test/support/sql-plan-recorder.ts'],
  },
});
