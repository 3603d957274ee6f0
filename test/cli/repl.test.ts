/**
 * The REPL driven as a person would: typed lines in, the screen out (PassThrough streams, in-process).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MODEL_HELP } from '@minara/agent';
import { createScriptedModel } from '@minara/agent/testing';
import { startTestRepl, type TestRepl } from './helpers';

let repl: TestRepl | undefined;
afterEach(async () => {
  await repl?.close();
  repl = undefined;
});

/** Type a line and wait for the REPL to ask for the next one (the prompt or a y/N question). */
async function send(r: TestRepl, line: string): Promise<string> {
  const from = r.screen().length;
  r.type(line);
  await r.waitFor(/\n(› |Approve\? \[y\/N\] )$/, from);
  return r.screen().slice(from);
}

describe('REPL', () => {
  it('runs slash commands, a turn with tools, approvals answered n then y, /new and /exit', async () => {
    const model = createScriptedModel([
      // "What's BTC at?"
      { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] },
      { text: 'BTC is $97,250.' },
      // "Buy $50 of ETH" → approval → n
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'ETH', amountUsd: 50, confirm: true } }] },
      { text: 'OK, I did not buy anything.' },
      // "Buy it after all" → approval → y
      { toolCalls: [{ toolName: 'buy_token', input: { symbol: 'ETH', amountUsd: 50, confirm: true } }] },
      { text: 'Bought $50 of ETH.' },
    ]);
    const r = (repl = await startTestRepl({ model }));
    await r.waitFor(/› $/);
    expect(r.screen()).toContain('model: custom:scripted-model · session repl-test-1');

    const help = await send(r, '/help');
    for (const cmd of ['/new', '/json', '/prompt', '/profile', '/memory', '/skills', '/tools', '/call <tool> <json>', '/approvals', '/soul', '/identity', '/heartbeat', '/workspace', '/exit']) {
      expect(help).toContain(cmd);
    }

    const tools = await send(r, '/tools');
    expect(tools).toMatch(/get_price\s+read\s+READ_ONLY/);
    expect(tools).toMatch(/buy_token\s+read\s+CONFIRM_ONCE/);
    expect(tools).toContain('memory_write');

    expect(await send(r, '/memory add preference I prefer 0.5% slippage')).toContain('Saved memory #1 [preference]');
    expect(await send(r, '/memory list')).toContain('#1 [preference] I prefer 0.5% slippage  (user_manual)');
    expect(await send(r, '/memory search slippage')).toContain('#1 [preference] I prefer 0.5% slippage');

    const call = await send(r, '/call get_price {"symbol":"BTC"}');
    expect(call).toContain('↳ get_price {"symbol":"BTC"}');
    // One readable line per result; the JSON on request (/json).
    expect(call).toContain('  ✓ get_price → BTC $97,250\n');
    expect(await send(r, '/json')).toContain('JSON on');
    expect(await send(r, '/call get_price {"symbol":"BTC"}')).toContain('  ✓ get_price → BTC $97,250\n    {"symbol":"BTC","priceUsd":97250}\n');
    expect(await send(r, '/json')).toContain('JSON off');

    const turn = await send(r, "What's BTC at?");
    expect(turn).toContain('  ↳ get_price {"symbol":"BTC"}\n  ✓ get_price → BTC $97,250\nBTC is $97,250.\n');

    // The approval says what will happen in words and numbers, not the input JSON.
    const ask1 = await send(r, 'Buy $50 of ETH');
    expect(ask1).toContain('  ↳ buy_token: Buy $50.00 of ETH\n');
    expect(ask1).toContain('⏸ Buy $50.00 of ETH.\n    buy_token needs your approval (');
    expect(ask1).not.toContain('input:');
    expect(ask1.endsWith('Approve? [y/N] ')).toBe(true);
    const denied = await send(r, 'n');
    expect(denied).toContain('⛔ buy_token blocked (APPROVAL_DENIED)');
    expect(denied).toContain('OK, I did not buy anything.');
    expect(r.fills).toEqual([]);

    const ask2 = await send(r, 'Buy it after all');
    expect(ask2.endsWith('Approve? [y/N] ')).toBe(true);
    const approved = await send(r, 'y');
    expect(approved).toContain('✓ buy_token → {"filled":true,"symbol":"ETH","amountUsd":50}');
    expect(approved).toContain('Bought $50 of ETH.');
    expect(r.fills).toEqual(['ETH:50']);

    expect(await send(r, '/approvals')).toContain('No pending approvals.');
    expect(await send(r, '/new')).toContain('New session repl-test-2.');
    // /call asks inline in the new session (CONFIRM_ONCE is per session), through the same gate.
    const callBuy = await send(r, '/call buy_token {"symbol":"SOL","amountUsd":5,"confirm":true}');
    expect(callBuy).toContain('⏸ Buy $5.00 of SOL.\n    buy_token needs your approval (');
    expect(await send(r, 'y')).toContain('✓ buy_token → {"filled":true,"symbol":"SOL","amountUsd":5}');
    expect(r.fills).toEqual(['ETH:50', 'SOL:5']);

    r.type('/exit');
    const result = await r.done();
    expect(result.sessions).toEqual(['repl-test-1', 'repl-test-2']);
    model.assertConsumed();
    const audit = await r.app.tools.queryAudit({ toolName: 'buy_token', limit: 20 });
    expect(audit.map((a) => a.source)).toContain('user');
  });

  it('shows workspace files, the prompt, the profile, and suggests close matches for typos', async () => {
    const r = (repl = await startTestRepl());
    await r.waitFor(/› $/);
    expect(await send(r, '/soul')).toMatch(/── SOUL\.md \(.*\) ──\n/);
    expect(await send(r, '/workspace identity')).toContain('── IDENTITY.md');
    expect(await send(r, '/workspace nope')).toContain('Unknown workspace file "nope"');
    const list = await send(r, '/workspace');
    expect(list).toMatch(/soul\s+SOUL\.md\s+\d+ bytes/);
    expect(await send(r, '/heartbeat')).toMatch(/HEARTBEAT\.md (does not exist yet|\()/);
    expect((await send(r, '/prompt')).length).toBeGreaterThan(200);
    expect(await send(r, '/profile')).toContain('Profile: (empty)');
    // A prefix means that command only: /tool is /tools, never /soul.
    expect(await send(r, '/tool')).toContain('Unknown command /tool. Did you mean /tools? Type /help');
    expect(await send(r, '/memroy list')).toContain('Did you mean /memory');
    expect(await send(r, '/call nope {}')).toContain('No tool named "nope"');
    expect(await send(r, '/call get_price {bad json')).toContain('Arguments must be JSON');
    expect(await send(r, '/skills')).toBeTypeOf('string');
    r.type('/exit');
    await r.done();
  });

  it('without a model: slash commands work, a message explains how to configure one, and the REPL keeps going', async () => {
    const r = (repl = await startTestRepl({ env: {} }));
    await r.waitFor(/› $/);
    expect(r.screen()).toContain('model: not configured');
    const first = await send(r, 'hello there');
    expect(first).toContain(MODEL_HELP.split('\n')[0]!);
    expect(first).toContain('MINARA_MODEL=anthropic:claude-sonnet-4-5');
    expect(first.split('No language model is configured').length - 1).toBe(1);
    expect(await send(r, '/tools')).toContain('get_price');
    expect(await send(r, '/memory add lesson cut losers early')).toContain('Saved memory #1 [lesson]');
    const second = await send(r, 'still there?');
    expect(second).toContain('No language model is configured');
    expect(await send(r, '/call get_price {"symbol":"ETH"}')).toContain('✓ get_price → ETH $3,410');
    await r.done(); // end of input (Ctrl-D) leaves cleanly too
  });

  it('Ctrl-C cancels the running turn and the REPL keeps going', async () => {
    const model = createScriptedModel([{ text: 'A very long answer that streams slowly, piece by piece, so there is time to cancel it before it ends.' }, { text: 'next' }], { chunkDelayMs: 150 });
    const r = (repl = await startTestRepl({ model, handleProcessSignals: true }));
    await r.waitFor(/› $/);
    const from = r.screen().length;
    r.type('tell me a long story');
    await r.waitFor('A very long', from);
    process.emit('SIGINT');
    await r.waitFor('(cancelled)', from);
    await r.waitFor(/\n› $/, from);
    expect(r.screen().slice(from)).not.toContain('before it ends.');
    expect(await send(r, 'again')).toContain('next');
    r.type('/exit');
    await r.done();
  });

  it('lines typed while a turn runs are kept and run in order', async () => {
    const model = createScriptedModel([{ text: 'one' }, { text: 'two' }]);
    const r = (repl = await startTestRepl({ model }));
    r.type('first');
    r.type('second');
    r.type('/exit');
    await r.done();
    expect(r.screen()).toMatch(/› first\none\n[\s\S]*› second\ntwo\n/);
    model.assertConsumed();
  });
});

