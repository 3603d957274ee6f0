import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built into the package (dist/web) and served by the gateway at its root (`minara serve`).
// Relative asset paths and hash routing keep it working under any basePath.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  plugins: [react()],
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
