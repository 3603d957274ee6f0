/**
 * Automation, offline: a workflow file in the workspace runs every hour from HEARTBEAT.md's `## Schedule` with no
 * model turn (its fund-moving step is refused until the operator stores a grant for the source `workflow`), and the
 * agent sets a price alert ("tell me when ETH drops below 3,000") that fires once when the simulated price crosses it.
 * A fake clock moves three hours forward; every run and the alert's delivery are read back from storage.
 *
 *   npx tsx examples/automation/index.ts
 *
 * Storage is SQLite in a temporary data directory; no model key is needed.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createApp, type Delivery, silentLogger, type WorkflowRunRecord } from '@minara/agent';
import type { SimulatedMarket } from '@minara/agent/finance';
import { createScriptedModel } from '@minara/agent/testing';

const WORKFLOW = `description: Read the ETH price, then buy $20 of ETH
tool_sets: [read, trade]
steps:
  - id: eth
    tool: get_price
    args: { symbol: ETH }
  - id: buy
    tool: swap_tokens
    args:
      from: USDC
      to: ETH
      amountUsd: 20
      confirm: true
      intent: "swap USDC to ETH 20 USD at {{ steps.eth.data.priceUsd }}"
`;

export interface AutomationExampleResult {
  readonly runs: readonly WorkflowRunRecord[];
  readonly delivered: readonly Delivery[];
  readonly modelCalls: number;
  readonly log: readonly string[];
}

export async function main(options: { print?: (line: string) => void } = {}): Promise<AutomationExampleResult> {
  const log: string[] = [];
  const print = (line: string) => {
    log.push(line);
    options.print?.(line);
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-automation-'));
  let t = Date.parse('2026-03-02T08:00:30.000Z');
  const delivered: Delivery[] = [];
  // The model answers one chat turn: it sets the alert. The workflow runs never call it.
  const model = createScriptedModel([
    { toolCalls: [{ toolName: 'alert_request', input: { op: 'add', asset: 'ETH', condition: 'below', threshold: 3_000, note: 'time to buy' } }] },
    { text: 'Done: I will tell you when ETH drops below 3,000 USD.' },
  ]);
  const app = await createApp({
    envFileDir: false, env: { MINARA_HEARTBEAT_EVERY: '0', MINARA_PERSONALIZATION_REBUILD: 'disabled' }, logger: silentLogger, model, config: { dataDir: dir },
    now: () => new Date(t), background: { deliver: (d) => void delivered.push(d) },
  });
  try {
    const ws = app.workspace!.dir;
    mkdirSync(path.join(ws, 'workflows'), { recursive: true });
    writeFileSync(path.join(ws, 'workflows', 'buy-eth.yaml'), WORKFLOW);
    writeFileSync(path.join(ws, 'HEARTBEAT.md'), '# Heartbeat\n\n## Schedule\n\n- every 1h: workflow buy-eth\n');
    const market = app.finance!.market as SimulatedMarket;
    market.setPrice('ETH', 3_150);

    const turn = await app.runtime.generate({ sessionId: 'chat-1', message: 'Tell me when ETH drops below 3,000' });
    print(`user: Tell me when ETH drops below 3,000\nagent: ${turn.text}`);
    await app.background.syncSchedule();
    print(app.background.describe());

    const hour = async (label: string) => {
      for (let m = 0; m < 60; m++) {
        t += 60_000;
        await app.background.tick();
        await app.background.idle();
      }
      const [run] = await app.workflows.runs({ workflowId: 'buy-eth', limit: 1 });
      print(`${label}: run ${run?.status}${run?.error ? ` (${run.error.split(':').slice(0, 2).join(':')})` : ''}`);
    };
    await hour('09:00 without a grant');
    await app.tools.grants.create({ toolName: 'swap_tokens', sources: ['workflow'], argLimits: { amountUsd: { max: 25 } }, note: 'the buy-eth workflow' });
    print('The operator stores a grant: swap_tokens for the source workflow, at most $25.');
    market.setPrice('ETH', 2_980);
    await hour('10:00 with the grant (ETH now 2,980)');
    await hour('11:00');
    for (const d of delivered) print(`delivered [${d.source}] ${d.text}`);
    return { runs: await app.workflows.runs({ workflowId: 'buy-eth' }), delivered, modelCalls: model.calls.length, log };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main({ print: (line) => console.log(line) });
