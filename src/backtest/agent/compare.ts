import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MinaraError } from '../../errors/minara-error';
import type { AgentDecision } from './decision-log';
import { metricSpread, welchInterval, type MetricSpread } from './stats';

/** One metric of two runs: the values, the delta (A − B) and its 95 % interval when one can be stated. */
export interface MetricDelta {
  readonly metric: string;
  readonly a: number;
  readonly b: number;
  readonly delta: number;
  /**
   * 95 % interval of the delta: Welch's over the epochs when both runs have at least two; for `sharpe` of single
   * runs, the conservative difference of the two bootstrap intervals; otherwise null (one run says nothing of spread).
   */
  readonly ci95: readonly [number, number] | null;
  readonly method: 'welch-epochs' | 'sharpe-ci-difference' | 'none';
}

/** Where two runs decided differently at the same simulated time, and what each was told and did. */
export interface DecisionDiff {
  readonly time: string;
  readonly a: { readonly message: string; readonly said: string; readonly intents: unknown } | null;
  readonly b: { readonly message: string; readonly said: string; readonly intents: unknown } | null;
}

/** What `minara backtest compare` prints. */
export interface RunComparison {
  readonly a: string;
  readonly b: string;
  readonly metrics: readonly MetricDelta[];
  readonly decisions: readonly DecisionDiff[];
  /** Decisions at the same time with the same orders. */
  readonly sameDecisions: number;
}

interface RunFolder {
  readonly metrics: Record<string, unknown>;
  readonly epochs: ReadonlyArray<Record<string, number>> | undefined;
  readonly decisions: AgentDecision[];
}

function readRun(dir: string): RunFolder {
  const file = join(dir, 'metrics.json');
  if (!existsSync(file)) throw new MinaraError('INVALID_ARGUMENT', `compare: ${dir} is not a backtest run folder (no metrics.json)`);
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { metrics?: Record<string, unknown> };
  const epochsFile = join(dir, 'epochs.json');
  const epochs = existsSync(epochsFile) ? (JSON.parse(readFileSync(epochsFile, 'utf8')) as { metrics?: Array<Record<string, number>> }).metrics : undefined;
  const decisionsFile = join(dir, 'decisions.jsonl');
  const decisions = existsSync(decisionsFile)
    ? readFileSync(decisionsFile, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as AgentDecision)
    : [];
  return { metrics: doc.metrics ?? {}, epochs, decisions };
}

const COMPARED = ['totalReturn', 'cagr', 'sharpe', 'sortino', 'maxDrawdown', 'calmar', 'volatility', 'trades', 'winRate', 'turnover', 'feesUsd', 'finalEquity'];

function deltaOf(metric: string, a: RunFolder, b: RunFolder): MetricDelta | undefined {
  const va = a.metrics[metric];
  const vb = b.metrics[metric];
  if (typeof va !== 'number' || typeof vb !== 'number') return undefined;
  const spread = (r: RunFolder): MetricSpread | undefined => (r.epochs && r.epochs.length > 1 ? metricSpread(r.epochs.map((m) => m[metric] ?? Number.NaN)) : undefined);
  const sa = spread(a);
  const sb = spread(b);
  if (sa && sb) {
    const ci = welchInterval(sa, sb);
    return { metric, a: sa.mean, b: sb.mean, delta: sa.mean - sb.mean, ci95: ci ?? null, method: ci ? 'welch-epochs' : 'none' };
  }
  const cia = a.metrics.sharpeCi95;
  const cib = b.metrics.sharpeCi95;
  if (metric === 'sharpe' && Array.isArray(cia) && Array.isArray(cib)) {
    return { metric, a: va, b: vb, delta: va - vb, ci95: [Number(cia[0]) - Number(cib[1]), Number(cia[1]) - Number(cib[0])], method: 'sharpe-ci-difference' };
  }
  return { metric, a: va, b: vb, delta: va - vb, ci95: null, method: 'none' };
}

const orders = (d: AgentDecision | undefined) => JSON.stringify((d?.intents ?? []).map((i) => ({ symbol: i.symbol, side: i.side, quantity: i.quantity ?? null, notionalUsd: i.notionalUsd ?? null })));

/**
 * Compare two run folders: metric deltas (A − B) with intervals, and a per-decision diff of the agent's decisions
 * (aligned by simulated time: where the two runs placed different orders, with what each was told and said).
 */
export function compareRuns(dirA: string, dirB: string): RunComparison {
  const a = readRun(dirA);
  const b = readRun(dirB);
  const metrics = COMPARED.flatMap((m) => deltaOf(m, a, b) ?? []);
  const byTime = new Map<string, { a?: AgentDecision; b?: AgentDecision }>();
  for (const d of a.decisions) byTime.set(d.time, { ...byTime.get(d.time), a: d });
  for (const d of b.decisions) byTime.set(d.time, { ...byTime.get(d.time), b: d });
  const decisions: DecisionDiff[] = [];
  let sameDecisions = 0;
  for (const [time, pair] of [...byTime.entries()].sort(([x], [y]) => x.localeCompare(y))) {
    if (pair.a && pair.b && orders(pair.a) === orders(pair.b)) {
      sameDecisions++;
      continue;
    }
    const side = (d: AgentDecision | undefined) => (d ? { message: d.message, said: d.said, intents: d.intents } : null);
    decisions.push({ time, a: side(pair.a), b: side(pair.b) });
  }
  return { a: dirA, b: dirB, metrics, decisions, sameDecisions };
}

/** The comparison as text (what the CLI prints). */
export function formatComparison(c: RunComparison): string {
  const num = (v: number) => (Math.abs(v) >= 1000 ? v.toFixed(0) : v.toFixed(4));
  const lines = [`A: ${c.a}`, `B: ${c.b}`, '', 'metric            A           B           A−B         95% interval (method)'];
  for (const m of c.metrics) {
    const ci = m.ci95 ? `[${num(m.ci95[0])}, ${num(m.ci95[1])}] (${m.method})` : 'n/a (one run each: run epochs for an interval)';
    lines.push(`${m.metric.padEnd(16)}  ${num(m.a).padStart(10)}  ${num(m.b).padStart(10)}  ${num(m.delta).padStart(10)}  ${ci}`);
  }
  lines.push('', `decisions: ${c.sameDecisions} the same, ${c.decisions.length} different`);
  for (const d of c.decisions) {
    lines.push(`- ${d.time}`);
    lines.push(`  A: ${d.a ? `${JSON.stringify(d.a.intents)} — ${d.a.said.slice(0, 160)}` : '(no decision)'}`);
    lines.push(`  B: ${d.b ? `${JSON.stringify(d.b.intents)} — ${d.b.said.slice(0, 160)}` : '(no decision)'}`);
    if (d.a && d.b && d.a.message !== d.b.message) lines.push(`  told A: ${d.a.message.slice(0, 200)}`, `  told B: ${d.b.message.slice(0, 200)}`);
  }
  return `${lines.join('\n')}\n`;
}
