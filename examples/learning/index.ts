/**
 * The learning loop, offline: two methodologies are seeded, the agent makes 30 round-trip paper trades under
 * them (a scripted model calls the trading tools; the simulated market sets the outcomes), every outcome is
 * scored with the Wilson lower bound, the good methodology is proposed for graduation and the operator
 * graduates it, the bad one is quarantined on its own, and the next turn's prompt carries only the first.
 *
 *   npx tsx examples/learning/index.ts
 *
 * Storage is SQLite in a temporary data directory; no model key is needed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createApp, type MethodologyRecord, type MinaraApp, silentLogger } from '@minara/agent';
import { createSimulatedMarket } from '@minara/agent/finance';
import { createFakeClock, createScriptedModel, type ScriptedModel } from '@minara/agent/testing';

const SEED = `
## crypto_major
- Buy BTC breakouts above the prior day's high; exit after an hour.

## crypto_meme
- Buy DOGE right after a social-media volume spike.
`;

/** Wins (1) and losses (0) of the round trips under each methodology, in order: 9 of the first 10, then 6 of 20. */
const OUTCOMES = { BTC: [1, 1, 1, 1, 1, 1, 1, 1, 0, 1], DOGE: [1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0] } as const;

export interface LearningExampleResult {
  readonly methodologies: readonly MethodologyRecord[];
  /** The learned block of the turn after the trades. */
  readonly learnedBlock: string | undefined;
  /** The compiled page of BTC. */
  readonly page: string;
  readonly log: readonly string[];
}

/** One user turn whose model calls `toolName`; the approval it raises is granted, as the user would. */
async function trade(app: MinaraApp, model: ScriptedModel, sessionId: string, toolName: string, input: Record<string, unknown>) {
  model.push({ toolCalls: [{ toolName, input: { ...input, confirm: true } }] }, { text: 'Done.' });
  const first = await app.runtime.generate({ sessionId, message: String(input.intent) });
  if (first.pendingApprovals.length > 0) {
    await app.runtime.generate({ sessionId, approvals: first.pendingApprovals.map((p) => ({ approvalId: p.approvalId, approved: true })) });
  }
}

const row = (m: MethodologyRecord) =>
  `#${m.id} ${(m.state === 'candidate' && m.graduationProposedAt ? 'proposed' : m.state).padEnd(11)} Wilson ${m.confidence.toFixed(3)}  ${m.wins}/${m.uses} won  ${m.text}`;

export async function main(options: { readonly print?: (line: string) => void } = {}): Promise<LearningExampleResult> {
  const log: string[] = [];
  const print = (line: string) => {
    log.push(line);
    options.print?.(line);
  };
  const dir = mkdtempSync(path.join(tmpdir(), 'minara-learning-example-'));
  const clock = createFakeClock('2026-03-02T12:00:00.000Z');
  const model = createScriptedModel([]);
  const market = createSimulatedMarket({ seed: 7, now: clock.now });
  const app = await createApp({
    model, envFileDir: false, env: { MINARA_DATA_DIR: dir }, workspace: false, mcp: false, web: false, logger: silentLogger, now: clock.now,
    finance: { market, now: clock.now, seed: { balances: { USDC: 100_000 } } },
  });
  try {
    const learning = app.learning!;
    app.bus.on('methodology:changed', (e) => {
      if (e.change !== 'scored') print(`  event methodology:changed #${e.methodologyId} ${e.change} (Wilson ${e.confidence.toFixed(3)}, ${e.uses} uses)`);
    });
    const seeded = await learning.seedMethodologies(SEED, { sourceRef: 'example-seed.md' });
    print(`Seeded ${seeded.created} methodologies.`);
    const [btc, doge] = await Promise.all([learning.listMethodologies({ assetClasses: ['crypto_major'] }), learning.listMethodologies({ assetClasses: ['crypto_meme'] })]);

    const uses = { BTC: 0, DOGE: 0 };
    for (let i = 0; uses.BTC < OUTCOMES.BTC.length || uses.DOGE < OUTCOMES.DOGE.length; i++) {
      const symbol: 'BTC' | 'DOGE' = uses.BTC < OUTCOMES.BTC.length && (i % 2 === 0 || uses.DOGE >= OUTCOMES.DOGE.length) ? 'BTC' : 'DOGE';
      const win = OUTCOMES[symbol][uses[symbol]] === 1;
      const entry = symbol === 'BTC' ? 60_000 : 0.2;
      market.setPrice(symbol, entry);
      await trade(app, model, `trade-${i}`, 'buy_token', { symbol, amountUsd: 100, intent: `buy 100 USD of ${symbol}` });
      clock.advance(3_600_000);
      market.setPrice(symbol, entry * (win ? 1.05 : 0.95));
      await trade(app, model, `trade-${i}`, 'sell_token', { symbol, fraction: 1, intent: `sell all my ${symbol}` });
      clock.advance(60_000);
      uses[symbol]++;

      const m = (await learning.getMethodology(symbol === 'BTC' ? btc[0]!.id : doge[0]!.id))!;
      if (m.state === 'candidate' && m.graduationProposedAt) {
        print(`The operator graduates #${m.id} (proposed at ${m.wins}/${m.uses}, Wilson ${m.confidence.toFixed(3)}).`);
        await learning.graduateMethodology(m.id, { reason: 'reviewed the proposal' });
      }
    }

    const methodologies = await learning.listMethodologies();
    print('Methodologies after 30 round trips:');
    for (const m of methodologies) print(`  ${row(m)}`);

    model.push({ text: 'Noted.' });
    await app.runtime.generate({ sessionId: 'next', message: 'should I buy BTC or DOGE today?' });
    const learnedBlock = model.calls.at(-1)!.prompt.filter((m) => m.role === 'system').map((m) => String(m.content)).find((t) => t.startsWith('## Learned from outcomes'));
    print('The next turn\'s learned block:');
    for (const line of (learnedBlock ?? '(none)').split('\n')) print(`  ${line}`);
    const page = await learning.compiledPage('BTC');
    return { methodologies, learnedBlock, page, log };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main({ print: (line) => console.log(line) });
