import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runBacktestCli } from '../../../cli/backtest-command';

const FIXTURE = path.join(import.meta.dirname, '..', '..', 'fixtures', 'backtest', 'agent-sma.cassette.json');
const io = () => {
  let out = '';
  let err = '';
  return { io: { write: (s: string) => void (out += s), writeErr: (s: string) => void (err += s), now: () => new Date('2026-01-01T00:00:00Z') }, out: () => out, err: () => err };
};
const agentRun = (dir: string, extra: string[] = []) => [
  'run', '--strategy', 'agent', '--synthetic', '--symbols', 'BTC', '--regime', 'bull', '--bars', '40', '--seed', '11', '--start', '2021-03-01',
  '--prompt', 'Review BTC and decide.', '--every', '10', '--limits', '{"maxTradeUsd":5000}', '--temperature', '0', '--cassette', FIXTURE, '--out', dir, '--no-png', ...extra,
];

describe('minara backtest run --strategy agent', () => {
  it('runs offline from the committed cassette as a newcomer would: the run folder with the agent files', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'agent-cli-'));
    const t = io();
    expect(await runBacktestCli(agentRun(path.join(dir, 'a')), t.io), t.err()).toBe(0);
    expect(t.out()).toContain('agent backtest: 4 decisions');
    expect(t.out()).toContain('training cutoff 2025-07-01');
    expect(t.out()).toContain('OVERLAP');
    expect(t.out()).toMatch(/disabled for the run: .*web_search/);
    for (const f of ['metrics.json', 'run_config.json', 'llm_costs.csv', 'decisions.jsonl', 'agent_blocked_orders.csv', 'report.html']) expect(existsSync(path.join(dir, 'a', f)), f).toBe(true);
    // The same command again: byte-identical metrics.json.
    expect(await runBacktestCli(agentRun(path.join(dir, 'b')), io().io)).toBe(0);
    expect(readFileSync(path.join(dir, 'a', 'metrics.json'), 'utf8')).toBe(readFileSync(path.join(dir, 'b', 'metrics.json'), 'utf8'));
    // compare: the same run twice decides the same everywhere.
    const c = io();
    expect(await runBacktestCli(['compare', path.join(dir, 'a'), path.join(dir, 'b')], c.io)).toBe(0);
    expect(c.out()).toContain('decisions: 4 the same, 0 different');
  });

  it('bad input is named; a cassette miss is an error with the diff', async () => {
    const t = io();
    expect(await runBacktestCli(['run', '--strategy', 'agent', '--synthetic'], t.io)).toBe(2);
    expect(t.err()).toContain('--prompt');
    const u = io();
    expect(await runBacktestCli([...agentRun(mkdtempSync(path.join(tmpdir(), 'agent-cli-'))), '--approvals', 'maybe'], u.io)).toBe(2);
    expect(u.err()).toContain('--approvals expects approve or deny');
    const m = io();
    const args = agentRun(mkdtempSync(path.join(tmpdir(), 'agent-cli-')));
    args[args.indexOf('Review BTC and decide.')] = 'Something else.';
    expect(await runBacktestCli(args, m.io)).toBe(1);
    expect(m.err()).toContain('cassette miss');
  });
});

describe('minara backtest sweep', () => {
  it('runs the grid × seeds × windows and prints one table; a second run finds every cell done', async () => {
    const t = io();
    const args = ['sweep', '--grid', '{"fast":[3,5],"slow":[20]}', '--seeds', '1,2', '--windows', '[{"bars":120}]', '--strategy', 'sma-cross', '--sweep-id', 'cli-1'];
    expect(await runBacktestCli(args, t.io), t.err()).toBe(0);
    expect(t.out()).toContain('sweep cli-1: 4 cells; this worker ran 4');
    expect(t.out().trim().split('\n')).toHaveLength(2 + 4);
    const bad = io();
    expect(await runBacktestCli(['sweep', '--grid', 'nope'], bad.io)).toBe(2);
    expect(bad.err()).toContain('--grid expects JSON');
  });
});
