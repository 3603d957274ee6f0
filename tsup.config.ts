import { defineConfig, type Options } from 'tsup';

/** Source maps map to file and line, without embedding every source file (which more than doubled the package). */
const noSourcesContent: Options['esbuildOptions'] = (options) => {
  options.sourcesContent = false;
};

export default defineConfig([
  {
    entry: {
      index: 'src/index.ts',
      sqlite: 'src/storage/sqlite/index.ts',
      postgres: 'src/storage/postgres/index.ts',
      testing: 'src/testing/index.ts',
      finance: 'src/finance/index.ts',
      gateway: 'src/gateway/index.ts',
      mcp: 'src/mcp/index.ts',
      backtest: 'src/backtest/index.ts',
    },
    format: ['esm'],
    target: 'node22',
    platform: 'node',
    dts: true,
    sourcemap: true,
    esbuildOptions: noSourcesContent,
    clean: true,
    splitting: true,
    treeshake: true,
    external: ['ai', 'zod', 'better-sqlite3', 'sqlite-vec', 'pg', '@electric-sql/pglite', 'eventemitter3', /^ai\//, /^@ai-sdk\//, /^@modelcontextprotocol\//],
  },
  {
    entry: { cli: 'cli/index.ts' },
    format: ['esm'],
    target: 'node22',
    platform: 'node',
    dts: false,
    sourcemap: true,
    esbuildOptions: noSourcesContent,
    clean: false,
    banner: { js: '#!/usr/bin/env node' },
    // The CLI imports only the public API; it resolves @minara/agent through the package's own exports map.
    external: [/^@minara\/agent/, 'ai', 'zod', 'better-sqlite3', 'sqlite-vec', 'pg', 'eventemitter3', /^ai\//, /^@ai-sdk\//],
  },
]);
