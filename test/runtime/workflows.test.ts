import { describe, expect, it } from 'vitest';
import { createScheduler, MinaraError, parseCron, signalJob, validateWorkflow, type WorkflowResults } from '@minara/agent';
import { createFakeClock } from '@minara/agent/testing';
import { setup } from './helpers';

describe('runtime.runWorkflow', () => {
  it('tool_call steps run the exact registry handler with no model call; agent_turn steps run a turn', async () => {
    const { runtime, model, ledger, tools } = setup([{ text: 'BTC looks fine.' }]);
    const result = await runtime.runWorkflow({
      id: 'morning-brief',
      steps: [
        { id: 'btc', kind: 'tool_call', tool: 'get_price', args: { symbol: 'BTC' } },
        { id: 'eth', kind: 'tool_call', tool: 'get_price', args: (r: WorkflowResults) => ({ symbol: (r.btc?.envelope as { ok: boolean }).ok ? 'ETH' : 'SOL' }) },
        { id: 'brief', kind: 'agent_turn', message: (r: WorkflowResults) => `Summarise: ${JSON.stringify(r.btc?.envelope)}` },
      ],
    });
    expect(result.ok).toBe(true);
    expect(result.steps.map((s) => [s.id, s.ok])).toEqual([['btc', true], ['eth', true], ['brief', true]]);
    expect(ledger.calls).toEqual(['get_price:BTC', 'get_price:ETH']);
    expect(model.calls).toHaveLength(1);
    const audit = await tools.queryAudit({ traceId: result.traceId });
    expect(audit.map((a) => [a.toolName, a.source])).toEqual([['get_price', 'workflow'], ['get_price', 'workflow']]);
  });

  it('a tool_call step meets the same tiers: a workflow cannot transfer out or trade without a grant', async () => {
    const { runtime, ledger } = setup([]);
    const r = await runtime.runWorkflow({
      id: 'sweep',
      stopOnError: false,
      steps: [
        { id: 'out', kind: 'tool_call', tool: 'transfer_token', args: { symbol: 'USDC', amount: 10, to: '0xabc' } },
        { id: 'buy', kind: 'tool_call', tool: 'swap_tokens', args: { from: 'USDC', to: 'ETH', amountUsd: 10, confirm: true } },
        { id: 'preview', kind: 'tool_call', tool: 'swap_tokens', args: { from: 'USDC', to: 'ETH', amountUsd: 10 } },
      ],
    });
    expect(r.steps.map((s) => [s.id, s.ok, s.envelope && !s.envelope.ok ? s.envelope.code : 'ok'])).toEqual([
      ['out', false, 'MANUAL_ONLY_AUTONOMOUS'],
      ['buy', false, 'GRANT_REQUIRED'],
      ['preview', true, 'ok'],
    ]);
    expect(ledger.calls).toEqual([]);
  });

  it('stops at the first failing step by default and reports the skipped ones', async () => {
    const { runtime } = setup([]);
    const r = await runtime.runWorkflow({ id: 'w', steps: [{ id: 'a', kind: 'tool_call', tool: 'get_price', args: {} }, { id: 'b', kind: 'tool_call', tool: 'get_price', args: { symbol: 'BTC' } }] });
    expect(r).toMatchObject({ ok: false, skipped: ['b'] });
    expect(r.steps[0]!.envelope).toMatchObject({ code: 'TOOL_INPUT_INVALID' });
  });

  it('validation names the bad step', async () => {
    const { runtime, tools } = setup([]);
    await expect(runtime.runWorkflow({ id: 'bad', steps: [{ id: 'ok', kind: 'tool_call', tool: 'get_price' }, { id: 'x', kind: 'tool_call', tool: 'nope' }] })).rejects.toThrow(/steps\[1\] "x": no registered tool named "nope"/);
    expect(() => validateWorkflow({ id: 'bad', steps: [{ id: 'a b', kind: 'agent_turn', message: '' } as never] }, tools)).toThrow(/steps\[0\] "a b": id: expected .*; message/);
    expect(() => validateWorkflow({ id: 'bad', steps: [{ id: 'a', kind: 'teleport' } as never] })).toThrow(/steps\[0\] "a"/);
    expect(() => validateWorkflow({ id: 'dup', steps: [{ id: 'a', kind: 'agent_turn', message: 'x' }, { id: 'a', kind: 'agent_turn', message: 'y' }] })).toThrow(/duplicate/);
    expect(() => validateWorkflow({ id: 'empty', steps: [] })).toThrow(MinaraError);
  });
});

