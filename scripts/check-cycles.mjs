// Fails on import cycles between source files and on imports that run against the layering of
// docs/architecture.md ("Which way imports run"). Type-only imports are not runtime edges and are ignored.
// It also FAILS on a function in src/ or cli/ longer than MAX_FUNCTION_LINES lines, and REPORTS those longer
// than LONG_FUNCTION_LINES (a list to read, not a failure): a factory or orchestrator that grows past it should
// move its methods or steps into named functions or sibling files (docs/architecture.md, "Factories and parts").
// Run: npm run check:cycles
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(new URL('..', import.meta.url).pathname);
const srcDir = path.join(root, 'src');

/** Which top-level folders of src/ each folder may import (its own folder is always allowed). */
const base = ['errors', 'util', 'events'];
const ALLOWED = {
  errors: [],
  util: ['errors'],
  events: ['errors', 'util'],
  config: [...base],
  storage: [...base],
  llm: [...base, 'config'],
  safety: [...base, 'storage', 'tools'],
  tools: [...base, 'storage', 'safety'],
  skills: [...base, 'storage', 'tools', 'safety'],
  memory: [...base, 'storage', 'tools', 'safety'],
  workspace: [...base, 'safety'],
  finance: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory'],
  // The learning loop scores decisions over storage; the runtime sees it only through a type (TurnLearning).
  learning: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory'],
  // Artifacts (charts, reports, spreadsheets) and their tools; the runtime never imports them (createApp wires the turn-end hook).
  artifacts: [...base, 'storage', 'tools', 'safety'],
  // The file store, the spreadsheet parser and the message translator (the runtime sees it through a type).
  files: [...base, 'storage'],
  runtime: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory', 'workspace', 'llm'],
  testing: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory', 'workspace', 'runtime', 'llm'],
  gateway: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory', 'workspace', 'runtime', 'llm', 'learning', 'artifacts', 'files'],
  // MCP sits beside the gateway: it adapts the registry to and from MCP (and serves it over HTTP).
  mcp: [...base, 'config', 'storage', 'tools', 'safety'],
  // The background runner schedules work over storage; the app gives it the jobs (heartbeat, purge, …).
  background: [...base, 'config', 'storage', 'runtime', 'workspace', 'memory'],
  // Operations over stored state: the doctor, memory export and import.
  ops: [...base, 'config', 'storage', 'safety', 'memory', 'learning', 'workspace', 'llm'],
  // Research and analysis: the code sandbox (run_code), deep-research reports, the research skills and their tools.
  research: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory', 'learning', 'artifacts'],
  // Backtests: the engine over the finance pack's interfaces and limits; reports through the artifacts' chart compiler.
  // The subpath entry src/backtest/index.ts re-exports the agent (a real cycle through app would still fail the graph check).
  backtest: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory', 'finance', 'artifacts', 'backtest-agent'],
  app: [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory', 'workspace', 'runtime', 'llm', 'finance', 'gateway', 'testing', 'mcp', 'background', 'learning', 'ops', 'artifacts', 'files', 'research', 'backtest'],
  'backtest-agent': [...base, 'config', 'storage', 'tools', 'safety', 'skills', 'memory', 'workspace', 'runtime', 'llm', 'finance', 'gateway', 'testing', 'mcp', 'background', 'learning', 'ops', 'artifacts', 'files', 'research', 'backtest', 'app'],
};

function walk(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.(ts|mts)$/.test(name) && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?([\s\S]*?)\s*from\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]/gm;
function runtimeImports(file) {
  const text = readFileSync(file, 'utf8');
  const out = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = m[4] ?? m[5];
    if (m[2]) continue; // import type / export type
    const clause = m[3] ?? '';
    const braces = clause.match(/^\{([\s\S]*)\}$/);
    if (braces && braces[1].split(',').map((s) => s.trim()).filter(Boolean).every((s) => s.startsWith('type '))) continue;
    out.push(spec);
  }
  // dynamic import('...') counts too
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]);
  return out;
}

function resolveLocal(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const baseP = path.resolve(path.dirname(from), spec);
  for (const cand of [baseP, `${baseP}.ts`, path.join(baseP, 'index.ts')]) if (existsSync(cand) && statSync(cand).isFile()) return cand;
  return undefined;
}

