// Fails when type-checking a registry of fifty zod tools costs more than the budget of type
// instantiations (the "excessively deep" class of problems users report with zod + AI SDK tools).
// Run: npm run check:types
import { spawnSync } from 'node:child_process';

const BUDGET = Number(process.env.TYPE_INSTANTIATION_BUDGET ?? 400_000);
const r = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '--noEmit', '-p', 'tsconfig.types-budget.json', '--extendedDiagnostics'], { encoding: 'utf8' });
const out = `${r.stdout}${r.stderr}`;
if (r.status !== 0) {
  console.error(out);
  process.exit(1);
}
const n = Number(/Instantiations:\s+(\d+)/.exec(out)?.[1]);
if (!Number.isFinite(n)) {
  console.error('check:types: could not read the instantiation count\n' + out);
  process.exit(1);
}
console.log(`check:types: ${n.toLocaleString('en-US')} instantiations for 50 tools (budget ${BUDGET.toLocaleString('en-US')})`);
process.exit(n > BUDGET ? 1 : 0);
