/**
 * Workflows that run by themselves: a workspace YAML workflow run by a HEARTBEAT.md `## Schedule` entry with no model
 * turn, every run stored (status, each step's input and output, trace id, duration); the gate as the autonomous
 * source `workflow` (a fund-moving step needs a stored grant); file errors naming the file and line; one run per
 * trigger with two runners on one database.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createApp, createWorkflowAutomation, formatWorkflowIssues, type MinaraApp, parseSchedule, parseWorkflowFile, silentLogger, startStoredWorkflow, toStoredStep, WORKFLOW_NAME, workflowFromSpec,
} from '@minara/agent';
import { createScriptedModel, type ScriptEntry } from '@minara/agent/testing';

const T0 = Date.parse('2026-03-02T00:00:00.000Z');
const dirs: string[] = [];
const apps: MinaraApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const CHECK = `description: Read ETH and BTC prices
steps:
  - id: eth
    tool: get_price
    args: { symbol: ETH }
  - id: btc
    tool: get_price
    args:
      symbol: BTC
`;
const BUY = `description: Buy $20 of ETH, no questions asked
tool_sets: [read, trade]
steps:
  - id: eth
    tool: get_price
    args: { symbol: ETH }
  - id: buy
    tool: swap_tokens
    args: { from: USDC, to: ETH, amountUsd: 20, confirm: true, intent: "swap USDC to ETH 20 USD at {{ steps.eth.data.priceUsd }}" }
  - id: after
    tool: get_price
    args: { symbol: BTC }
`;

async function open(options: { dir?: string; script?: ScriptEntry[]; schedule?: string; files?: Record<string, string>; owner?: string; clock?: { t: number } } = {}) {
  const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'minara-wf-'));
  if (!options.dir) dirs.push(dir);
  const clock = options.clock ?? { t: T0 };
  const model = createScriptedModel(options.script ?? []);
  const app = await createApp({
    envFileDir: false, env: { MINARA_PERSONALIZATION_REBUILD: 'disabled', MINARA_HEARTBEAT_EVERY: '0' }, logger: silentLogger, model, config: { dataDir: dir },
    now: () => new Date(clock.t), ...(options.owner ? { background: { owner: options.owner } } : {}),
  });
  apps.push(app);
  const ws = app.workspace!.dir;
  mkdirSync(path.join(ws, 'workflows'), { recursive: true });
  for (const [name, text] of Object.entries(options.files ?? {})) writeFileSync(path.join(ws, 'workflows', name), text);
  if (options.schedule !== undefined) writeFileSync(path.join(ws, 'HEARTBEAT.md'), `# Heartbeat\n\n## Schedule\n\n${options.schedule}\n`);
  const advance = async (ms: number, step = 60_000) => {
    for (let done = 0; done < ms; done += step) {
      clock.t += step;
      await app.background.tick();
      await app.background.idle();
    }
  };
  return { app, model, dir, clock, advance };
}

describe('workflows from the workspace, run by the schedule', () => {
  it('a `## Schedule` entry runs the workflow every hour with no model turn; each run is stored with its steps, trace id and duration', async () => {
    const { app, model, advance } = await open({ files: { 'price-check.yaml': CHECK }, schedule: '- every 1h: workflow price-check' });
    expect(await app.workflows.list()).toMatchObject([{ id: 'price-check', source: 'workspace', file: 'workflows/price-check.yaml', steps: 2, modelSteps: 0, tools: ['get_price', 'get_price'] }]);
    await app.background.syncSchedule();
    const job = app.background.status().find((j) => j.id.startsWith('schedule:'))!;
    expect(job).toMatchObject({ schedule: 'every 1h' });
    await advance(3 * 3_600_000);
    expect(model.calls).toHaveLength(0); // no model turn, ever
    const runs = await app.workflows.runs({ workflowId: 'price-check' });
    expect(runs).toHaveLength(3);
    const [run] = runs;
    expect(run).toMatchObject({ workflowId: 'price-check', status: 'ok', trigger: 'schedule', userId: 'default', skipped: [] });
    expect(run!.triggerKey).toBe(`${job.id}@2026-03-02T03:00:00.000Z`);
    expect(run!.durationMs).toEqual(expect.any(Number));
    expect(run!.steps.map((s) => [s.id, s.tool, s.input, s.ok, s.decision])).toEqual([
      ['eth', 'get_price', { symbol: 'ETH' }, true, 'allowed'],
      ['btc', 'get_price', { symbol: 'BTC' }, true, 'allowed'],
    ]);
    expect(run!.steps[0]!.output).toMatchObject({ ok: true, data: { symbol: 'ETH', priceUsd: expect.any(Number), simulated: true } });
    // Every step went through the registry's gate as the autonomous source `workflow`, under the run's trace id.
    const audit = await app.tools.queryAudit({ traceId: run!.traceId });
    expect(audit.map((a) => [a.toolName, a.source, a.decision])).toEqual([['get_price', 'workflow', 'allowed'], ['get_price', 'workflow', 'allowed']]);
    expect(await app.workflows.getRun(run!.id)).toEqual(run);
    // The runner's own record of the slot names the run.
    expect((await app.background.runs({ jobId: job.id }))[0]).toMatchObject({ outcome: 'ok', detail: expect.stringMatching(/^workflow price-check run wfr_\w+ ok \(2 steps\)$/) });
  });

  it('a fund-moving step is refused without a stored grant (nothing traded, the run failed and says why); with a grant for `workflow` it runs', async () => {
    const { app, advance } = await open({ files: { 'buy-eth.yaml': BUY }, schedule: '- every 1h: workflow buy-eth' });
    const before = (await app.finance!.trading.getPortfolio()).holdings.find((h) => h.asset === 'ETH')?.amount ?? 0;
    await advance(2 * 3_600_000);
    const [refused] = await app.workflows.runs({ workflowId: 'buy-eth' });
    expect(refused).toMatchObject({ status: 'failed', skipped: ['after'], error: expect.stringMatching(/^steps\[1\] "buy": GRANT_REQUIRED: /) });
    expect(refused!.steps[1]).toMatchObject({ id: 'buy', tool: 'swap_tokens', ok: false, code: 'GRANT_REQUIRED', decision: 'blocked' });
    // The template filled in the price the first step read.
    expect(refused!.steps[1]!.input).toMatchObject({ amountUsd: 20, confirm: true, intent: `swap USDC to ETH 20 USD at ${(refused!.steps[0]!.output as { data: { priceUsd: number } }).data.priceUsd}` });
    expect((await app.finance!.trading.getPortfolio()).holdings.find((h) => h.asset === 'ETH')?.amount ?? 0).toBe(before);
    // The schedule's own run is a failure (visible in /jobs), not a silent success.
    expect((await app.background.runs({ limit: 5 })).find((r) => r.jobId.startsWith('schedule:'))).toMatchObject({ outcome: 'failed', error: expect.stringContaining('GRANT_REQUIRED') });

    await app.tools.grants.create({ toolName: 'swap_tokens', sources: ['workflow'], argLimits: { amountUsd: { max: 25 } }, note: 'buy-eth workflow' });
    await advance(3_600_000);
    const [granted] = await app.workflows.runs({ workflowId: 'buy-eth' });
    expect(granted).toMatchObject({ status: 'ok', skipped: [] });
    expect(granted!.steps.map((s) => s.ok)).toEqual([true, true, true]);
    expect((await app.finance!.trading.getPortfolio()).holdings.find((h) => h.asset === 'ETH')!.amount).toBeGreaterThan(before);
    // The run's trade reaches the learning loop like a turn's: one trade row, the workflow as its role, its trace id.
    const trades = await app.learning!.listTrades();
    expect(trades).toHaveLength(1);
    expect(trades[0]).toMatchObject({ asset: 'ETH', action: 'open', role: 'workflow:buy-eth', status: 'open', turnId: `buy-eth:${granted!.traceId}`, simulated: true });
  });

  it('a file that does not check is skipped and named with its line; a schedule line naming no workflow is a problem; a fixed file is picked up', async () => {
    const { app, advance } = await open({
      files: { 'broken.yaml': 'description: x\nsteps:\n  - id: eth\n    tool: get_prise\n    args: { symbol: ETH }\n', 'Bad Name.yaml': CHECK },
      schedule: '- every 1h: workflow broken\n- every 2h: workflow price-check',
    });
    const issues = await app.workflows.issues();
    expect(formatWorkflowIssues(issues)).toContain('workflows/broken.yaml:4: steps[0].tool: no registered tool named "get_prise" (did you mean get_price');
    expect(issues.find((i) => i.file === 'workflows/Bad Name.yaml')).toMatchObject({ line: 1, message: expect.stringContaining('must be 1–48 of a-z') });
    expect(await app.workflows.list()).toEqual([]);
    const schedule = await app.background.syncSchedule();
    expect(schedule.problems.map((p) => p.reason)).toEqual([expect.stringContaining('no workflow named "broken"'), expect.stringContaining('no workflow named "price-check"')]);
    expect(app.background.takeNotices()).toHaveLength(2);
    await expect(app.workflows.trigger('broken')).rejects.toMatchObject({ code: 'NOT_FOUND', message: expect.stringContaining('No workflow named "broken"') });
    // Fix the file: the next sync schedules it.
    writeFileSync(path.join(app.workspace!.dir, 'workflows', 'broken.yaml'), 'steps:\n  - id: eth\n    tool: get_price\n    args: { symbol: ETH }\n');
    await advance(2 * 3_600_000, 3_600_000);
    expect((await app.workflows.runs({ workflowId: 'broken' }))[0]).toMatchObject({ status: 'ok' });
  });

  it('two runners on one database run each trigger once; a trigger key is claimed once; a run whose process died is marked interrupted', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'minara-wf2-'));
    dirs.push(dir);
    const clock = { t: T0 };
    const a = await open({ dir, clock, owner: 'host-a:1:aa', files: { 'price-check.yaml': CHECK }, schedule: '- every 1h: workflow price-check' });
    const b = await open({ dir, clock, owner: 'host-b:2:bb' });
    await a.app.background.syncSchedule();
    for (let i = 0; i < 4; i++) {
      clock.t += 3_600_000;
      await Promise.all([a.app.background.tick(), b.app.background.tick()]);
      await Promise.all([a.app.background.idle(), b.app.background.idle()]);
    }
    const runs = await b.app.workflows.runs({ workflowId: 'price-check' });
    expect(runs).toHaveLength(4);
    expect(new Set(runs.map((r) => r.triggerKey)).size).toBe(4);
    // A manual trigger with a key: the second start of the same key, from the other app, runs nothing.
    const [first, second] = await Promise.all([a.app.workflows.trigger('price-check', { key: 'evt-1' }), b.app.workflows.trigger('price-check', { key: 'evt-1' })]);
    expect([first, second].filter((r) => r !== undefined)).toHaveLength(1);
    // A process that died mid-run: its run is marked interrupted once its lease lapses, and never run again.
    const claimed = await a.app.storage.workflows.claimRun({ id: 'wfr_dead', workflowId: 'price-check', userId: 'default', trigger: 'manual', triggerKey: 'dead', owner: 'gone:9:zz', traceId: 'trc_dead', startedAt: new Date(clock.t).toISOString(), leaseUntil: new Date(clock.t + 60_000).toISOString() });
    expect(claimed).toBeDefined();
    clock.t += 120_000;
    expect(await a.app.workflows.getRun('wfr_dead')).toMatchObject({ status: 'interrupted' });
  });
});

describe('parseWorkflowFile and code workflows', () => {
  it('templates read earlier steps and the trigger input; a reference that does not resolve fails its step', async () => {
    const { workflow, issues } = parseWorkflowFile(
      'steps:\n  - id: eth\n    tool: get_price\n    args: { symbol: "{{ input.symbol }}" }\n  - id: again\n    tool: get_price\n    args: { symbol: "{{ steps.eth.data.nope }}" }\n',
      { file: 'workflows/t.yaml' },
    );
    expect(issues).toEqual([]);
    const { app } = await open();
    const result = await app.runtime.runWorkflow(workflowFromSpec(workflow!, { input: { symbol: 'SOL' } }));
    expect(result.steps[0]).toMatchObject({ ok: true, input: { symbol: 'SOL' } });
    expect(result.steps[1]).toMatchObject({ ok: false, error: 'args: {{ steps.eth.data.nope }}: no value at "nope"' });
    expect(parseWorkflowFile('steps:\n  - id: a\n   tool: x\n', { file: 'workflows/s.yaml' }).issues[0]).toMatchObject({ file: 'workflows/s.yaml', line: 3, path: '(file)' });
    // A custom tag is an issue at its line, not a value read as a plain string.
    const tagged = parseWorkflowFile('steps:\n  - id: a\n    tool: !!js/function "x"\n', { file: 'workflows/t.yaml' });
    expect(tagged.workflow).toBeUndefined();
    expect(tagged.issues).toEqual([expect.objectContaining({ file: 'workflows/t.yaml', line: 3, path: '(file)', message: expect.stringContaining('js/function') })]);
    expect(formatWorkflowIssues(parseWorkflowFile('steps: []\nextra: 1\n', { file: 'workflows/e.yaml' }).issues)).toBe(
      'workflows/e.yaml:2: extra: unknown field (expected description, user, tool_sets, stop_on_error, steps)\nworkflows/e.yaml:1: steps: expected a non-empty list of steps, got a list',
    );
  });

  it('createApp({ workflows }) runs code workflows by name, and refuses a bad one at construction', async () => {
    const { app } = await open();
    const automation = createWorkflowAutomation({
      runtime: app.runtime, storage: app.storage, tools: app.tools,
      workflows: [{ id: 'btc-now', steps: [{ id: 'btc', kind: 'tool_call', tool: 'get_price', args: { symbol: 'BTC' } }] }],
    });
    expect(await automation.list()).toMatchObject([{ id: 'btc-now', source: 'code', modelSteps: 0 }]);
    const run = await automation.trigger('btc-now');
    expect(run).toMatchObject({ status: 'ok', trigger: 'manual', steps: [{ id: 'btc', ok: true }] });
    expect(() => createWorkflowAutomation({ runtime: app.runtime, storage: app.storage, tools: app.tools, workflows: [{ id: 'Bad', steps: [] }] })).toThrow(/workflows\[0\]\.id must be a workflow name/);
    expect(() => createWorkflowAutomation({ runtime: app.runtime, storage: app.storage, tools: app.tools, workflows: [{ id: 'x', steps: [{ id: 'a', kind: 'tool_call', tool: 'nope' }] }] })).toThrow(/no registered tool named "nope"/);
    expect(parseSchedule('- every 1h: workflow Rebalance-Check').entries[0]).toMatchObject({ workflow: 'rebalance-check', every: 3_600_000 });
  });

  it('refuses what a workflow file must not do: a symbolic link, YAML aliases, an unknown key; secrets in a step input are redacted in the stored run', async () => {
    const { app } = await open({ files: { 'ok.yaml': CHECK } });
    const flows = path.join(app.workspace!.dir, 'workflows');
    writeFileSync(path.join(app.workspace!.dir, 'outside.yaml'), CHECK);
    symlinkSync(path.join(app.workspace!.dir, 'outside.yaml'), path.join(flows, 'linked.yaml'));
    writeFileSync(path.join(flows, 'bomb.yaml'), 'x: &a [1, 2]\ny: &b [*a, *a]\nsteps:\n  - id: a\n    tool: get_price\n    args: { symbol: ETH, list: *b }\n');
    const issues = await app.workflows.issues();
    expect(issues.find((i) => i.file === 'workflows/linked.yaml')?.message).toMatch(/symbolic link/);
    expect(issues.find((i) => i.file === 'workflows/bomb.yaml')).toMatchObject({ line: 2, message: 'YAML anchors and aliases are not allowed in a workflow' });
    expect((await app.workflows.list()).map((w) => w.id)).toEqual(['ok']);
    expect(WORKFLOW_NAME.test('ok')).toBe(true);
    expect(WORKFLOW_NAME.test('../x')).toBe(false);
    // A stored run redacts secret-looking input (as the audit log does) and runs once per key.
    const definition = { id: 'keyed', steps: [{ id: 'p', kind: 'tool_call' as const, tool: 'get_price', args: { symbol: 'ETH', apiKey: 'sk-live-0123456789abcdef0123' } }] };
    const options = { runtime: app.runtime, storage: app.storage, definition, trigger: 'manual' as const, triggerKey: 'k', userId: 'default', owner: 'me:1:aa', now: () => new Date(T0), generateId: (p: string) => `${p}_${Math.random().toString(36).slice(2, 10)}` };
    const started = await startStoredWorkflow(options);
    const run = await started!.done;
    expect(JSON.stringify(run.steps[0]!.input)).not.toContain('sk-live');
    expect(run.steps[0]!.input).toMatchObject({ symbol: 'ETH', apiKey: '[REDACTED]' });
    expect(await startStoredWorkflow(options)).toBeUndefined();
    expect(toStoredStep({ id: 'x', kind: 'agent_turn', ok: true, text: 'hi', decision: 'finished', input: 'say hi', durationMs: 1.23456 })).toMatchObject({ input: 'say hi', output: { text: 'hi', stopReason: 'finished' }, durationMs: 1.235 });
  });
});
