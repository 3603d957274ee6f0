/**
 * The point-in-time view: one object reused for every step; every read is bounded by the current index, so a
 * strategy cannot see a bar after "now" (a test tries).
 */
import { MinaraError } from '../errors/minara-error';
import type { Bar, BarSet, BacktestPortfolioView, PointInTimeView } from './types';

/** A bar field readable through {@link PointInTimeView.value}. */
export type BarField = 'open' | 'high' | 'low' | 'close' | 'volume';

/** The view plus the engine's setter. */
export interface EngineView extends PointInTimeView {
  setIndex(i: number): void;
}

/** Create the reusable view over `bars`. */
export function createView(bars: BarSet, symIndex: ReadonlyMap<string, number>, portfolio: BacktestPortfolioView): EngineView {
  let index = 0;
  const sym = (symbol: string): number => {
    const s = symIndex.get(symbol);
    if (s === undefined) throw new MinaraError('INVALID_ARGUMENT', `symbol: ${JSON.stringify(symbol)} is not in this backtest (${bars.symbols.join(', ')})`);
    return s;
  };
  const column = (field: BarField) => bars[field];
  const barAt = (s: number, i: number): Bar | undefined => {
    const c = (bars.close[s] as Float64Array)[i] as number;
    if (c !== c) return undefined;
    return {
      symbol: bars.symbols[s] as string,
      time: bars.times[i] as number,
      open: (bars.open[s] as Float64Array)[i] as number,
      high: (bars.high[s] as Float64Array)[i] as number,
      low: (bars.low[s] as Float64Array)[i] as number,
      close: c,
      volume: (bars.volume[s] as Float64Array)[i] as number,
    };
  };
  const view: EngineView = {
    get now() {
      return (bars.times[index] as number) + bars.intervalMs;
    },
    get index() {
      return index;
    },
    symbols: bars.symbols,
    portfolio,
    setIndex(i: number) {
      index = i;
    },
    bars(symbol: string, lookback?: number): readonly Bar[] {
      const s = sym(symbol);
      const from = lookback === undefined ? 0 : Math.max(0, index + 1 - lookback);
      const out: Bar[] = [];
      for (let i = from; i <= index; i++) {
        const b = barAt(s, i);
        if (b) out.push(b);
      }
      return out;
    },
    last(symbol: string): Bar | undefined {
      return barAt(sym(symbol), index);
    },
    closes(symbol: string): Float64Array {
      return (bars.close[sym(symbol)] as Float64Array).subarray(0, index + 1);
    },
    value(symbol: string, field: BarField, ago = 0): number {
      if (!(ago >= 0)) throw new MinaraError('INVALID_ARGUMENT', `ago: expected 0 or more bars back (the view cannot read the future), got ${ago}`);
      const i = index - ago;
      return i < 0 ? Number.NaN : ((column(field)[sym(symbol)] as Float64Array)[i] as number);
    },
  };
  return view;
}