const files = walk(srcDir);
const graph = new Map(files.map((f) => [f, []]));
const problems = [];
// src/backtest/agent is a layer of its own above app: the agent in the backtest loop drives createApp (issue 40).
const top = (f) => {
  const rel = path.relative(srcDir, f).split(path.sep);
  return rel[0] === 'backtest' && rel[1] === 'agent' ? 'backtest-agent' : rel[0].replace(/\.ts$/, '');
};

for (const f of files) {
  for (const spec of runtimeImports(f)) {
    const target = resolveLocal(f, spec);
    if (!target) continue;
    graph.get(f)?.push(target);
    const a = top(f);
    const b = top(target);
    if (a === 'index' || a === b) continue;
    const allowed = ALLOWED[a];
    if (allowed === undefined) problems.push(`unknown layer "${a}" (${path.relative(root, f)}): add it to scripts/check-cycles.mjs`);
    else if (!allowed.includes(b)) problems.push(`layering: ${path.relative(root, f)} imports ${path.relative(root, target)} (${a} → ${b} is not allowed)`);
  }
  const rel = path.relative(srcDir, f);
  if ((rel === path.join('storage', 'types.ts') || rel === path.join('storage', 'memory-types.ts')) && graph.get(f).some((t) => /storage[\\/](sqlite|in-memory)/.test(t))) {
    problems.push(`layering: ${rel} (the storage interface) imports an implementation`);
  }
}

// Tarjan's strongly connected components: any component with more than one file is a cycle.
let index = 0;
const stack = [];
const meta = new Map();
function strong(v) {
  meta.set(v, { index, low: index, on: true });
  index++;
  stack.push(v);
  for (const w of graph.get(v) ?? []) {
    if (!meta.has(w)) {
      strong(w);
      meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
    } else if (meta.get(w).on) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
  }
  if (meta.get(v).low === meta.get(v).index) {
    const comp = [];
    let w;
    do {
      w = stack.pop();
      meta.get(w).on = false;
      comp.push(w);
    } while (w !== v);
    if (comp.length > 1 || (graph.get(v) ?? []).includes(v)) problems.push(`cycle: ${comp.map((c) => path.relative(root, c)).join(' → ')}`);
  }
}
for (const f of files) if (!meta.has(f)) strong(f);

// cli/ and examples/ use only the public API.
for (const dir of ['cli', 'examples']) {
  const d = path.join(root, dir);
  if (!existsSync(d)) continue;
  for (const f of walk(d)) {
    for (const spec of runtimeImports(f)) {
      if (spec.startsWith('.') && resolveLocal(f, spec)?.startsWith(srcDir)) problems.push(`public API only: ${path.relative(root, f)} imports ${spec}; use @minara/agent`);
    }
  }
}

// Long functions: every function-like node with a body (declarations, methods, arrows, function
// expressions), measured from its first to its last line; a nested function is listed on its own.
const LONG_FUNCTION_LINES = 120;
const MAX_FUNCTION_LINES = 150;
function functionName(node, sf) {
  if (node.name) return node.name.getText(sf);
  const p = node.parent;
  if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name) return p.name.getText(sf);
  if (p && ts.isCallExpression(p)) return `(callback of ${p.expression.getText(sf).slice(0, 40)})`;
  return '(anonymous)';
}
function longFunctions(file) {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > LONG_FUNCTION_LINES) out.push({ at: `${path.relative(root, file)}:${first + 1}`, name: functionName(node, sf), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}
const cliDir = path.join(root, 'cli');
const long = [...files, ...(existsSync(cliDir) ? walk(cliDir) : [])].flatMap(longFunctions).sort((a, b) => b.lines - a.lines);
const tooLong = long.filter((f) => f.lines > MAX_FUNCTION_LINES);
const readable = long.filter((f) => f.lines <= MAX_FUNCTION_LINES);
if (readable.length > 0) {
  console.log(`Functions longer than ${LONG_FUNCTION_LINES} lines (${readable.length}; a list to read, not a failure):`);
  for (const f of readable) console.log(`  ${String(f.lines).padStart(4)}  ${f.name}  ${f.at}`);
}
for (const f of tooLong) problems.push(`function longer than ${MAX_FUNCTION_LINES} lines: ${f.name} (${f.lines}) at ${f.at}: split it into named functions (docs/architecture.md, "Factories and parts")`);

if (problems.length > 0) {
  console.error(problems.join('\n'));
  console.error(`\ncheck:cycles: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log(`check:cycles: ${files.length} files, no cycles, layering respected`);
