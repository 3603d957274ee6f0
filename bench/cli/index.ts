/**
 * Cold start of the `minara` bin (the built `dist/cli.js`, as `npx minara` runs it):
 *   - `minara --help` from spawn to exit;
 *   - the REPL from spawn until the prompt `› ` is on stdout (app built: SQLite opened and migrated,
 *     workspace seeded, tools and skills registered), then `/exit`;
 *   - the REPL until the answer of a first command (`/tools`) is on screen;
 *   - `minara serve` from spawn until `GET /healthz` answers 200 (existing data dir; target ≤ 500 ms).
 * Beside them, in the same process: `node -e 1` (what Node itself costs), the REPL with Node's compile cache
 * off (`NODE_DISABLE_COMPILE_CACHE=1`: the very first start after an install), and the REPL started the way a
 * consumer project starts it: `node_modules/.bin/minara` in a temporary project whose `node_modules/@minara/agent`
 * links to this checkout (what `npx minara` runs after npm's own start-up, which is not timed here).
 * Each start also reports the CPU time the process had used at that moment (Linux, from /proc): a busy host inflates it
 * far less than the wall time. Target: ≤ 200 ms to the prompt on the reference machine. Run: `npm run bench -- cli` (builds first if
 * `dist/cli.js` is missing). `BENCH_CLI_RUNS` sets the number of runs (default 15).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt, machine, summarize, table } from '../lib/stats';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cli = path.join(root, 'dist', 'cli.js');
const runs = Number(process.env['BENCH_CLI_RUNS'] ?? 15);

if (!existsSync(cli)) {
  console.log('dist/cli.js is missing: building…');
  const r = spawnSync(process.execPath, [path.join(root, 'node_modules', 'tsup', 'dist', 'cli-default.js')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(cli)) {
    console.error('build failed; run `npm run build`');
    process.exit(1);
  }
}

const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
for (const k of Object.keys(env)) if (/^(MINARA_|ANTHROPIC_|OPENAI_)/.test(k)) delete env[k];

function timeNode(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, ['-e', '1'], { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', () => resolve(performance.now() - t0));
  });
}

function timeHelp(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [cli, '--help'], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.resume();
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`--help exited ${code}`))));
  });
}

/** CPU time (user + system, ms) a running process has used so far; NaN where /proc is not available. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // clock ticks (USER_HZ 100)
  } catch {
    return Number.NaN;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Spawn `minara serve`; time until GET /healthz answers 200; then stop it. */
async function timeServe(dataDir: string): Promise<{ ready: number; cpu: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, [cli, 'serve', '--data-dir', dataDir, '--port', String(port), '--host', '127.0.0.1', '--no-background'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`minara serve exited ${child.exitCode}`);
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (ok) return { ready: performance.now() - t0, cpu: cpuMs(child.pid) };
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill();
    await exited;
  }
}

/** A consumer project: `node_modules/@minara/agent` links to this checkout, `node_modules/.bin/minara` to its bin (as npm links them). */
function consumerBin(dir: string): string {
  mkdirSync(path.join(dir, 'node_modules', '@minara'), { recursive: true });
  mkdirSync(path.join(dir, 'node_modules', '.bin'));
  writeFileSync(path.join(dir, 'package.json'), '{ "name": "consumer", "private": true, "dependencies": { "@minara/agent": "*" } }\n');
  symlinkSync(root, path.join(dir, 'node_modules', '@minara', 'agent'), 'dir');
  const bin = path.join(dir, 'node_modules', '.bin', 'minara');
  symlinkSync(path.join('..', '@minara', 'agent', 'dist', 'cli.js'), bin);
  return bin;
}

/** Spawn the REPL (the bin `bin`, by default dist/cli.js); time until the prompt, and until the answer to `/tools`; then `/exit`. */
function timeRepl(dataDir: string, extraEnv: NodeJS.ProcessEnv = {}, bin = cli): Promise<{ prompt: number; promptCpu: number; firstAnswer: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [bin, '--data-dir', dataDir], { env: { ...env, ...extraEnv }, stdio: ['pipe', 'pipe', 'inherit'] });
    let out = '';
    let prompt: number | undefined;
    let promptCpu = Number.NaN;
    let firstAnswer: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (prompt === undefined && out.includes('› ')) {
        prompt = performance.now() - t0;
        promptCpu = cpuMs(child.pid);
        child.stdin.write('/tools\n');
      }
      if (prompt !== undefined && firstAnswer === undefined && out.includes('get_price')) {
        firstAnswer = performance.now() - t0;
        child.stdin.end('/exit\n');
      }
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0 || prompt === undefined || firstAnswer === undefined) reject(new Error(`REPL exited ${code}:\n${out}`));
      else resolve({ prompt, promptCpu, firstAnswer });
    });
  });
}

