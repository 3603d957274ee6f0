import { DEFAULT_MODEL_PRICES, priceFor, usageCostUsd, type ModelPrice } from '../../llm/pricing';

/** Tokens and cost of one decision. `costUsd` is `'unpriced'` for a model missing from the price table (never 0). */
export interface DecisionCost {
  readonly decision: number;
  /** Simulated time of the decision, ISO. */
  readonly time: string;
  readonly modelId: string;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadTokens: number;
  readonly cacheWriteTokens: number;
  readonly costUsd: number | 'unpriced';
}

/** The run's model-cost ledger. */
export interface CostLedger {
  /** Record a decision's usage; returns its priced row. */
  add(row: Omit<DecisionCost, 'costUsd'>): DecisionCost;
  readonly rows: readonly DecisionCost[];
  /** Sum of priced decisions, USD. */
  readonly totalUsd: number;
  /** Decisions whose model has no price. */
  readonly unpriced: number;
  /** `llm_costs.csv`: one row per decision. */
  toCsv(): string;
}

/** A cost ledger priced from `prices` over `DEFAULT_MODEL_PRICES` (the runtime's usage table). */
export function createCostLedger(prices?: Readonly<Record<string, ModelPrice>>): CostLedger {
  const table = { ...DEFAULT_MODEL_PRICES, ...prices };
  const rows: DecisionCost[] = [];
  let totalUsd = 0;
  let unpriced = 0;
  return {
    add(row) {
      const price = priceFor(row.modelId, table);
      const costUsd = price ? usageCostUsd(row, price) : ('unpriced' as const);
      if (costUsd === 'unpriced') unpriced++;
      else totalUsd += costUsd;
      const out = { ...row, costUsd };
      rows.push(out);
      return out;
    },
    rows,
    get totalUsd() {
      return Math.round(totalUsd * 1e6) / 1e6;
    },
    get unpriced() {
      return unpriced;
    },
    toCsv() {
      const head = 'decision,time,model,input_tokens,output_tokens,cached_read_tokens,cache_write_tokens,cost_usd';
      const esc = (s: string) => (/[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
      return `${[head, ...rows.map((r) => [r.decision, r.time, esc(r.modelId), r.inputTokens, r.outputTokens, r.cacheReadTokens, r.cacheWriteTokens, r.costUsd === 'unpriced' ? 'unpriced' : r.costUsd.toFixed(6)].join(','))].join('\n')}\n`;
    },
  };
}
