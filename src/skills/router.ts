/**
 * The L0 router: a deterministic pre-filter that scores every skill for a turn.
 *
 * | signal | score |
 * | --- | --- |
 * | keyword hit in the message | +30 each, capped at +60 |
 * | lifecycle stage match | +20 |
 * | asset class match | +15 |
 * | co-activation from another hit skill | +10 |
 * | signal source match (cron/webhook turns) | +25 |
 * | fallback (priority tiebreaker) | 100 − priority |
 * | negative keyword hit, failed condition | −∞ (dropped) |
 *
 * A skill is "hit" (and lifts its `coActivate` ids) when it has a keyword hit or a signal match.
 * Ties break by priority (lower first) then id (code-point order), so the result never depends on
 * registration order. Matchers are compiled once, when the router is built.
 */
import { analyzeTextShared, createKeywordIndex, type KeywordIndex } from './text-match';
import { ASSET_CLASSES, classifyMessage, LIFECYCLE_STAGES, type AssetClass, type LifecycleStage } from './taxonomy';
import type { RoutedCatalogEntry, RouteExplanation, Skill, TurnRoutingContext } from './types';

/** Per-hit keyword score. */
export const ROUTE_KEYWORD_SCORE = 30;
/** Cap on the keyword part of a score. */
export const ROUTE_KEYWORD_CAP = 60;
export const ROUTE_STAGE_SCORE = 20;
export const ROUTE_ASSET_SCORE = 15;
export const ROUTE_CO_ACTIVATE_SCORE = 10;
export const ROUTE_SIGNAL_SCORE = 25;

interface KwRef {
  readonly skill: number;
  readonly kw: number;
  readonly negative: boolean;
}

/** A compiled router over a fixed list of skills. */
export interface SkillRouter {
  /** Kept skills, best first. */
  route(ctx: TurnRoutingContext): RoutedCatalogEntry[];
  /** Every routable skill including dropped ones (score `-Infinity`, reason `neg:…` or `cond:…`). */
  explain(ctx: TurnRoutingContext): RouteExplanation[];
}

/** Options of {@link createSkillRouter}. */
export interface SkillRouterOptions {
  /**
   * Routing-time condition check (tools present, tool sets, fallbacks). Returns why the skill fails,
   * or undefined when it passes. Called at most once per skill per pass.
   */
  readonly checkConditions?: ((skill: Skill) => string | undefined) | undefined;
}

/** Code-point comparison (locale-independent, so every machine sorts alike). */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Compile a router over `skills` (manual-activation skills are not routed).
 *
 * @example
 * ```ts
 * const router = createSkillRouter([perps, research]);
 * router.route({ message: 'long BTC 5x' }); // [{ id: 'perps.hl', score: 135, reasons: ['kw:long', 'stage:decide', …] }, …]
 * ```
 */