describe('createCliLogger', () => {
  it('in the REPL a failed turn is said once (the REPL shows it), elsewhere it is logged', async () => {
    const { createCliLogger } = await import('../../cli/app');
    const lines: string[] = [];
    const repl = createCliLogger({ level: 'warn', write: (l) => lines.push(l), hideTurnErrors: true });
    repl.error('turn failed', { error: 'Cannot connect to API' });
    repl.error('storage failed', { error: 'disk full' });
    expect(lines).toEqual(['minara: error: storage failed (error=disk full)']);
    const serve = createCliLogger({ level: 'warn', write: (l) => lines.push(l) });
    serve.error('turn failed', { error: 'Cannot connect to API' });
    expect(lines.at(-1)).toBe('minara: error: turn failed (error=Cannot connect to API)');
  });
});

describe('background deliveries in the REPL', () => {
  it('an answer of a scheduled turn that arrived between turns is shown before the next prompt', async () => {
    const { writeFileSync } = await import('node:fs');
    const path = await import('node:path');
    let t = Date.parse('2026-03-02T08:00:00.000Z');
    const r = await startTestRepl({ model: createScriptedModel([{ text: 'Funding flipped negative.' }]), now: () => new Date(t) });
    try {
      writeFileSync(path.join(r.app.workspace!.dir, 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- every 6h: report BTC funding\n');
      await r.app.background.syncSchedule();
      t = Date.parse('2026-03-02T12:00:00.000Z');
      await r.app.background.tick();
      await r.app.background.idle();
      const from = r.screen().length;
      r.type('/help');
      await r.waitFor('Funding flipped negative.', from);
      expect(r.screen().slice(from)).toMatch(/\[cron schedule:[0-9a-f]{8} · 12:00 UTC · session schedule-[0-9a-f]{8}-2026-03-02\]/);
    } finally {
      await r.done();
      await r.close();
    }
  });
});

describe('a price alert in the REPL', () => {
  it('an alert that fired between turns is shown once before the next prompt', async () => {
    let t = Date.parse('2026-03-02T08:00:30.000Z');
    const r = await startTestRepl({ model: createScriptedModel([]), now: () => new Date(t), realFinance: true, env: { MINARA_HEARTBEAT_EVERY: '0' } });
    try {
      const market = r.app.finance!.market as unknown as { setPrice(symbol: string, price: number): void };
      market.setPrice('ETH', 3_100);
      await r.app.tools.dispatch('alert_request', { op: 'add', asset: 'ETH', condition: 'below', threshold: 3_000 });
      market.setPrice('ETH', 2_950);
      t += 60_000;
      await r.app.background.tick();
      await r.app.background.idle();
      const from = r.screen().length;
      r.type('/help');
      await r.waitFor('ETH is at 2,950 USD, below your alert level of 3,000 USD', from);
      expect(r.screen().slice(from)).toMatch(/\[alert alerts:check · 08:01 UTC · session alert-1-[0-9a-f]{8}\]/);
      const again = r.screen().length;
      r.type('/alerts list all');
      await r.waitFor(/#1\s+ETH\s+below 3000\s+fired/, again);
      expect(r.screen().slice(again)).not.toContain('ETH is at 2,950 USD');
    } finally {
      await r.done();
      await r.close();
    }
  });
});

describe('REPL and the circuit breaker', () => {
  it('a tripped breaker is one line before the prompt, said again only when it is reset', async () => {
    const r = await startTestRepl({ model: createScriptedModel([]) });
    try {
      await r.waitFor(/› $/);
      for (let i = 0; i < 3; i++) {
        await r.app.storage.audit.append({
          at: new Date().toISOString(), toolName: 'sell_token', tier: 2, source: 'cron', userId: 'default', decision: 'allowed', durationMs: 1, argsJson: '{}', mode: 'execute',
          outcome: { status: 'filled', orderSide: 'sell', fill: { realizedPnlUsd: -3 } },
        });
      }
      expect((await r.app.tools.breakers!.check('default')).tripped).toBe(true);
      let from = r.screen().length;
      r.type('/help');
      await r.waitFor(/› $/, from);
      expect(r.screen().slice(from)).toContain('circuit breaker tripped: 3 losing trades in a row (limit 3). Autonomous trades are halted; `minara breakers reset default` resets it.');
      from = r.screen().length;
      r.type('/help');
      await r.waitFor(/› $/, from);
      expect(r.screen().slice(from)).not.toContain('circuit breaker');
      await r.app.tools.breakers!.reset('default', { by: 'test' });
      from = r.screen().length;
      r.type('/help');
      await r.waitFor(/› $/, from);
      expect(r.screen().slice(from)).toContain('circuit breaker reset: autonomous trades run again.');
    } finally {
      await r.done();
      await r.close();
    }
  });
});

describe('rendering a delegated sub-agent', () => {
  it('shows the child’s calls and answer indented under the delegate call', async () => {
    const { createEventRenderer } = await import('../../cli/render');
    let out = '';
    const r = createEventRenderer({ write: (s) => (out += s) });
    r.render({ type: 'subagent', toolCallId: 'c1', sessionId: 's:sub1', event: { type: 'tool-call', toolCallId: 'k1', toolName: 'get_price', input: { symbol: 'BTC' } } });
    r.render({ type: 'subagent', toolCallId: 'c1', sessionId: 's:sub1', event: { type: 'tool-blocked', toolCallId: 'k2', toolName: 'buy', code: 'TOOL_BLOCKED', reason: 'no' } });
    r.render({ type: 'subagent', toolCallId: 'c1', sessionId: 's:sub1', event: { type: 'turn-end', turnId: 't', sessionId: 's:sub1', text: 'BTC is 100.', stopReason: 'finished', steps: 2, usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, toolsUsed: [], pendingApprovals: [] } });
    expect(out).toContain('↳ [sub] get_price {"symbol":"BTC"}');
    expect(out).toContain('✗ [sub] buy: TOOL_BLOCKED');
    expect(out).toContain('[sub] BTC is 100.');
  });
});

describe('REPL artifacts', () => {
  it('prints each artifact URI of an answer with the path of its viewer on disk', async () => {
    const model = createScriptedModel([
      { toolCalls: [{ toolName: 'create_report', input: { title: 'Weekly', markdown: '# Week\nflat' } }] },
      (call) => ({ text: `Your report: ${JSON.stringify(call.prompt).match(/report:\/\/r-[a-z0-9]+/)?.[0] ?? 'missing'}` }),
    ]);
    const r = (repl = await startTestRepl({ model, env: { MINARA_CHART_PNG: '0' } }));
    await r.waitFor(/› $/);
    const out = await send(r, 'Write my weekly report');
    const m = /▸ (report:\/\/(r-[a-z0-9]+)) → (\S+)/.exec(out);
    expect(m, out).not.toBeNull();
    expect(m![3]).toBe(`${r.dir}/artifacts/${m![2]}/index.html`);
    // The materializer has written it by the time the prompt returns.
    const { readFileSync } = await import('node:fs');
    expect(readFileSync(m![3]!, 'utf8')).toContain('<h1>Week</h1>');
  });
});

describe('REPL in words: approvals with the preview, markdown in the terminal', () => {
  it("asks with the finance pack's preview in numbers, and the fill is one readable line", async () => {
    const buy = { symbol: 'ETH', amountUsd: 50, slippageBps: 50, intent: 'buy 50 USD of ETH', confirm: true };
    const model = createScriptedModel([{ toolCalls: [{ toolName: 'buy_token', input: buy }] }, { text: 'Bought **$50** of ETH on paper.' }]);
    const r = (repl = await startTestRepl({ model, realFinance: true }));
    await r.waitFor(/› $/);
    const ask = await send(r, 'Buy $50 of ETH');
    expect(ask).toMatch(/⏸ Buy \$50\.00 of ETH at ~\$[\d,]+, fee \$\d+\.\d\d, slippage ~\d+(\.\d+)?% \(max 0\.5%\)\.\n {4}buy_token needs your approval \(/);
    expect(ask).not.toContain('input:');
    const done = await send(r, 'y');
    expect(done).toMatch(/ {2}✓ buy_token → Bought [\d.]+ ETH at \$[\d,]+ for \$50\.00, fee \$\d+\.\d\d, paper\n/);
    // Markdown, not markup (the test terminal has no colour, so the plain text).
    expect(done).toContain('Bought $50 of ETH on paper.');
    expect(done).not.toContain('**');
  });

  it('renders streamed markdown as ANSI styles with colour and as plain text without; escape sequences from the model are dropped', async () => {
    const { createEventRenderer } = await import('../../cli/render');
    const answer = '# Plan\n\nBuy **ETH** and *hold*, see `get_price`.\n- first\n- second\n\n```\nx = 1\n```\n> careful\nEvil\x1b]0;owned\x07 title';
    const run = (color: boolean, pieces: string[]) => {
      let out = '';
      const r = createEventRenderer({ write: (s) => (out += s), color });
      for (const delta of pieces) r.render({ type: 'text-delta', delta });
      r.finish();
      return out;
    };
    // Split at awkward places (inside **…** and the fence) to stream as a model would.
    const pieces = answer.match(/[\s\S]{1,3}/g)!;
    const plain = run(false, pieces);
    expect(plain).toBe('Plan\n\nBuy ETH and hold, see get_price.\n• first\n• second\n\n  x = 1\n│ careful\nEvil]0;owned title\n');
    expect(run(false, [answer])).toBe(plain);
    const ansi = run(true, pieces);
    expect(ansi).toContain('\x1b[4m\x1b[1mPlan\x1b[22m\x1b[24m');
    expect(ansi).toContain('Buy \x1b[1mETH\x1b[22m and \x1b[3mhold\x1b[23m, see \x1b[36mget_price\x1b[39m.');
    expect(ansi).not.toContain('**');
    // The only escapes are the renderer's own SGR codes.
    expect(ansi.replace(/\x1b\[\d+m/g, '')).not.toContain('\x1b');
  });
});
