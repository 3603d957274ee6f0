import { z } from 'zod';
import { createAgentRuntime, createToolRegistry, defineTool, PermissionTier, silentLogger } from '@minara/agent';
import { createFinancePack, createSimulatedMarket } from '@minara/agent/finance';
import { createGateway, serveGateway, type ServedGateway } from '@minara/agent/gateway';
import { createInMemoryStorage, createScriptedModel, type ScriptEntry } from '@minara/agent/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { chatBody, postJson, sseChunks, startGateway } from './helpers';

let closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of closers) await c();
  closers = [];
});

/** A gateway over the finance pack (paper trading, in-memory) plus one confirm-tier tool that is not fund-moving. */
async function startFinance(script: ScriptEntry[]) {
  const storage = createInMemoryStorage();
  const pack = createFinancePack({ storage, market: createSimulatedMarket({ seed: 7 }) });
  const notes: string[] = [];
  const note = defineTool({
    name: 'write_note', toolSet: 'write', description: 'Write a note', permissionTier: PermissionTier.ALWAYS_CONFIRM,
    inputSchema: z.object({ text: z.string() }),
    execute: ({ text }) => {
      notes.push(text);
      return { written: true };
    },
  });
  const tools = pack.attach(createToolRegistry({ tools: [...pack.tools, note], hooks: pack.hooks, storage }));
  const runtime = createAgentRuntime({ model: createScriptedModel(script), tools, storage, logger: silentLogger, surface: 'gateway' });
  const gateway = createGateway({ runtime, storage, tools, logger: silentLogger, trustUserHeader: true });
  const served: ServedGateway = await serveGateway({ gateway, port: 0 });
  closers.push(() => served.close());
  const usdc = async () => (await pack.trading.getPortfolio()).holdings.find((h) => h.asset === 'USDC')?.amount;
  const get = (path: string, user = 'alice') => fetch(`${served.url}${path}`, { headers: { 'x-minara-user': user } });
  /** Post a chat message as `user` and return the approval id the turn asked for. */
  const approvalFrom = async (chatId: string, user = 'alice') => {
    const chunks = sseChunks(await (await postJson(`${served.url}/v1/chat`, chatBody(chatId, 'do it'), { 'x-minara-user': user })).text());
    return (chunks.find((c) => c.type === 'tool-approval-request') as { approvalId: string }).approvalId;
  };
  return { served, tools, notes, usdc, get, approvalFrom };
}

describe('GET /v1/finance/portfolio and GET /v1/approvals/:id/preview', () => {
  it('the portfolio and P&L come from the finance tools, with the chart drawn by Vega as SVG', async () => {
    const h = await startFinance([]);
    const res = await h.get('/v1/finance/portfolio');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { portfolio: { totalValueUsd: number; holdings: Array<{ asset: string }> }; pnl: { realizedUsd: number }; chart: { svg: string; description: string } };
    expect(body.portfolio.totalValueUsd).toBe(10_000);
    expect(body.portfolio.holdings.map((x) => x.asset)).toEqual(['USDC']);
    expect(body.pnl.realizedUsd).toBe(0);
    expect(body.chart.svg.startsWith('<svg')).toBe(true);
    expect(body.chart.svg).not.toMatch(/<script|<foreignObject|href="(?!#)/i);
    expect(body.chart.description).toContain('USDC $10000.00');
  });

  it('previews a pending buy in numbers and moves nothing; another tenant sees no such approval', async () => {
    const buy = { symbol: 'ETH', amountUsd: 50, slippageBps: 50, intent: 'buy 50 USD of ETH', confirm: true };
    const h = await startFinance([{ toolCalls: [{ toolName: 'buy_token', input: buy }] }]);
    const approvalId = await h.approvalFrom('fin-1');
    const before = await h.usdc();
    const res = await h.get(`/v1/approvals/${approvalId}/preview`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { approval: { toolName: string; status: string; input: unknown }; preview: Record<string, unknown> };
    expect(body.approval).toMatchObject({ toolName: 'buy_token', status: 'pending', input: buy });
    expect(body.preview).toMatchObject({ preview: true, executed: false, side: 'buy', asset: 'ETH', sizeUsd: 50, limits: { maxTradeUsd: 5000 } });
    expect(typeof body.preview['feeUsd']).toBe('number');
    // Nothing moved and the approval is still waiting.
    expect(await h.usdc()).toBe(before);
    expect((await h.tools.approvals.get(approvalId))!.status).toBe('pending');
    expect((await h.get(`/v1/approvals/${approvalId}/preview`, 'mallory')).status).toBe(404);
    expect((await h.get('/v1/approvals/apr_nope/preview')).status).toBe(404);
  });

  it('a tool without a preview is never run to make one', async () => {
    const h = await startFinance([{ toolCalls: [{ toolName: 'write_note', input: { text: 'hello' } }] }]);
    const approvalId = await h.approvalFrom('fin-2');
    const body = (await (await h.get(`/v1/approvals/${approvalId}/preview`)).json()) as { preview: unknown };
    expect(body.preview).toBeNull();
    expect(h.notes).toEqual([]);
  });

  it('a gateway without the finance pack answers 404 for the portfolio', async () => {
    const h = await startGateway([]);
    closers.push(() => h.close());
    const res = await fetch(`${h.url}/v1/finance/portfolio`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain('get_portfolio');
  });
});
