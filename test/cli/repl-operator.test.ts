/**
 * The REPL as a newcomer meets it (issue 42): quiet by default (`--verbose` / `/verbose` for the engine's lines),
 * `/tools` fits the terminal, the operator's controls (`/grants`, `/stop`, `/audit`, `/shadow`) work inside it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createScriptedModel } from '@minara/agent/testing';
import { createEventRenderer } from '../../cli/render';
import { startTestRepl, type TestRepl } from './helpers';

let repl: TestRepl | undefined;
afterEach(async () => {
  await repl?.close();
  repl = undefined;
});

async function send(r: TestRepl, line: string): Promise<string> {
  const from = r.screen().length;
  r.type(line);
  await r.waitFor(/\n(.*› |Approve\? \[y\/N\] )$/, from);
  return r.screen().slice(from);
}

const BACKGROUND = 'background: finance:autopilot (every 1m), memory:extraction (after each turn)';

describe('REPL for a newcomer', () => {
  it('starts without the background banner; /verbose shows it and the skills each turn activates', async () => {
    const r = (repl = await startTestRepl({ model: createScriptedModel([{ text: 'hi' }]), backgroundInfo: BACKGROUND }));
    await r.waitFor(/› $/);
    expect(r.screen()).not.toContain('background:');
    const on = await send(r, '/verbose');
    expect(on).toContain('Verbose on');
    expect(on).toContain(BACKGROUND);
    expect(await send(r, '/verbose')).toContain('Verbose off.');
  });

  it('--verbose prints the background jobs at start', async () => {
    const r = (repl = await startTestRepl({ verbose: true, backgroundInfo: BACKGROUND }));
    await r.waitFor(/› $/);
    expect(r.screen()).toContain(BACKGROUND);
  });

  it('the renderer shows activated skills only when verbose', () => {
    const out: string[] = [];
    let verbose = false;
    const renderer = createEventRenderer({ write: (s) => out.push(s), verbose: () => verbose });
    const event = { type: 'skill-activated', skillIds: ['minara.core'], via: 'scenario' } as unknown as Parameters<typeof renderer.render>[0];
    renderer.render(event);
    expect(out.join('')).toBe('');
    verbose = true;
    renderer.render(event);
    expect(out.join('')).toContain('⚙ skills: minara.core (scenario)');
  });

  it.each([60, 100, 160])('/tools fits a terminal %i columns wide', async (columns) => {
    const r = (repl = await startTestRepl({ columns, realFinance: true }));
    await r.waitFor(/› $/);
    const lines = (await send(r, '/tools')).split('\n').slice(1, -1).filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThan(10);
    for (const l of lines) expect(l.length).toBeLessThan(columns);
    expect(lines.some((l) => /^buy_token\s+trade\s+CONFIRM_ONCE/.test(l))).toBe(true);
  });

  it('/grants, /stop, /audit and /shadow run the operator commands on the REPL app', async () => {
    const r = (repl = await startTestRepl({ realFinance: true }));
    await r.waitFor(/› $/);
    const help = await send(r, '/help');
    for (const cmd of ['/grants', '/stop', '/audit', '/shadow', '/verbose']) expect(help).toContain(cmd);

    expect(await send(r, '/grants')).toContain('No live grants');
    const created = await send(r, '/grants create --tool-sets trade --cap-per-call 50 --cap-per-day 200 --expires 7d');
    expect(created).toMatch(/Created \S+\./);
    expect(await send(r, '/grants list')).toContain('trade');

    expect(await send(r, '/stop status')).toContain('global stop: off');
    const engaged = await send(r, '/stop --reason "testing the stop"');
    expect(engaged).toContain('Engaged the stop of');
    expect(engaged).toMatch(/⏹ stopped \(the operator's stop\) › $/);
    expect(await send(r, '/stop --release')).toContain('Released the stop of');

    const audit = await send(r, '/audit');
    expect(audit).not.toContain('Unknown command');
    expect(audit).toMatch(/grant|stop/i);
    expect(await send(r, '/audit verify')).not.toContain('Unknown command');

    const shadow = await send(r, '/shadow');
    expect(shadow).not.toContain('Unknown command');
    expect(shadow).toMatch(/shadow/i);
  });
});