const dir = mkdtempSync(path.join(tmpdir(), 'minara-bench-cli-'));
try {
  // Warm the OS file cache and Node's compile cache once (what every run after the first install sees).
  await timeHelp();
  await timeRepl(path.join(dir, 'warm'));
  const installedBin = consumerBin(path.join(dir, 'consumer'));

  const help: number[] = [];
  const prompt: number[] = [];
  const firstAnswer: number[] = [];
  const promptExisting: number[] = [];
  const promptExistingCpu: number[] = [];
  const serve: number[] = [];
  const serveCpu: number[] = [];
  const promptNoCache: number[] = [];
  const promptConsumer: number[] = [];
  const promptConsumerCpu: number[] = [];
  const node: number[] = [];
  for (let i = 0; i < runs; i++) {
    node.push(await timeNode());
    promptNoCache.push((await timeRepl(path.join(dir, 'warm'), { NODE_DISABLE_COMPILE_CACHE: '1' })).prompt);
    help.push(await timeHelp());
    const fresh = await timeRepl(path.join(dir, `fresh-${i}`)); // a new data dir: database created and migrated, workspace seeded
    prompt.push(fresh.prompt);
    firstAnswer.push(fresh.firstAnswer);
    const existing = await timeRepl(path.join(dir, 'warm')); // an existing data dir
    promptExisting.push(existing.prompt);
    promptExistingCpu.push(existing.promptCpu);
    const consumer = await timeRepl(path.join(dir, 'warm'), {}, installedBin); // node_modules/.bin/minara in a consumer project
    promptConsumer.push(consumer.prompt);
    promptConsumerCpu.push(consumer.promptCpu);
    const served = await timeServe(path.join(dir, 'warm'));
    serve.push(served.ready);
    serveCpu.push(served.cpu);
  }
  const row = (label: string, samples: number[]) => {
    const s = summarize(samples);
    return [label, s.n, fmt(s.p50, 0), fmt(s.p95, 0), fmt(s.mean, 0)];
  };
  console.log(`\nbench/cli — cold start of node dist/cli.js (${machine()})\n`);
  console.log(
    table(
      ['measure', 'runs', 'p50 ms', 'p95 ms', 'mean ms'],
      [
        row('node -e 1 (baseline)', node),
        row('minara --help (spawn → exit)', help),
        row('REPL prompt ready, new data dir', prompt),
        row('REPL prompt ready, existing data dir', promptExisting),
        row('REPL first answer (/tools), new data dir', firstAnswer),
        row('REPL prompt ready, compile cache off', promptNoCache),
        row('  … CPU used by then, existing data dir', promptExistingCpu),
        row('REPL prompt ready, consumer node_modules/.bin/minara', promptConsumer),
        row('  … CPU used by then', promptConsumerCpu),
        row('minara serve until /healthz answers, existing data dir', serve),
        row('  … CPU used by then', serveCpu),
      ],
    ),
  );
  const p50 = summarize(promptExisting).p50;
  const base = summarize(node).p50;
  const serve50 = summarize(serve).p50;
  console.log(
    `\ntarget: prompt ready ≤ 200 ms (p50, existing data dir: ${fmt(p50, 0)} ms ${p50 <= 200 ? 'met' : 'NOT met'}; ${fmt(p50 - base, 0)} ms above node -e 1; CPU ${fmt(summarize(promptExistingCpu).p50, 0)} ms; consumer node_modules/.bin/minara: ${fmt(summarize(promptConsumer).p50, 0)} ms, CPU ${fmt(summarize(promptConsumerCpu).p50, 0)} ms); ` +
      `minara serve /healthz ≤ 500 ms (p50: ${fmt(serve50, 0)} ms ${serve50 <= 500 ? 'met' : 'NOT met'}; CPU ${fmt(summarize(serveCpu).p50, 0)} ms) — ${runs} runs, load average ${loadavg()[0]!.toFixed(2)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