export function createSkillRouter(skills: readonly Skill[], options: SkillRouterOptions = {}): SkillRouter {
  const list = skills.filter((s) => s.activation === 'auto').sort((a, b) => compareIds(a.id, b.id));
  const position = new Map(list.map((s, i) => [s.id, i] as const));
  const entries: Array<readonly [string, KwRef]> = [];
  list.forEach((s, si) => {
    s.routing.keywords.forEach((k, ki) => entries.push([k, { skill: si, kw: ki, negative: false }]));
    s.routing.negativeKeywords.forEach((k, ki) => entries.push([k, { skill: si, kw: ki, negative: true }]));
  });
  const index: KeywordIndex<KwRef> = createKeywordIndex(entries);
  const n = list.length;
  const priority = list.map((s) => s.priority);
  // Stages and asset classes as bit masks; reason strings precomputed in declaration order.
  const stageBit = new Map(LIFECYCLE_STAGES.map((x, b) => [x, 1 << b] as const));
  const assetBit = new Map(ASSET_CLASSES.map((x, b) => [x, 1 << b] as const));
  const stageMask = list.map((s) => s.routing.lifecycleStages.reduce((m, x) => m | (stageBit.get(x) ?? 0), 0));
  const assetMask = list.map((s) => s.routing.assetClasses.reduce((m, x) => m | (assetBit.get(x) ?? 0), 0));
  const stageReasons = list.map((s) => s.routing.lifecycleStages.map((x) => [stageBit.get(x) ?? 0, `stage:${x}`] as const));
  const assetReasons = list.map((s) => s.routing.assetClasses.map((x) => [assetBit.get(x) ?? 0, `asset:${x}`] as const));
  const kwReasons = list.map((s) => s.routing.keywords.map((k) => `kw:${k}`));
  const negReasons = list.map((s) => s.routing.negativeKeywords.map((k) => `neg:${k}`));
  const coTargets = list.map((s) => s.routing.coActivate.map((id) => position.get(id)).filter((i): i is number => i !== undefined));
  const hasToolConditions = list.map((s) => {
    const c = s.conditions;
    return c.requiresTools.length + c.requiresToolsets.length + c.fallbackForTools.length + c.fallbackForToolsets.length > 0;
  });
  const check = options.checkConditions;

  /** Scores by skill index (`-Infinity` when dropped) and reasons; `order` is every index, ranked. */
  function score(ctx: TurnRoutingContext): { scores: Float64Array; reasons: string[][]; order: number[] } {
    const text = analyzeTextShared(ctx.message ?? '');
    const analysis = classifyMessage(text);
    const stages = new Set<LifecycleStage>(analysis.stages);
    const assets = new Set<AssetClass>(analysis.assetClasses);
    const signalKeys = new Set<string>();
    const sig = ctx.signal;
    if (sig) {
      for (const st of sig.suggested_stages ?? []) stages.add(st);
      if (sig.asset?.asset_class) assets.add(sig.asset.asset_class);
      else if (sig.asset?.symbol) for (const c of classifyMessage(`$${sig.asset.symbol}`).assetClasses) assets.add(c);
      signalKeys.add(sig.source).add(sig.signal_id).add(`${sig.source}:${sig.signal_id}`);
    } else if (ctx.source !== undefined && ctx.source !== 'user') {
      signalKeys.add(ctx.source);
    }
    let turnStages = 0;
    for (const x of stages) turnStages |= stageBit.get(x) ?? 0;
    let turnAssets = 0;
    for (const x of assets) turnAssets |= assetBit.get(x) ?? 0;

    const scores = new Float64Array(n);
    const reasons: string[][] = new Array<string[]>(n);
    const hit = new Uint8Array(n);
    const kwCount = new Uint8Array(n);
    // Matches come back in entry order: per skill, its keywords in declaration order, then negatives.
    for (const ref of index.match(text)) {
      if (ref.negative) {
        if (scores[ref.skill] !== -Infinity) {
          scores[ref.skill] = -Infinity;
          reasons[ref.skill] = [(negReasons[ref.skill] as string[])[ref.kw] as string];
        }
      } else {
        kwCount[ref.skill]! += 1;
        (reasons[ref.skill] ??= []).push((kwReasons[ref.skill] as string[])[ref.kw] as string);
      }
    }
    for (let i = 0; i < n; i++) {
      if (scores[i] === -Infinity) continue;
      const s = list[i] as Skill;
      if (hasToolConditions[i] && check) {
        const failed = check(s);
        if (failed !== undefined) {
          scores[i] = -Infinity;
          reasons[i] = [`cond:${failed}`];
          continue;
        }
      }
      let total = 100 - (priority[i] as number);
      const kws = kwCount[i] as number;
      if (kws > 0) total += Math.min(ROUTE_KEYWORD_CAP, ROUTE_KEYWORD_SCORE * kws);
      const sm = (stageMask[i] as number) & turnStages;
      if (sm !== 0) {
        total += ROUTE_STAGE_SCORE;
        const r = (reasons[i] ??= []);
        for (const [bit, reason] of stageReasons[i]!) if (sm & bit) r.push(reason);
      }
      const am = (assetMask[i] as number) & turnAssets;
      if (am !== 0) {
        total += ROUTE_ASSET_SCORE;
        const r = (reasons[i] ??= []);
        for (const [bit, reason] of assetReasons[i]!) if (am & bit) r.push(reason);
      }
      scores[i] = total;
      if (kws > 0) hit[i] = 1;
    }
    // Signal matches (reason goes last, after co-activation).
    const signalReason: Array<string | undefined> = new Array<string | undefined>(n);
    if (signalKeys.size > 0) {
      for (let i = 0; i < n; i++) {
        if (scores[i] === -Infinity) continue;
        const m = (list[i] as Skill).routing.signalSources.find((x) => signalKeys.has(x));
        if (m === undefined) continue;
        scores[i]! += ROUTE_SIGNAL_SCORE;
        signalReason[i] = `signal:${m}`;
        hit[i] = 1;
      }
    }
    // Co-activation: a hit skill lifts its targets once (+10), credited to the first hitter by id.
    const coFrom = new Int32Array(n).fill(-1);
    for (let i = 0; i < n; i++) {
      if (!hit[i]) continue;
      for (const t of coTargets[i] as number[]) if (scores[t] !== -Infinity && coFrom[t] === -1) coFrom[t] = i;
    }
    for (let i = 0; i < n; i++) {
      const from = coFrom[i] as number;
      if (from >= 0) {
        scores[i]! += ROUTE_CO_ACTIVATE_SCORE;
        (reasons[i] ??= []).push(`co:${(list[from] as Skill).id}`);
      }
      const sr = signalReason[i];
      if (sr !== undefined) (reasons[i] ??= []).push(sr);
    }
    // Rank: score desc, priority asc, id asc (indexes are already in id order).
    const order = Array.from({ length: n }, (_, i) => i);
    order.sort((a, b) => {
      const sa = scores[a] as number;
      const sb = scores[b] as number;
      if (sa !== sb) return sa === -Infinity ? 1 : sb === -Infinity ? -1 : sb - sa;
      return (priority[a] as number) - (priority[b] as number) || a - b;
    });
    return { scores, reasons, order };
  }

  return {
    route(ctx) {
      const { scores, reasons, order } = score(ctx);
      const out: RoutedCatalogEntry[] = [];
      for (const i of order) {
        const sc = scores[i] as number;
        if (sc === -Infinity) break;
        out.push({ id: (list[i] as Skill).id, score: sc, reasons: reasons[i] ?? [] });
      }
      return out;
    },
    explain(ctx) {
      const { scores, reasons, order } = score(ctx);
      return order.map((i) => ({ id: (list[i] as Skill).id, score: scores[i] as number, reasons: reasons[i] ?? [], dropped: scores[i] === -Infinity }));
    },
  };
}