describe('signals and the scheduler', () => {
  it('a cron signal turn preloads its skills without a model call and keeps the autonomous rules', async () => {
    const { runtime, model } = setup([{ text: 'BTC dropped 5%; no action taken.' }]);
    const r = await runtime.generate({
      sessionId: 'cron-btc', source: 'cron', message: 'BTC dropped 5% in an hour.',
      signal: { source: 'cron', signal_id: 'btc_drop_5pct', asset: { symbol: 'BTC', asset_class: 'crypto_major' }, severity: 'warn', preload_skills: ['minara.core'], suggested_stages: ['evaluate'], trace_id: 't_abc123' },
    });
    expect(r.events.find((e) => e.type === 'skill-activated')).toMatchObject({ via: 'signal', skillIds: ['minara.core'] });
    const sys = model.calls[0]!.prompt.filter((m) => m.role === 'system').map((m) => String(m.content));
    expect(sys.some((t) => t.includes('signal_id: btc_drop_5pct'))).toBe(true);
    expect(sys.some((t) => t.includes('Preview swaps before confirming'))).toBe(true);
    // cron default tool sets: read, memory, web (swap_tokens is in trade, so it is not offered)
    expect(model.calls[0]!.tools!.map((t) => t.name)).toEqual(['get_price']);
  });

  it('parses cron expressions', () => {
    expect(parseCron('*/15 * * * *').next(new Date('2026-01-01T00:07:30Z')).toISOString()).toBe('2026-01-01T00:15:00.000Z');
    expect(parseCron('0 9 * * 1-5').next(new Date('2026-01-03T10:00:00Z')).toISOString()).toBe('2026-01-05T09:00:00.000Z'); // Sat → Mon
    expect(parseCron('30 3 1 * *').next(new Date('2026-01-01T04:00:00Z')).toISOString()).toBe('2026-02-01T03:30:00.000Z');
    expect(() => parseCron('61 * * * *')).toThrow(/minute "61"/);
    expect(() => parseCron('* * *')).toThrow(/5 fields/);
    expect(() => parseCron('0 0 31 2 *').next(new Date())).toThrow(/never matches/);
  });

  it('fires due jobs, never overlaps a running job, and runs signal turns', async () => {
    const clock = createFakeClock('2026-01-01T00:00:00Z');
    const scheduler = createScheduler({ now: clock.now });
    let release!: () => void;
    let runs = 0;
    scheduler.add({ id: 'slow', every: 60_000, run: () => { runs++; return new Promise<void>((r) => { release = r; }); } });
    expect(scheduler.tick().started).toEqual([]);
    clock.advance(60_000);
    expect(scheduler.tick().started).toEqual(['slow']);
    await new Promise((r) => setImmediate(r));
    clock.advance(60_000);
    expect(scheduler.tick()).toEqual({ started: [], skippedOverlap: ['slow'] });
    release();
    await scheduler.idle();
    clock.advance(60_000);
    expect(scheduler.tick().started).toEqual(['slow']);
    await new Promise((r) => setImmediate(r));
    release();
    expect(runs).toBe(2);
    expect(() => scheduler.add({ id: 'slow', every: 60_000, run: () => {} })).toThrow(/already exists/);
    expect(() => scheduler.add({ id: 'both', every: 60_000, cron: '* * * * *', run: () => {} })).toThrow(/exactly one/);

    const { runtime } = setup([{ text: 'checked' }]);
    const results: string[] = [];
    scheduler.add(signalJob(runtime, { id: 'btc', cron: '*/5 * * * *', message: 'check BTC', signal: { source: 'cron', signal_id: 'btc_watch' }, onResult: (r) => results.push(r.text) }));
    clock.advance(5 * 60_000);
    expect(scheduler.tick().started).toContain('btc');
    await scheduler.idle();
    expect(results).toEqual(['checked']);
  });
});
