/**
 * Writing your own tools: a read-only tool and a fund-moving one with a preview, a size-dependent tier,
 * and a human approval, all enforced by the registry's one gate (and written to its audit log).
 *
 *   npx tsx examples/custom-tool/index.ts
 */
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { createAgentRuntime, createToolCallContext, createToolRegistry, defineTool, err, PermissionTier, type ToolEnvelope } from '@minara/agent';
import { createInMemoryStorage, createScriptedModel } from '@minara/agent/testing';

const RATES: Readonly<Record<string, number>> = { 'EUR/USD': 1.085, 'GBP/USD': 1.27, 'USD/JPY': 151.2 };

/** A read-only tool: runs at once, from any source (even cron). */
export const getFxRate = defineTool({
  name: 'get_fx_rate',
  toolSet: 'read',
  description: 'Spot FX rate for a currency pair like EUR/USD',
  inputSchema: z.object({ pair: z.string().regex(/^[A-Z]{3}\/[A-Z]{3}$/, 'like EUR/USD') }),
  permissionTier: PermissionTier.READ_ONLY,
  execute: ({ pair }) => {
    const rate = RATES[pair];
    // Expected failures are envelopes the model reads, not exceptions.
    if (rate === undefined) return err(`No rate for ${pair}`, { code: 'NOT_FOUND', retryable: false });
    return { pair, rate };
  },
});

/** Payments made, so the example can show exactly one happened. */
export const payments: Array<{ to: string; amountUsd: number }> = [];

/** A fund-moving tool: previews unless `confirm: true`; needs approval; above $1,000 always asks. */
export const payInvoice = defineTool({
  name: 'pay_invoice',
  toolSet: 'trade',
  description: 'Pay an invoice in USD to a known payee',
  inputSchema: z.object({ payee: z.string().min(1), amountUsd: z.number().positive().max(50_000) }),
  permissionTier: PermissionTier.CONFIRM_ONCE,
  isFundMoving: true,
  tierFor: ({ amountUsd }) => (amountUsd > 1_000 ? PermissionTier.ALWAYS_CONFIRM : PermissionTier.CONFIRM_ONCE),
  // What the call does, stated once: grants, limits and the finance safety stack judge these facts.
  orderFacts: ({ payee, amountUsd }) => ({ notionalUsd: amountUsd, asset: 'USD', side: 'transfer', destination: payee }),
  preview: ({ payee, amountUsd }) => ({ preview: true, payee, amountUsd, feeUsd: 0.25 }),
  execute: ({ payee, amountUsd }) => {
    payments.push({ to: payee, amountUsd });
    return { paid: true, payee, amountUsd, reference: `inv-${payments.length}` };
  },
});

export async function main(options: { log?: (s: string) => void } = {}) {
  const log = options.log ?? ((s: string) => process.stdout.write(`${s}\n`));
  const storage = createInMemoryStorage();
  const tools = createToolRegistry({ tools: [getFxRate, payInvoice], storage });
  const ctx = createToolCallContext({ sessionId: 'custom-tool-1', source: 'user' });
  const show = (label: string, e: ToolEnvelope) => log(`${label}: ${JSON.stringify(e)}`);

  // 1. Direct dispatch, the way a host calls a tool.
  show('rate', (await tools.dispatchDetailed('get_fx_rate', { pair: 'EUR/USD' }, { context: ctx })).envelope);
  show('bad input', (await tools.dispatchDetailed('get_fx_rate', { pair: 'euro' }, { context: ctx })).envelope);
  const preview = (await tools.dispatchDetailed('pay_invoice', { payee: 'ACME', amountUsd: 120 }, { context: ctx })).envelope;
  show('preview', preview);
  const ask = await tools.dispatchDetailed('pay_invoice', { payee: 'ACME', amountUsd: 120, confirm: true }, { context: ctx });
  show('confirm', ask.envelope);
  await tools.approvals.decide(ask.approval!.id, { approved: true, reason: 'the user said yes' });
  const paid = (await tools.dispatchDetailed('pay_invoice', { payee: 'ACME', amountUsd: 120, confirm: true }, { context: ctx, approvalId: ask.approval!.id })).envelope;
  show('approved', paid);

  // 2. The same tools in an agent turn: the model calls them; the gate is the same.
  const model = createScriptedModel([{ toolCalls: [{ toolName: 'get_fx_rate', input: { pair: 'GBP/USD' } }] }, { text: 'GBP/USD is 1.27.' }]);
  const runtime = createAgentRuntime({ model, tools, storage });
  const turn = await runtime.generate({ sessionId: 'custom-tool-2', message: 'What is GBP/USD?' });
  log(`agent: ${turn.text}`);

  const audit = await tools.queryAudit({ limit: 20 });
  log(`audit rows: ${audit.length}`);
  return { preview, approvalRequest: ask, paid, turn, audit };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
