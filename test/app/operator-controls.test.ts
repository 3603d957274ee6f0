/**
 * The operator's controls in a whole app (issue 34, parts 2 and 7): a stopped user's heartbeat is skipped with the
 * reason (on the job run and in the log) while the stop holds; an autonomous turn classified as discover by its
 * signal cannot move funds under a grant, while a decide turn can; the REPL prompt shows the stop; the CLI's
 * controls commands work in-process (bad input named, nothing stored).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgentRuntime, createApp, createToolRegistry, defineTool, type Logger, PermissionTier, silentLogger } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel, recordEvents } from '@minara/agent/testing';
import { runControlsCli } from '../../cli/controls-command';
import { startTestRepl } from '../cli/helpers';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-controls-app-'));
  dirs.push(d);
  return d;
};

const fills: number[] = [];
const swap = defineTool({
  name: 'swap_tokens', toolSet: 'trade', description: 'Swap USDC to ETH', permissionTier: PermissionTier.ALWAYS_CONFIRM, isFundMoving: true,
  inputSchema: z.object({ amountUsd: z.number().positive() }),
  orderFacts: ({ amountUsd }) => ({ notionalUsd: amountUsd, asset: 'ETH', side: 'swap' }),
  preview: ({ amountUsd }) => ({ sizeUsd: amountUsd }),
  execute: ({ amountUsd }) => {
    fills.push(amountUsd);
    return { filled: true, amountUsd };
  },
});

describe('operator controls in the app', () => {
  it("a user's stop skips that user's heartbeat with the reason, logged; released, the next one runs", async () => {
    let t = Date.parse('2026-03-02T00:00:00.000Z');
    const warnings: string[] = [];
    const logger: Logger = { ...silentLogger, warn: (message) => warnings.push(message) };
    const model = createScriptedModel([{ text: 'All quiet, but noteworthy.' }]);
    const app = await createApp({ envFileDir: false, env: {}, logger, model, finance: false, mcp: false, config: { dataDir: tempDir() }, now: () => new Date(t) });
    try {
      writeFileSync(path.join(app.workspace!.dir, 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- watch BTC\n');
      const step = async () => {
        t += 30 * 60_000;
        await app.background.tick();
        await app.background.idle();
      };
      await app.tools.emergencyStop.engage('on holiday', { userId: 'default', by: 'cli' });
      await step();
      const [skipped] = await app.background.runs({ jobId: 'heartbeat', limit: 1 });
      expect(skipped).toMatchObject({ outcome: 'skipped', detail: "default's emergency stop is engaged (on holiday); autonomous runs are skipped until it is released" });
      expect(warnings.some((w) => w.startsWith("autonomous run skipped: default's emergency stop is engaged"))).toBe(true);
      expect(model.calls).toHaveLength(0);
      expect(await app.admitAutonomousTurn({ userId: 'someone-else' })).toBeUndefined();
      await app.tools.emergencyStop.release({ userId: 'default' });
      await step();
      const [ran] = await app.background.runs({ jobId: 'heartbeat', limit: 1 });
      expect(ran).toMatchObject({ outcome: 'ok' });
      expect(model.calls).toHaveLength(1);
    } finally {
      await app.close();
    }
  });

  it('an autonomous turn whose signal says discover cannot move funds under a grant; a decide turn can', async () => {
    const call = { toolCalls: [{ toolName: 'swap_tokens', input: { amountUsd: 20, confirm: true } }] };
    const model = createScriptedModel([call, { text: 'Could not.' }, call, { text: 'Done.' }]);
    const storage = createInMemoryStorage();
    const tools = createToolRegistry({ storage, tools: [swap] });
    const runtime = createAgentRuntime({ model, tools, storage, logger: silentLogger });
    await tools.grants.create({ tools: ['swap_tokens'], userId: 'default', sources: ['cron'], capPerCallUsd: 50, capPerDayUsd: 100, expiresAt: 3_600_000 });
    const run = (stages: ('discover' | 'decide')[], sessionId: string) =>
      recordEvents(runtime.run({ sessionId, source: 'cron', message: 'BTC moved', allowedToolSets: ['trade', 'read'], signal: { source: 'cron', signal_id: 'btc', suggested_stages: stages } }));
    const discover = await run(['discover'], 'cron-discover');
    expect(discover.ofType('tool-result')[0]).toMatchObject({ toolName: 'swap_tokens', output: { ok: false, code: 'STAGE_NOT_ALLOWED' } });
    expect(fills).toEqual([]);
    const decide = await run(['decide'], 'cron-decide');
    expect(decide.ofType('tool-result')[0]).toMatchObject({ toolName: 'swap_tokens', output: { ok: true } });
    expect(fills).toEqual([20]);
    // Without a signal, the message's own classification counts: "show me the price" is a discover turn.
    const model2 = createScriptedModel([call, { text: 'No.' }]);
    const runtime2 = createAgentRuntime({ model: model2, tools, storage, logger: silentLogger });
    const shown = await recordEvents(runtime2.run({ sessionId: 'cron-show', source: 'cron', message: 'show me the price of ETH', allowedToolSets: ['trade', 'read'] }));
    expect(shown.ofType('tool-result')[0]).toMatchObject({ output: { code: 'STAGE_NOT_ALLOWED' } });
    expect(await tools.grants.list({ userId: 'default' }).then((g) => tools.grants.leftToday(g[0]!.id))).toBe(80);
  });

  it('the REPL prompt shows the stop that applies, read before each prompt; an approval prompt shows what a grant has left today', async () => {
    const model = createScriptedModel([{ toolCalls: [{ toolName: 'buy_token', input: { symbol: 'ETH', amountUsd: 50, confirm: true } }] }, { text: 'OK, not bought.' }]);
    const repl = await startTestRepl({ model });
    try {
      await repl.app.tools.grants.create({ tools: ['buy_token'], userId: 'default', sources: ['cron'], capPerCallUsd: 100, capPerDayUsd: 300, expiresAt: 3_600_000 });
      repl.type('Buy $50 of ETH');
      await repl.waitFor('Approve? [y/N] ');
      expect(repl.screen()).toContain('    grant left today: $300.00 (what your grant for autonomous runs still allows, UTC day)');
      repl.type('n');
      await repl.waitFor('OK, not bought.');
      repl.type('/help');
      await repl.waitFor('/exit');
      expect(repl.screen()).not.toContain('⏹ stopped');
      await repl.app.tools.emergencyStop.engage('drill', { userId: 'default', by: 'default', actor: 'user' });
      const from = repl.screen().length;
      repl.type('/help');
      await repl.waitFor("⏹ stopped (your stop) › ", from);
      await repl.app.tools.emergencyStop.release({ userId: 'default' });
      await repl.app.tools.emergencyStop.engage('everyone');
      const again = repl.screen().length;
      repl.type('/help');
      await repl.waitFor('⏹ stopped (global) › ', again);
      await repl.done();
    } finally {
      await repl.close();
    }
  });

  it('minara grants / stop / tools / usage in-process: bad input named, nothing stored; the happy path', async () => {
    const dataDir = tempDir();
    let out = '';
    let errOut = '';
    const io = { write: (s: string) => void (out += s), writeErr: (s: string) => void (errOut += s) };
    const run = (...args: string[]) => runControlsCli([...args, '--data-dir', dataDir], io);
    expect(await run('grants', 'create', '--tool-sets', 'yolo', '--cap-per-call', '5', '--cap-per-day', '10', '--expires', '1d')).toBe(1);
    expect(errOut).toContain('"toolSets" names an unknown tool set "yolo"');
    expect(await run('grants', 'create', '--tool-sets', 'trade', '--cap-per-call', '5', '--cap-per-day', '-10', '--expires', '1d')).toBe(1);
    expect(errOut).toContain('"capPerDayUsd"');
    expect(await run('grants', 'create', '--tool-sets', 'trade', '--cap-per-call', '5', '--cap-per-day', '10', '--expires', '2001-01-01T00:00:00Z')).toBe(1);
    expect(errOut).toContain('"expiresAt" is in the past');
    // Bounds (issue 37): no MANUAL_ONLY tool, caps within the finance limits, no lifetime past MINARA_GRANT_MAX_DAYS (90).
    expect(await run('grants', 'create', '--tool-sets', 'transfer', '--cap-per-call', '5', '--cap-per-day', '10', '--expires', '1d')).toBe(1);
    expect(errOut).toContain('a MANUAL_ONLY tool');
    expect(await run('grants', 'create', '--tool-sets', 'trade', '--cap-per-call', '1000000000000', '--cap-per-day', '10', '--expires', '1d')).toBe(1);
    expect(errOut).toContain("above the operator's limit of $5,000 per call");
    expect(await run('grants', 'create', '--tool-sets', 'trade', '--cap-per-call', '5', '--cap-per-day', '10', '--expires', '9999-12-31T00:00:00Z')).toBe(1);
    expect(errOut).toContain('outlives the longest a grant may live (90 days');
    expect(await run('grants', 'create', '--tool-sets', 'trade', '--cap-per-day', '10', '--expires', '1d')).toBe(2);
    expect(errOut).toContain('grants create needs --cap-per-call');
    out = '';
    expect(await run('grants', 'list', '--all')).toBe(0);
    expect(out).toContain('No live grants');
    expect(await run('grants', 'create', '--tool-sets', 'trade', '--user', 'alice', '--sources', 'cron,webhook', '--cap-per-call', '50', '--cap-per-day', '200', '--expires', '7d', '--note', 'weekly DCA')).toBe(0);
    expect(out).toMatch(/Created grt_\S+\.\ngrt_\S+ {2}active {2}for alice {2}sets trade {2}from cron,webhook\n {4}cap \$50\.00\/call, \$200\.00\/day; today spent \$0\.00, left \$200\.00; expires \S+; weekly DCA\n/);
    out = '';
    expect(await run('stop', '--user', 'alice', '--reason', 'drill')).toBe(0);
    expect(out).toContain('Engaged the stop of alice: nothing above READ_ONLY runs for alice, and autonomous runs are skipped, in every process on this database. Release it with: minara stop --user alice --release');
    expect(out).toContain("alice's stop: ENGAGED");
    out = '';
    expect(await run('stop', 'status', '--user', 'alice')).toBe(0);
    expect(out).toMatch(/global stop: off\nalice's stop: ENGAGED since \S+ \(drill\)\n/);
    expect(await run('stop', '--global', '--user', 'alice')).toBe(2);
    out = '';
    expect(await run('tools', 'disable', 'trade', '--user', 'alice', '--reason', 'review')).toBe(0);
    expect(await run('tools', 'list', '--user', 'alice')).toBe(0);
    expect(out).toMatch(/off {2}trade {6}Buy, sell and swap tokens \(each order waits for your approval unless a grant covers it\) {2}\(off since \S+: review, by cli\)/);
    out = '';
    expect(await run('usage', 'set', 'alice', '--rpm', '10', '--usd-per-day', '2.5')).toBe(0);
    expect(await run('usage', '--all')).toBe(0);
    expect(out).toMatch(/alice\s+0 turns {2}chat \$0\.00 of \$2\.50\/day, \$2\.50 left {2}autonomous \$0\.00 {2}rpm limit 10/);
    expect(await run('usage', 'set', 'alice', '--rpm', '-1')).toBe(2);
    expect(await run('frobnicate')).toBe(2);
  });
});
