/**
 * The real `minara` command, spawned from source (`node --import tsx cli/index.ts`), as a person runs it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-cli-proc-'));
  dirs.push(d);
  return d;
}

/** An environment with no model configured and no stray settings from the host. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(MINARA_|ANTHROPIC_|OPENAI_|GATEWAY_|EMBEDDING_|WORKSPACE_)/.test(k)) continue;
    env[k] = v;
  }
  return { ...env, NO_COLOR: '1', ...extra };
}

function minara(args: string[], options: { input?: string; env?: Record<string, string> } = {}) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'cli/index.ts', ...args], {
    cwd: root,
    env: cleanEnv(options.env),
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

// Each test runs several `minara` processes in turn (tsx-compiled, ~1 s each beside another test file): the doctor and
// workflows scenarios took 31–33 s with two vitest workers on a 2-core host, over the suite's 30 s default.
describe('minara (process)', { timeout: 120_000 }, () => {
  it('minara jobs lists the background jobs; the REPL starts the runner unless --no-background', () => {
    const dir = tempDir();
    const jobs = minara(['jobs', '--data-dir', dir]);
    expect(jobs.code).toBe(0);
    expect(jobs.stdout).toContain('Background runner: not started in this process.');
    expect(jobs.stdout).toMatch(/heartbeat\s+every 30m/);
    expect(jobs.stdout).toContain('Add work in HEARTBEAT.md under ## Schedule');
    // The jobs line is the engine's: shown with --verbose (issue 42), not to every newcomer.
    const plain = minara(['--data-dir', dir], { input: '/exit\n' });
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('background:');
    const repl = minara(['--data-dir', dir, '--verbose'], { input: '/exit\n' });
    expect(repl.code).toBe(0);
    expect(repl.stdout).toMatch(/background: (.*, )?heartbeat \(every 30m, next \d\d:\d\d UTC\)/);
    expect(repl.stdout).toMatch(/finance:autopilot \(every 1m, next \d\d:\d\d UTC\)/);
    const quiet = minara(['--data-dir', dir, '--no-background'], { input: '/exit\n' });
    expect(quiet.stdout).not.toContain('background:');
    expect(minara(['demo', '--no-background']).stderr).toContain('only applies to "minara serve" and the REPL ("minara")');
  });

  it('a feature turned on without a model does not stop minara, minara serve or minara doctor: one warning each, listed by the doctor (issue 32)', async () => {
    const dir = tempDir();
    const env = { WORKSPACE_DREAM_ENABLED: '1', MEMORY_CONSOLIDATION_ENABLED: '1' };
    const repl = minara(['--data-dir', dir, '--no-background'], { input: '/exit\n', env });
    expect(repl.code).toBe(0);
    expect(repl.stderr).not.toContain('CONFIG_INVALID');
    expect(repl.stderr.match(/WORKSPACE_DREAM_ENABLED=1 is set but a model .* is missing: dreaming stays off/g)).toHaveLength(1);
    expect(repl.stderr.match(/MEMORY_CONSOLIDATION_ENABLED=1 is set but a model .* is missing/g)).toHaveLength(1);
    const doctor = minara(['doctor', '--data-dir', dir], { env });
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/Disabled \(turned on, but missing what they need\)\n\s+dreaming\s+WORKSPACE_DREAM_ENABLED=1: needs a model/);
    expect(doctor.stdout).toMatch(/memory-consolidation\s+MEMORY_CONSOLIDATION_ENABLED=1: needs a model/);
    // minara serve starts and answers /healthz.
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const serve = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'serve', '--data-dir', dir, '--port', String(port), '--no-background'], { cwd: root, env: cleanEnv(env) });
    let stderr = '';
    serve.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
    try {
      let ok = false;
      for (let i = 0; i < 150 && !ok && serve.exitCode === null; i++) {
        ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
        if (!ok) await new Promise((r) => setTimeout(r, 200));
      }
      expect(ok, stderr).toBe(true);
      expect(stderr).not.toContain('CONFIG_INVALID');
    } finally {
      serve.kill();
    }
  }, 90_000);

  it('minara learning and minara preferences: seed, list, the operator\'s decisions (refused, forced), usage errors exit 2', () => {
    const dir = tempDir();
    const seed = path.join(dir, 'seed.md');
    writeFileSync(seed, '## crypto_major\n- Buy BTC breakouts above the prior day high.\n');
    expect(minara(['learning', 'seed', seed, '--data-dir', dir]).stdout).toContain('Seeded 1 methodologies (0 already known)');
    const list = minara(['learning', '--data-dir', dir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/#1\s+candidate\s+0\.000\s+0\/0\s+crypto_major/);
    const refused = minara(['learning', 'graduate', '1', '--data-dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('LEARNING_TRANSITION_REFUSED: Methodology #1 is not proposed for graduation');
    const forced = minara(['learning', 'graduate', '1', '--force', '--reason', 'desk review', '--data-dir', dir]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain('Methodology #1 is now graduated.');
    expect(minara(['learning', 'list', 'graduated', '--data-dir', dir]).stdout).toMatch(/#1\s+graduated/);
    expect(minara(['preferences', '--data-dir', dir]).stdout).toMatch(/^No preferences yet/);
    const bad = minara(['learning', 'graduate', '--data-dir', dir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('usage: minara learning graduate <id>');
    expect(minara(['preferences', 'approve', '1', '--force']).stderr).toContain('option --force only applies to');
  });

  it('minara workflows: list (with a bad file named by its line), start, runs, run <id>; minara alerts list and cancel', () => {
    const dir = tempDir();
    const flows = path.join(dir, 'workspace', 'workflows');
    mkdirSync(flows, { recursive: true });
    writeFileSync(path.join(flows, 'price-check.yaml'), 'description: Read the ETH price\nsteps:\n  - id: eth\n    tool: get_price\n    args: { symbol: ETH }\n');
    writeFileSync(path.join(flows, 'broken.yaml'), 'steps:\n  - id: eth\n    tool: get_prise\n');
    const list = minara(['workflows', '--data-dir', dir]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/price-check\s+workflows\/price-check\.yaml\s+1 step, no model\s+user default/);
    expect(list.stdout).toContain('! workflows/broken.yaml:3: steps[0].tool: no registered tool named "get_prise" (did you mean get_price');
    const started = minara(['workflows', 'start', 'price-check', '--data-dir', dir]);
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/^Run (wfr_\w+) of price-check: ok \(manual/);
    const runId = /^Run (wfr_\w+)/.exec(started.stdout)![1]!;
    expect(started.stdout).toMatch(/1\. eth get_price: ok \[allowed\]/);
    expect(started.stdout).toContain('in:  {"symbol":"ETH"}');
    expect(minara(['workflows', 'runs', '--data-dir', dir]).stdout).toMatch(new RegExp(`${runId}\\s+price-check\\s+ok\\s+manual`));
    expect(minara(['workflows', 'run', runId, '--data-dir', dir]).stdout).toContain(`Run ${runId} of price-check: ok`);
    expect(minara(['workflows', 'run', 'wfr_nope', '--data-dir', dir]).code).toBe(1);
    expect(minara(['workflows', 'start', '--data-dir', dir]).stderr).toContain('usage: minara workflows');
    expect(minara(['alerts', '--data-dir', dir]).stdout).toContain('No active alerts.');
    // An alert set through the same tool the model calls (here by /call in the REPL), then listed and cancelled.
    minara(['--data-dir', dir, '--no-background'], { input: '/call alert_request {"op":"add","asset":"ETH","condition":"below","threshold":1000}\n/exit\n' });
    expect(minara(['alerts', '--data-dir', dir]).stdout).toMatch(/#1\s+ETH\s+below 1000\s+active until 20\d\d-/);
    expect(minara(['alerts', 'cancel', '1', '--data-dir', dir]).stdout).toContain('Cancelled alert #1');
    expect(minara(['alerts', 'list', 'all', '--data-dir', dir]).stdout).toMatch(/#1\s+ETH\s+below 1000\s+cancelled/);
    expect(minara(['alerts', 'cancel', '7', '--data-dir', dir])).toMatchObject({ code: 1, stderr: expect.stringContaining('No alert #7.') });
  });

  it('minara doctor (text, --json, --anonymous, --fix dry run and --apply) and minara memory export/import', () => {
    const dir = tempDir();
    const seed = path.join(dir, 'seed.md');
    writeFileSync(seed, '## crypto_major\n- Buy BTC breakouts above the prior day high.\n');
    expect(minara(['learning', 'seed', seed, '--data-dir', dir]).code).toBe(0);
    const doctor = minara(['doctor', '--data-dir', dir]);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toMatch(/^minara doctor — /);
    expect(doctor.stdout).toMatch(/Storage: sqlite; schema core \d+/);
    expect(doctor.stdout).toContain('methodologies: proposed 0, candidate 1, graduated 0, quarantined 0');
    expect(doctor.stdout).toContain('Model: not configured');
    const json = JSON.parse(minara(['doctor', '--json', '--anonymous', '--data-dir', dir]).stdout) as { anonymous: boolean; learning: { methodologies: { candidate: string } } };
    expect(json).toMatchObject({ anonymous: true, learning: { methodologies: { candidate: '1–9' } } });
    expect(minara(['doctor', '--fix', '--data-dir', dir]).stdout).toContain('dry run: nothing written');
    expect(minara(['doctor', '--fix', '--apply', '--only', 'edges', '--data-dir', dir]).stdout).toMatch(/edges\s+0 of 0 changed/);
    const bad = minara(['doctor', '--only', 'edges', '--data-dir', dir]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--apply and --only only apply with --fix');
    expect(minara(['doctor', '--fix', '--only', 'everything', '--data-dir', dir]).stderr).toContain('unknown fix "everything"');

    const exported = minara(['memory', 'export', '--sign', '--data-dir', dir]);
    expect(exported.code).toBe(0);
    const where = /Exported to (\S+) \(signed\): 1 methodologies/.exec(exported.stdout)?.[1];
    expect(where).toBeDefined();
    expect(where!.startsWith(path.join(dir, 'exports'))).toBe(true);
    const dry = minara(['memory', 'import', where!, '--data-dir', dir]);
    expect(dry.stdout).toMatch(/^Dry run \(nothing written; add --apply\): 0 new, \d+ already present, 0 rejected/);
    // The CLI signs with the approval key beside the data directory and verifies with it.
    expect(dry.stdout).toContain('Signed by this instance for this user.');
    const other = tempDir();
    const hc = minara(['memory', 'import', where!, '--apply', '--approve-hard-constraints', '--data-dir', other]);
    expect(hc.code).toBe(0);
    expect(hc.stderr).toContain('--approve-hard-constraints needs an interactive terminal');
    expect(hc.stdout).toMatch(/^Imported: \d+ new/);
    expect(hc.stdout).toContain('Not signed by this instance');
    expect(minara(['learning', 'list', 'quarantined', '--data-dir', other]).stdout).toMatch(/#1\s+quarantined/);
    const sandboxed = minara(['memory', 'export', '--out', path.join(dir, 'sandbox', 'files', 'x'), '--data-dir', dir]);
    expect(sandboxed.code).toBe(1);
    expect(sandboxed.stderr).toContain("agent's file tools can read");
    expect(minara(['memory', 'import', '--data-dir', dir]).code).toBe(2);
  });

  it.skipIf(process.platform === 'win32')('minara creates its data directory 0700 and minara.db 0600 under a permissive umask; minara doctor reports looser modes and --fix tightens them', () => {
    const dir = path.join(tempDir(), 'data');
    const previous = process.umask(0o000);
    try {
      expect(minara(['doctor', '--data-dir', dir]).stdout).toContain('Permissions: private (directories 0700, files 0600)');
    } finally {
      process.umask(previous);
    }
    const mode = (p: string) => (statSync(p).mode & 0o777).toString(8);
    expect([mode(dir), mode(path.join(dir, 'minara.db')), mode(path.join(dir, 'workspace')), mode(path.join(dir, 'workspace', 'SOUL.md'))]).toEqual(['700', '600', '700', '600']);
    chmodSync(dir, 0o755);
    chmodSync(path.join(dir, 'workspace', 'SOUL.md'), 0o644);
    const report = minara(['doctor', '--data-dir', dir]);
    expect(report.stdout).toContain('Permissions: 2 too open');
    expect(report.stdout).toContain(`0755 → 0700  ${dir}`);
    expect(report.stdout).toContain('"minara doctor --fix --only permissions --apply" tightens them');
    expect(minara(['doctor', '--fix', '--only', 'permissions', '--data-dir', dir]).stdout).toMatch(/permissions\s+2 would change/);
    expect(mode(dir)).toBe('755');
    expect(minara(['doctor', '--fix', '--apply', '--only', 'permissions', '--data-dir', dir]).stdout).toMatch(/permissions\s+2 of 2 changed/);
    expect([mode(dir), mode(path.join(dir, 'workspace', 'SOUL.md'))]).toEqual(['700', '600']);
  });

  it('minara import openclaw and hermes bring another agent\'s files into the workspace', () => {
    const dir = tempDir();
    const claw = tempDir();
    writeFileSync(path.join(claw, 'SOUL.md'), '# Soul\nTerse, numbers first.\n');
    const first = minara(['import', 'openclaw', claw, '--data-dir', dir]);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/SOUL\.md/);
    expect(readFileSync(path.join(dir, 'workspace', 'SOUL.md'), 'utf8')).toContain('Terse, numbers first.');
    const hermes = tempDir();
    mkdirSync(path.join(hermes, 'memories'));
    writeFileSync(path.join(hermes, 'memories', 'MEMORY.md'), 'Prefers limit orders.\n§\nHolds ETH long term.\n');
    const second = minara(['import', 'hermes', hermes, '--data-dir', dir]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('Imported 2 Hermes entries');
    expect(readFileSync(path.join(dir, 'workspace', 'MEMORY.md'), 'utf8')).toContain('Holds ETH long term.');
    expect(minara(['import', 'nothing', claw]).code).toBe(2);
  });

  it('minara audit, breakers and shadow: list, export, verify, reset usage, and refusals that name the flag', () => {
    const dir = tempDir();
    expect(minara(['--data-dir', dir, '--no-background'], { input: '/call get_price {"symbol":"BTC"}\n/exit\n' }).code).toBe(0);
    const list = minara(['audit', 'list', '--tool', 'get_price', '--since', '1h', '--json', '--data-dir', dir]);
    expect(list.code, list.stderr).toBe(0);
    const rows = JSON.parse(list.stdout) as Array<{ toolName: string; outcome: { status: string }; chain: { seq: number } }>;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ toolName: 'get_price', outcome: { status: 'ok' } });
    const csv = minara(['audit', 'export', '--format', 'csv', '--data-dir', dir]);
    expect(csv.code).toBe(0);
    expect(csv.stdout.split('\n')[0]).toBe('id,seq,at,kind,user_id,source,session_id,trace_id,tool_call_id,tool_name,tier,mode,decision,code,reason,status,order_id,fill_symbol,fill_side,fill_quantity,fill_price_usd,fill_notional_usd,fill_fee_usd,fill_realized_pnl_usd,tx_hash,error_code,simulated,shadow,provider,approval_id,duration_ms,args_json,detail_json,prev_hash,hash');
    const verify = minara(['audit', 'verify', '--data-dir', dir]);
    expect(verify.code).toBe(0);
    // Keyed links, and the checkpoint the REPL process signed when it closed.
    expect(verify.stdout).toMatch(/Audit chain intact: \d+ chained row\(s\) verified\.\nKeyed links \(HMAC-SHA256, key outside the database\) from seq 1\.\nChecked against the newest signed checkpoint: seq \d+ [^\n]*\nHead: \d+:[0-9a-f]{64}/);
    expect(minara(['audit', 'list', '--anchor', '1:ab', '--data-dir', dir])).toMatchObject({ code: 2, stderr: expect.stringContaining('--anchor only applies to verify') });
    expect(minara(['doctor', '--since', '1h'])).toMatchObject({ code: 2, stderr: expect.stringContaining('only applies to') });
    const breakers = minara(['breakers', '--data-dir', dir]);
    expect(breakers.code).toBe(0);
    expect(breakers.stdout).toContain('limits: 3 losses in a row, $500 a day, 20% drawdown');
    expect(minara(['breakers', 'reset', '--data-dir', dir]).code).toBe(2);
    expect(minara(['breakers', 'set', 'default', 'maxConsecutiveLosses=0', '--data-dir', dir])).toMatchObject({ code: 2, stderr: expect.stringContaining('maxConsecutiveLosses must be an integer from 1 to 1000') });
    expect(minara(['shadow', 'report', '--data-dir', dir])).toMatchObject({ code: 1, stderr: expect.stringContaining('not in shadow mode (it trades paper)') });
  });

  it('minara backtest run --synthetic --strategy sma-cross: offline, the run folder and the summary (issue 39)', () => {
    const out = path.join(tempDir(), 'run');
    const r = minara(['backtest', 'run', '--synthetic', '--strategy', 'sma-cross', '--out', out, '--no-png']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/sma-cross\s+buy-and-hold\s+random/);
    for (const f of ['run_config.json', 'metrics.json', 'equity_curve.csv', 'trades.csv', 'orders.csv', 'rejected_orders.csv', 'report.html']) expect(existsSync(path.join(out, f)), f).toBe(true);
    const bad = minara(['backtest', 'run', '--synthetic', '--slow', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--slow expects an integer/);
  }, 60_000);

  it('--help and --version', () => {
    const help = minara(['--help']);
    expect(help.code).toBe(0);
    for (const s of ['minara demo', 'minara serve', 'minara skills add', '--dump-prompt', '--workspace', '--data-dir', '--model']) expect(help.stdout).toContain(s);
    const version = minara(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('rejects unknown flags and commands with exit code 2', () => {
    const flag = minara(['--frobnicate']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('unknown option --frobnicate');
    expect(flag.stderr).toContain('minara --help');
    expect(minara(['frobnicate']).code).toBe(2);
    expect(minara(['--data-dir']).stderr).toContain('--data-dir needs a value');
    expect(minara(['--port', '80']).stderr).toContain('only applies to "minara serve"');
    expect(minara(['--model', 'gpt4']).stderr).toContain('--model expects "provider:model"');
    expect(minara(['skills', 'bogus', '--data-dir', tempDir()]).code).toBe(2);
  });

  it('--dump-prompt prints the system prompt of a new session', () => {
    const dir = tempDir();
    const r = minara(['--dump-prompt', '--data-dir', dir, '--workspace', path.join(dir, 'ws')]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeGreaterThan(500);
    expect(r.stdout).toMatch(/memory_write|memory/i);
  });

  it('demo runs the scripted story offline and exits 0', () => {
    const r = minara(['demo']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const out = r.stdout;
    const order = ["› What's BTC trading at?", '↳ get_price {"symbol":"BTC"}', 'BTC is trading at $', '› Remember that I prefer 0.5% slippage', '↳ memory_write', '› Buy $50 of ETH', '✓ buy_token → Preview (nothing moved): Buy $50.00 of ETH at ~$', '⏸ Buy $50.00 of ETH at ~$', 'buy_token needs your approval', 'Approve? [y/N] y', '✓ buy_token → Bought ', 'Done: bought', '› /new', '› What slippage do I like?', 'You like 0.5% slippage', 'Demo passed'];
    let at = 0;
    for (const s of order) {
      const i = out.indexOf(s, at);
      expect(i, `"${s}" after position ${at} in:\n${out}`).toBeGreaterThanOrEqual(0);
      at = i;
    }
    expect(out).not.toContain('✗');
  });

  it('the REPL reads piped stdin: /tools then /exit, with no model configured', () => {
    const dir = tempDir();
    const r = minara(['--data-dir', dir], { input: '/tools\n/exit\n' });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('model: not configured');
    expect(r.stdout).toContain('› /tools');
    expect(r.stdout).toMatch(/get_price\s+read\s+READ_ONLY/);
    expect(r.stdout).toMatch(/buy_token\s+trade\s+CONFIRM_ONCE/);
    expect(r.stderr).toBe('');
  });

  it('a message without a model explains how to configure one; the REPL keeps going until end of input', () => {
    const dir = tempDir();
    const r = minara(['--data-dir', dir], { input: 'hello\n/memory add preference tight stops\n/memory list\n' });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No language model is configured');
    expect(r.stdout).toContain('#1 [preference] tight stops');
    expect(r.stderr).toBe('');
  });

  it('skills add | list | remove, printing the licence', () => {
    const dir = tempDir();
    expect(minara(['skills', 'list', '--data-dir', dir]).stdout).toContain('No external skills installed');
    const pkg = path.join(tempDir(), 'dca-planner');
    cpSync(path.join(root, 'examples', 'custom-skill', 'skills', 'dca-planner'), pkg, { recursive: true });
    writeFileSync(path.join(pkg, 'LICENSE'), 'MIT License\n\nCopyright (c) 2026 Example\n\nPermission is hereby granted, free of charge, to any person obtaining a copy of this software.\nThe above copyright notice and this permission notice shall be included in all copies.\n');
    const add = minara(['skills', 'add', pkg, '--data-dir', dir]);
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
    expect(add.stdout).toContain('Installed dca.planner');
    expect(add.stdout).toContain('licence: MIT (permissive)');
    expect(minara(['skills', 'list', '--data-dir', dir]).stdout).toContain('dca.planner');
    // The installed skill is in the REPL's catalog.
    expect(minara(['--data-dir', dir], { input: '/skills\n' }).stdout).toContain('dca.planner');
    expect(minara(['skills', 'remove', 'dca.planner', '--data-dir', dir]).stdout).toContain('Removed dca.planner');
    expect(minara(['skills', 'remove', 'dca.planner', '--data-dir', dir]).code).toBe(1);
    expect(minara(['skills', 'upgrade', '--data-dir', dir]).code).toBe(2);
  });

  it('serve starts the gateway, answers /healthz, and stops on SIGINT; a public host needs a token', async () => {
    const dir = tempDir();
    const refused = minara(['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('GATEWAY_AUTH_TOKEN');

    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/index.ts', 'serve', '--port', '0', '--data-dir', dir], { cwd: root, env: cleanEnv() });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const start = Date.now();
    while (!/listening on (http:\/\/\S+)/.test(out)) {
      if (Date.now() - start > 20_000) throw new Error(`serve did not start: ${out}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const url = /listening on (http:\/\/\S+)/.exec(out)![1]!;
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    expect(out).toContain('Stopping');
  });

  it.skipIf(spawnSync('script', ['--version']).status !== 0)('works in a real pseudo-terminal: line editing prompt, Ctrl-C at an empty prompt exits', async () => {
    const dir = tempDir();
    const cmd = `${JSON.stringify(process.execPath)} --import tsx cli/index.ts --data-dir ${JSON.stringify(dir)}`;
    const child = spawn('script', ['-qec', cmd, '/dev/null'], { cwd: root, env: cleanEnv({ TERM: 'dumb' }) });
    let screen = '';
    child.stdout.on('data', (c: Buffer) => {
      screen += c.toString();
    });
    const waitFor = async (s: string, from = 0) => {
      const start = Date.now();
      while (screen.indexOf(s, from) < 0) {
        if (Date.now() - start > 20_000) throw new Error(`timed out waiting for ${s}; screen:\n${screen}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    await waitFor('› ');
    let mark = screen.length;
    child.stdin.write('/tools\r');
    await waitFor('get_price', mark);
    await waitFor('› ', screen.indexOf('get_price', mark));
    mark = screen.length;
    child.stdin.write('\x03');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    // Typed lines are kept in the history file for the next session's ↑.
    expect(existsSync(path.join(dir, 'repl_history')) && readFileSync(path.join(dir, 'repl_history'), 'utf8')).toContain('/tools');
  });
});
