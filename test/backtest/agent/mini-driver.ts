import type { Bar, OrderIntent, PointInTimeView, Strategy } from '@minara/agent/backtest';

/** Daily bars for tests: a gentle deterministic walk per symbol. */
export function dailyBars(symbols: readonly string[], days: number, start = Date.UTC(2021, 0, 4)): Bar[] {
  const out: Bar[] = [];
  symbols.forEach((symbol, k) => {
    let px = 100 * (k + 1);
    for (let i = 0; i < days; i++) {
      const open = px;
      px = px * (1 + 0.01 * Math.sin(i / 3 + k));
      out.push({ symbol, time: start + i * 86_400_000, open, high: Math.max(open, px) * 1.005, low: Math.min(open, px) * 0.995, close: px, volume: 1_000_000 });
    }
  });
  return out;
}

/**
 * A minimal stand-in for the engine in tests of the agent alone: point-in-time views over the bars, intents filled
 * at the next bar's open without fees. The real engine (runBacktest) is exercised in run.test.ts.
 */
export async function driveStrategy(strategy: Strategy, bars: readonly Bar[], initialCash = 10_000): Promise<{ fills: Array<OrderIntent & { price: number; time: number }>; equity: number }> {
  const symbols = [...new Set(bars.map((b) => b.symbol))];
  const times = [...new Set(bars.map((b) => b.time))].sort((a, b) => a - b);
  const bySymbol = new Map(symbols.map((s) => [s, bars.filter((b) => b.symbol === s).sort((a, b) => a.time - b.time)]));
  const interval = times.length > 1 ? times[1]! - times[0]! : 86_400_000;
  let cash = initialCash;
  const pos = new Map<string, number>();
  const cost = new Map<string, number>();
  const fills: Array<OrderIntent & { price: number; time: number }> = [];
  let pending: readonly OrderIntent[] = [];
  await strategy.init?.({ symbols, initialCash, intervalMs: interval, seed: 1, steps: times.length });
  for (let i = 0; i < times.length; i++) {
    const t = times[i]!;
    for (const o of pending) {
      const bar = bySymbol.get(o.symbol)!.find((b) => b.time === t);
      if (!bar) continue;
      const qty = o.quantity ?? (o.notionalUsd ?? 0) / bar.open;
      const signed = o.side === 'buy' ? qty : -Math.min(qty, pos.get(o.symbol) ?? 0);
      cash -= signed * bar.open;
      const before = pos.get(o.symbol) ?? 0;
      if (signed > 0) cost.set(o.symbol, ((cost.get(o.symbol) ?? 0) * before + signed * bar.open) / (before + signed));
      pos.set(o.symbol, before + signed);
      fills.push({ ...o, price: bar.open, time: t });
    }
    const upTo = (s: string) => bySymbol.get(s)!.filter((b) => b.time <= t);
    const lastClose = (s: string) => upTo(s).at(-1)?.close ?? 0;
    const view: PointInTimeView = {
      now: t + interval,
      index: i,
      symbols,
      bars: (s, lookback) => (lookback ? upTo(s).slice(-lookback) : upTo(s)),
      last: (s) => upTo(s).at(-1),
      closes: (s) => Float64Array.from(upTo(s).map((b) => b.close)),
      value: (s, field, ago = 0) => upTo(s).at(-1 - ago)?.[field] ?? Number.NaN,
      portfolio: {
        cash,
        position: (s) => pos.get(s) ?? 0,
        avgCost: (s) => cost.get(s) ?? 0,
        equity: cash + symbols.reduce((a, s) => a + (pos.get(s) ?? 0) * lastClose(s), 0),
        feesUsd: 0,
        realizedPnlUsd: 0,
      },
    };
    pending = await strategy.decide(view);
  }
  await strategy.finish?.();
  const last = (s: string) => bySymbol.get(s)!.at(-1)!.close;
  return { fills, equity: cash + symbols.reduce((a, s) => a + (pos.get(s) ?? 0) * last(s), 0) };
}
