// Runs benchmark scripts under bench/<name>/index.ts with tsx: `npm run bench` (all) or `npm run bench -- dispatch memory`.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';

const all = readdirSync(new URL('../bench/', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(new URL(`../bench/${d.name}/index.ts`, import.meta.url)))
  .map((d) => d.name)
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(', ')}. Available: ${all.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', `bench/${name}/index.ts`], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
