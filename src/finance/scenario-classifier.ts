import { MinaraError } from '../errors/minara-error';
import type { CallSource } from '../safety/permission-tier';
import { type AnalyzedText, analyzeText, analyzeTextShared, keywordOccurs } from '../skills/text-match';
import { FINANCE_SCENARIOS, type ScenarioDefinition } from './scenarios';

/** The scenario picked for a turn (the shape the runtime injects). */
export interface ScenarioResult {
  readonly id: string;
  readonly score: number;
  /** Why it scored: `kw:buy`, `ex:0.67`, `source:cron`. */
  readonly reasons: readonly string[];
  readonly playbook: string;
  readonly preloadSkills: readonly string[];
}

/** Options of {@link createScenarioClassifier}. */
export interface ScenarioClassifierOptions {
  /** @default FINANCE_SCENARIOS */
  readonly scenarios?: readonly ScenarioDefinition[] | undefined;
  /** Lowest score that picks a scenario. @default 10 */
  readonly minScore?: number | undefined;
}

/** The L0.5 classifier: at most one scenario per turn, deterministic. */
export interface ScenarioClassifier {
  classify(message: string, context?: { readonly source?: CallSource | undefined }): ScenarioResult | undefined;
  /** Every applicable scenario with its score, best first (for debugging and tests). */
  rank(message: string, context?: { readonly source?: CallSource | undefined }): ScenarioResult[];
  readonly scenarios: readonly ScenarioDefinition[];
}

const KEYWORD_SCORE = 10;
const KEYWORD_CAP = 30;
const EXAMPLE_WEIGHT = 20;
const SIGNAL_SCORE = 15;
/** Every CJK character of a text, in order (one `match`, not a test per character). */
const CJK_CHARS = /[\u3400-\u9fff]/gu;

/** Word set for example overlap: latin tokens plus CJK character bigrams. */
function features(a: AnalyzedText): Set<string> {
  const out = new Set<string>([...a.tokens].filter((t) => t.length > 1 && !/^\d+$/.test(t)));
  const cjk = a.norm.match(CJK_CHARS) ?? [];
  for (let i = 0; i + 1 < cjk.length; i++) out.add(cjk[i]! + cjk[i + 1]!);
  return out;
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}

/**
 * Create the scenario classifier. Scores: +10 per keyword hit (capped at +30), up to +20 for word overlap
 * with the closest few-shot example, +15 for the alert scenario on cron/webhook turns; a negative keyword
 * or a source the scenario does not serve rules it out. The best score at or above `minScore` wins; ties
 * break by id. Same message and source, same answer.
 *
 * @example
 * ```ts
 * const scenarios = createScenarioClassifier();
 * scenarios.classify('swap 100 USDC to ETH', { source: 'user' });
 * // { id: 'SCENARIO_SPOT_TRADE', score: 36.7, reasons: ['kw:swap', 'ex:0.83'], playbook: '1. get_price …', preloadSkills: ['minara.core'] }
 * ```
 */
export function createScenarioClassifier(options: ScenarioClassifierOptions = {}): ScenarioClassifier {
  const { scenarios = FINANCE_SCENARIOS, minScore = 10 } = options;
  const ids = new Set<string>();
  for (const s of scenarios) {
    if (!/^SCENARIO_[A-Z0-9_]+$/.test(s.id)) throw new MinaraError('CONFIG_INVALID', `Scenario id "${s.id}" must look like SCENARIO_NAME.`);
    if (ids.has(s.id)) throw new MinaraError('CONFIG_INVALID', `Duplicate scenario id "${s.id}".`);
    ids.add(s.id);
  }
  const compiled = scenarios.map((s) => ({ def: s, examples: s.examples.map((e) => features(analyzeText(e))) }));

  function rank(message: string, context: { source?: CallSource | undefined } = {}): ScenarioResult[] {
    const source = context.source ?? 'user';
    const text = analyzeTextShared(message);
    const feats = features(text);
    const out: ScenarioResult[] = [];
    for (const { def, examples } of compiled) {
      if (def.sources && !def.sources.includes(source)) continue;
      if ((def.negativeKeywords ?? []).some((k) => keywordOccurs(text, k))) continue;
      const reasons: string[] = [];
      let kw = 0;
      for (const k of def.keywords) {
        if (kw >= KEYWORD_CAP) break;
        if (keywordOccurs(text, k)) {
          kw += KEYWORD_SCORE;
          reasons.push(`kw:${k}`);
        }
      }
      const best = examples.reduce((m, e) => Math.max(m, jaccard(feats, e)), 0);
      if (best > 0) reasons.push(`ex:${best.toFixed(2)}`);
      let score = kw + best * EXAMPLE_WEIGHT;
      if ((source === 'cron' || source === 'webhook') && def.skills.includes('market.watch') && def.id === 'SCENARIO_MARKET_ALERT') {
        score += SIGNAL_SCORE;
        reasons.push(`source:${source}`);
      }
      score = Math.round(score * 100) / 100;
      if (score >= minScore) out.push({ id: def.id, score, reasons, playbook: def.playbook, preloadSkills: [...def.skills] });
    }
    return out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  return {
    scenarios,
    rank,
    classify: (message, context) => rank(message, context)[0],
  };
}
