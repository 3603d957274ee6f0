import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, type MinaraApp, type MinaraBusEvents, silentLogger, type Storage } from '@minara/agent';
import { createSimulatedMarket } from '@minara/agent/finance';
import { createSqliteStorage } from '@minara/agent/sqlite';
import { createFakeClock, createInMemoryStorage, createScriptedModel, type ScriptedModel } from '@minara/agent/testing';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(path.join(tmpdir(), 'minara-learning-'));
  dirs.push(d);
  return d;
};

const engines: ReadonlyArray<{ name: string; make: (dir: string, now: () => Date) => Storage }> = [
  { name: 'in-memory', make: (_dir, now) => createInMemoryStorage({ now }) },
  { name: 'sqlite', make: (dir, now) => createSqliteStorage({ path: path.join(dir, 'minara.db'), now, logger: silentLogger }) },
];

/** Win/loss sequences: A wins 14 of 20 (9 of its first 10), B wins 6 of 20. */
const A_WINS = [1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0];
const B_WINS = [1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0];

async function openApp(storage: Storage, dir: string, clock: ReturnType<typeof createFakeClock>) {
  const model = createScriptedModel([]);
  const market = createSimulatedMarket({ seed: 7, now: clock.now });
  const app = await createApp({
    storage, model, envFileDir: false, env: { MINARA_DATA_DIR: dir }, workspace: false, mcp: false, web: false, logger: silentLogger, now: clock.now,
    finance: { market, now: clock.now, seed: { balances: { USDC: 1_000_000 } } },
  });
  return { app, model, market };
}

/** One user turn whose model calls `tool` once; approvals it raises are granted, as a user would. */
async function tradeTurn(app: MinaraApp, model: ScriptedModel, sessionId: string, message: string, toolName: string, input: Record<string, unknown>) {
  model.push({ toolCalls: [{ toolName, input: { ...input, confirm: true } }] }, { text: 'done' });
  const first = await app.runtime.generate({ sessionId, message });
  if (first.pendingApprovals.length > 0) {
    await app.runtime.generate({ sessionId, approvals: first.pendingApprovals.map((p) => ({ approvalId: p.approvalId, approved: true })) });
  }
  return first;
}

describe.each(engines)('the learning loop end to end ($name)', ({ make }) => {
  it('40 paper trades under two methodologies: the 70 % one is proposed for graduation, the 30 % one quarantined after 20 uses, and the next prompt holds only the first', async () => {
    const dir = tmp();
    const clock = createFakeClock('2026-03-02T12:00:00.000Z');
    const storage = make(dir, clock.now);
    const { app, model, market } = await openApp(storage, dir, clock);
    const learning = app.learning!;
    const events: Array<MinaraBusEvents['methodology:changed']> = [];
    app.bus.on('methodology:changed', (e) => events.push(e));

    const { methodology: a } = await learning.createMethodology({ asset: 'BTC', text: 'Buy BTC breakouts above the prior day high.' });
    const { methodology: b } = await learning.createMethodology({ asset: 'DOGE', text: 'Buy DOGE after a social-media volume spike.' });
    expect(a.assetClass).toBe('crypto_major');
    expect(b.assetClass).toBe('crypto_meme');
    // Dedup by normalised text within the asset class.
    expect((await learning.createMethodology({ assetClass: 'crypto_major', text: '  buy btc breakouts ABOVE the prior day high ' })).created).toBe(false);

    let aUses = 0;
    let bUses = 0;
    for (let i = 0; i < 40; i++) {
      const isA = i % 2 === 0;
      const symbol = isA ? 'BTC' : 'DOGE';
      const win = isA ? A_WINS[aUses] === 1 : B_WINS[bUses] === 1;
      const entry = isA ? 60_000 : 0.2;
      market.setPrice(symbol, entry);
      const opened = await tradeTurn(app, model, `s-${i}`, `buy 100 USD of ${symbol}`, 'buy_token', { symbol, amountUsd: 100, intent: `buy 100 USD of ${symbol}` });
      expect(opened.stopReason === 'finished' || opened.stopReason === 'approval-required').toBe(true);
      clock.advance(3_600_000);
      market.setPrice(symbol, entry * (win ? 1.05 : 0.95));
      await tradeTurn(app, model, `s-${i}`, `sell all my ${symbol}`, 'sell_token', { symbol, fraction: 1, intent: `sell all ${symbol}` });
      clock.advance(60_000);
      if (isA) aUses++;
      else bUses++;

      const [ma, mb] = [(await learning.getMethodology(a.id))!, (await learning.getMethodology(b.id))!];
      expect(ma.uses).toBe(aUses);
      expect(mb.uses).toBe(bUses);
      if (isA && aUses === 10) {
        // 9 of 10: Wilson 0.596 ≥ 0.55 with 10 uses → proposed, not applied.
        expect(ma.state).toBe('candidate');
        expect(ma.graduationProposedAt).toBeDefined();
        expect(events.some((e) => e.methodologyId === a.id && e.change === 'graduation_proposed')).toBe(true);
        // The operator's explicit call applies it.
        expect((await learning.graduateMethodology(a.id)).state).toBe('graduated');
      }
      if (!isA && bUses < 20) expect(mb.state).toBe('candidate');
    }

    const [ma, mb] = [(await learning.getMethodology(a.id))!, (await learning.getMethodology(b.id))!];
    expect(ma).toMatchObject({ uses: 20, wins: 14, state: 'graduated' });
    expect(ma.confidence).toBeCloseTo(0.481, 3);
    expect(mb).toMatchObject({ uses: 20, wins: 6, state: 'quarantined' });
    expect(mb.confidence).toBeCloseTo(0.1455, 3);
    expect(mb.stateReason).toMatch(/Wilson lower bound 0\.14\d < 0\.4 after 20 uses/);
    expect(events.filter((e) => e.methodologyId === b.id && e.change === 'quarantined')).toHaveLength(1);

    // Trade history: 40 opening rows closed with outcomes, linked to turn, session, methodology and role.
    const opens = await learning.listTrades({ action: 'open', limit: 100 });
    expect(opens).toHaveLength(40);
    expect(opens.every((t) => t.status === 'closed' && t.outcome !== undefined && t.holdingMs === 3_600_000 && t.turnId && t.sessionId)).toBe(true);
    expect(opens.filter((t) => t.asset === 'BTC').every((t) => t.methodologyIds.length === 1 && t.methodologyIds[0] === a.id)).toBe(true);
    expect(opens.filter((t) => t.outcome === 'win')).toHaveLength(20);
    expect((await learning.listCases({ status: 'pending', limit: 100 }))).toHaveLength(40);

    // The next turn's prompt holds only the first methodology.
    model.push({ text: 'ok' });
    await app.runtime.generate({ sessionId: 'next', message: 'should I buy BTC or DOGE today?' });
    const system = model.calls.at(-1)!.prompt.filter((m) => m.role === 'system').map((m) => String(m.content));
    const learned = system.find((t) => t.startsWith('## Learned from outcomes'));
    expect(learned).toBeDefined();
    expect(learned).toContain(`#${a.id} [graduated · Wilson 0.48 · 14/20 won]`);
    expect(learned).not.toContain(`#${b.id}`);
    expect(system.join('\n')).not.toContain('social-media volume spike');
    await app.close();
    await storage.close();
  }, 120_000);
});
