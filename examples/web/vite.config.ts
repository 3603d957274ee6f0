import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built into the package (dist/web) and served by the gateway at its root (`minara serve`).
// Relative asset paths and hash routing keep it working under any basePath.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  plugins: [react()],
  resolve: {
    // The page uses only the finance pack's wording helpers (describeOrder, describeToolResult, format*): pure
    // functions in one file with no imports, taken from the source so the build needs no prior `tsup` run and
    // pulls in nothing of the pack's Node side. (tsconfig.json maps the same specifier to the same file.)
    alias: { '@minara/agent/finance': fileURLToPath(new URL('../../src/finance/describe.ts', import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL('../../dist/web', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 600,
  },
  server: {
    // `npx vite examples/web` during development: the API comes from a gateway on :8080.
    proxy: { '/v1': 'http://127.0.0.1:8080' },
  },
});
