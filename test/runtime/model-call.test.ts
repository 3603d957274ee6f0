import { describe, expect, it } from 'vitest';
import type { AgentEvent, RunInput } from '@minara/agent';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { recordEvents, type ScriptEntry } from '@minara/agent/testing';
import { setup } from './helpers';

/** What a turn leaves behind, in a form both model-call modes must agree on. */
async function outcome(script: ScriptEntry[], runs: ReadonlyArray<Omit<RunInput, 'sessionId' | 'modelCall'> | ((prev: readonly AgentEvent[]) => Omit<RunInput, 'sessionId' | 'modelCall'>)>, modelCall: 'stream' | 'generate') {
  const storage = createSqliteStorage({ path: ':memory:' });
  const { runtime, ledger, model } = setup(script, { storage });
  const turns: unknown[] = [];
  let prev: readonly AgentEvent[] = [];
  for (const r of runs) {
    const input = typeof r === 'function' ? r(prev) : r;
    const rec = await recordEvents(runtime.run({ sessionId: 's', ...input, modelCall }));
    prev = rec.events;
    const end = rec.ofType('turn-end')[0]!;
    turns.push({
      text: end.text, stopReason: end.stopReason, steps: end.steps, usage: end.usage, toolsUsed: end.toolsUsed,
      pending: end.pendingApprovals.map((p) => [p.toolName, p.input]),
      // Text arrives in one piece per step when not streamed: compare the events without the deltas' cuts.
      events: rec.events.filter((e) => e.type !== 'text-delta').map((e) => (e.type === 'tool-result' ? `${e.type}:${e.toolName}:${JSON.stringify(e.output)}` : e.type === 'tool-call' ? `${e.type}:${e.toolName}` : e.type)),
      text2: rec.ofType('text-delta').map((e) => e.delta).join(''),
    });
  }
  const messages = (await storage.conversations.listMessages('s')).map((m) => JSON.stringify({ ...m, createdAt: undefined, turnId: undefined }).replace(/apr_[a-z0-9]+/g, 'apr').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'T'));
  // Every row in both modes; a call the AI SDK refused before dispatch (an unknown tool) is written when its step
  // ends when not streamed, so rows are compared as a set.
  const audit = (await storage.audit.query({ order: 'oldest', limit: 100 })).map((r) => [r.kind, r.toolName, r.decision, r.code ?? null].join(':')).sort();
  const verified = (await storage.audit.verify?.())?.ok;
  await storage.close();
  return { turns, messages, audit, ledger: ledger.calls, kinds: model.calls.map((c) => c.kind), verified };
}

describe("modelCall: 'generate' (the model's non-streaming call)", () => {
  const cases: Array<[string, ScriptEntry[], Parameters<typeof outcome>[1]]> = [
    [
      'two read calls, then an answer',
      [
        { toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }], usage: { inputTokens: 100, outputTokens: 10 } },
        { text: 'Checking ETH as well, one moment please.', toolCalls: [{ toolName: 'get_price', input: { symbol: 'ETH' } }] },
        { text: 'BTC is $97,000 and ETH is $3,400 — both steady today.' },
      ],
      [{ message: 'prices of BTC and ETH?' }],
    ],
    [
      'a fund-moving call waits for approval, then runs when approved',
      [
        { toolCalls: [{ toolName: 'swap_tokens', input: { from: 'USDC', to: 'ETH', amountUsd: 50, confirm: true } }] },
        { text: 'Swapped $50 of USDC to ETH.' },
      ],
      [
        { message: 'swap 50 USDC to ETH' },
        (prev) => ({ approvals: prev.filter((e) => e.type === 'approval-request').map((e) => ({ approvalId: (e as { approvalId: string }).approvalId, approved: true })) }),
      ],
    ],
    [
      'a manual-only call is blocked, an unknown tool is refused, and the turn still answers',
      [
        { toolCalls: [{ toolName: 'transfer_token', input: { symbol: 'ETH', amount: 1, to: '0xabc' } }, { toolName: 'no_such_tool', input: {} }] },
        { text: 'I cannot send funds from here.' },
      ],
      [{ message: 'send 1 ETH to 0xabc' }],
    ],
  ];
  for (const [name, script, runs] of cases) {
    it(`${name}: the same events, answer, stored messages, audit rows and calls as streaming`, async () => {
      const streamed = await outcome(script, runs, 'stream');
      const generated = await outcome(script, runs, 'generate');
      expect(streamed.kinds.every((k) => k === 'stream')).toBe(true);
      expect(generated.kinds.every((k) => k === 'generate')).toBe(true);
      expect(generated.kinds.length).toBe(streamed.kinds.length);
      const { kinds: _a, ...s } = streamed;
      const { kinds: _b, ...g } = generated;
      expect(g).toEqual(s);
      expect(s.verified).not.toBe(false);
    });
  }

  it('an aborted run stops as aborted in both modes, and a bad modelCall is refused naming the field', async () => {
    for (const modelCall of ['stream', 'generate'] as const) {
      const { runtime, ledger } = setup([{ toolCalls: [{ toolName: 'get_price', input: { symbol: 'BTC' } }] }, { text: 'x' }]);
      const controller = new AbortController();
      controller.abort();
      const r = await recordEvents(runtime.run({ sessionId: 'a', message: 'price?', modelCall, abortSignal: controller.signal }));
      expect(r.ofType('turn-end')[0]!.stopReason).toBe('aborted');
      expect(ledger.calls).toEqual([]);
    }
    const { runtime } = setup([]);
    expect(() => runtime.run({ sessionId: 'b', message: 'x', modelCall: 'batch' as never })).toThrow(/"modelCall" must be "stream" or "generate"/);
  });
});
