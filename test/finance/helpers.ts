import { createToolCallContext, createToolRegistry, createSkillRegistry, parseEnvelope, type CallSource, type Storage, type ToolCallContext } from '@minara/agent';
import { createFinancePack, createSimulatedMarket, type FinancePackOptions } from '@minara/agent/finance';
import { createFakeClock, createInMemoryStorage } from '@minara/agent/testing';

/** A parsed envelope, loosely typed for assertions. */
export interface Env {
  ok: boolean;
  data?: any;
  error?: string;
  code?: string;
  retryable?: boolean;
  approval?: { approvalId: string };
}

export const T0 = '2026-03-02T12:00:00.000Z';

/** A registry with the finance pack on in-memory storage (or the one given), a fake clock and a seeded feed. */
export function setup(options: Partial<FinancePackOptions> & { storage?: Storage } = {}) {
  const clock = createFakeClock(T0);
  const storage = options.storage ?? createInMemoryStorage({ now: clock.now });
  const market = createSimulatedMarket({ seed: 7, now: clock.now });
  const pack = createFinancePack({ market, now: clock.now, ...options, storage });
  const registry = pack.attach(createToolRegistry({ tools: pack.tools, hooks: pack.hooks, storage, now: clock.now }));
  const skills = createSkillRegistry({ skills: pack.skills, tools: registry, env: {} });
  let n = 0;
  const call = async (ctx: ToolCallContext, name: string, args: unknown, extra: { approvalId?: string; toolCallId?: string } = {}): Promise<Env> => {
    const toolCallId = extra.toolCallId ?? `call_${++n}`;
    const json = await registry.dispatch(name, args, { context: ctx, toolCallId, ...(extra.approvalId ? { approvalId: extra.approvalId } : {}) });
    return parseEnvelope(json) as unknown as Env;
  };
  /** Dispatch, approve the request it raises, dispatch again with the approval (same call id). */
  const approveAndRun = async (ctx: ToolCallContext, name: string, args: unknown): Promise<{ first: Env; result: Env }> => {
    const toolCallId = `call_${++n}`;
    const first = await call(ctx, name, args, { toolCallId });
    if (first.ok || first.code !== 'APPROVAL_REQUIRED') return { first, result: first };
    await registry.approvals.decide(first.approval!.approvalId, { approved: true });
    const result = await call(ctx, name, args, { toolCallId, approvalId: first.approval!.approvalId });
    return { first, result };
  };
  const balances = async (): Promise<Record<string, number>> => {
    await pack.trading.getAccount(); // the paper account is created on first use
    return Object.fromEntries((await storage.trading.listBalances('paper')).map((b) => [b.asset, b.amount]));
  };
  return { clock, storage, market, pack, registry, skills, call, approveAndRun, balances };
}

export const ctxOf = (source: CallSource = 'user', sessionId = `s-${source}`) => createToolCallContext({ sessionId, source });
