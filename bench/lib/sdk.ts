/**
 * Which build of the SDK a bench measures (bench/runtime, bench/dispatch). By default the built package in `dist/`: what a consumer's
 * `import '@minara/agent'` loads (tsup's output, built by `npm install`'s prepare script or `npm run build`), the
 * same kind of code as the AI SDK and Mastra it is compared with, which load from their own `dist/`.
 * `BENCH_FROM=src` measures the TypeScript sources through tsx instead: tsx compiles with esbuild's `keepNames`, so
 * every function created during a turn also calls a `__name` helper that the published build does not have, and
 * the figure is higher (docs/runtime.md gives both).
 *
 * `dist/` older than a file under `src/` would measure code that is not the checkout's: the bench then stops and
 * says to build.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

type Sdk = typeof import('../../src/index');
type Sqlite = typeof import('../../src/storage/sqlite/index');
type Testing = typeof import('../../src/testing/index');

/** What the bench uses from the SDK, and which build it came from. */
export interface BenchSdk {
  readonly from: 'dist' | 'src';
  readonly sdk: Sdk;
  readonly sqlite: Sqlite;
  readonly testing: Testing;
}

const ROOT = path.join(import.meta.dirname, '..', '..');

/** The newest modification time (ms) of a file under `dir`, and that file. */
function newest(dir: string): { readonly file: string; readonly mtimeMs: number } {
  let best = { file: '', mtimeMs: 0 };
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const { mtimeMs } = statSync(file);
    if (mtimeMs > best.mtimeMs) best = { file, mtimeMs };
  }
  return best;
}

/** Load the SDK from `dist/` (default) or, with `BENCH_FROM=src`, from the sources. */
export async function loadBenchSdk(): Promise<BenchSdk> {
  const from = process.env.BENCH_FROM ?? 'dist';
  if (from === 'src') {
    return { from, sdk: await import('../../src/index'), sqlite: await import('../../src/storage/sqlite/index'), testing: await import('../../src/testing/index') };
  }
  if (from !== 'dist') throw new Error(`BENCH_FROM must be dist or src, got ${JSON.stringify(from)}`);
  const entries = ['index.js', 'sqlite.js', 'testing.js'].map((f) => path.join(ROOT, 'dist', f));
  let built = Number.POSITIVE_INFINITY;
  for (const file of entries) {
    try {
      built = Math.min(built, statSync(file).mtimeMs);
    } catch {
      throw new Error(`the bench measures the built package, and ${path.relative(ROOT, file)} is missing: run \`npm run build\` (or BENCH_FROM=src to measure the sources through tsx)`);
    }
  }
  const source = newest(path.join(ROOT, 'src'));
  if (source.mtimeMs > built) {
    throw new Error(`the bench measures the built package, and dist/ is older than ${path.relative(ROOT, source.file)}: run \`npm run build\` (or BENCH_FROM=src to measure the sources through tsx)`);
  }
  const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(file).href)) as T;
  return { from, sdk: await load<Sdk>(entries[0]!), sqlite: await load<Sqlite>(entries[1]!), testing: await load<Testing>(entries[2]!) };
}
