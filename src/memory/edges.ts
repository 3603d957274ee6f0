/**
 * Typed memory edges: a pure, deterministic extractor over the finance entities of a memory.
 *
 * - `holds`, `exited`, `traded`, `watched`: a ticker or forex pair governed by a verb (English or Chinese);
 *   the nearest verb before the entity in its sentence wins, else the nearest verb shortly after it.
 * - `mentions`: an entity without a governing verb (chains and addresses are always mentions).
 * - `co_occurs_with`: every pair of the first 5 distinct tickers (at most 10 edges), keyed `A|B` sorted.
 * - `belongs_to_scenario`: only from system-supplied `metadata.scenario_id`, never from content text.
 *
 * At most {@link MAX_EDGES_PER_CONTENT} edges per content, strong verbs first.
 */
import type { MemoryEdgeInput } from '../storage/memory-types';
import { type FinanceEntity, extractFinanceEntities } from './entities';

/** Edge types the extractor emits. Open to extension. */
export type MemoryEdgeType = 'holds' | 'exited' | 'traded' | 'watched' | 'mentions' | 'co_occurs_with' | 'belongs_to_scenario' | (string & {});

/** Per-content edge cap. */
export const MAX_EDGES_PER_CONTENT = 20;
/** Tickers considered for `co_occurs_with` pairs. */
export const MAX_CO_OCCURRING_TICKERS = 5;

const VERBS: ReadonlyArray<readonly [MemoryEdgeType, RegExp]> = [
  [
    'holds',
    /\b(?:long(?:ed|ing)?|went long|bought|buy(?:s|ing)?|accumulat(?:e|ed|es|ing)|hold(?:s|ing)?|held|add(?:ed|ing|s)? to|own(?:s|ed)?|stak(?:e|ed|es|ing)|aped into|dca(?:'d|ed|ing)?)\b|做多|买入|买了|买进|持有|持仓|加仓|建仓|囤|抄底/giu,
  ],
  [
    'exited',
    /\b(?:sold|sell(?:s|ing)?|exit(?:s|ed|ing)?|clos(?:e|ed|es|ing)(?: out)?|took profits?|tak(?:e|es|ing) profits?|stopped out|dump(?:ed|ing)|trimm(?:ed|ing)|unwound|liquidated)\b|卖出|卖了|清仓|止损|止盈|平仓|减仓|割肉|离场/giu,
  ],
  ['traded', /\b(?:trade[ds]?|trading|swap(?:s|ped|ping)?|short(?:s|ed|ing)?|scalp(?:s|ed|ing)?|rotated|flipped|bridg(?:e|ed|ing))\b|交易|做空|兑换|换成|换了|对冲/giu],
  ['watched', /\b(?:watch(?:es|ed|ing)?|watchlist|monitor(?:s|ed|ing)?|eye(?:s|d|ing)|track(?:s|ed|ing)?|considering|interested in|keeping an eye on)\b|关注|观察|盯着|盯盘|自选|留意|观望/giu],
];
const WEIGHTS: Readonly<Record<string, number>> = { holds: 1, exited: 1, traded: 1, watched: 0.8, belongs_to_scenario: 1, mentions: 0.5, co_occurs_with: 0.3 };
const SENTENCE_END = /[.!?;\n。！？；]/u;
/** How far after an entity a verb may follow (`ETH position closed`, `ETH止损了`). */
const FOLLOWING_VERB_WINDOW = 24;

interface VerbHit {
  readonly type: MemoryEdgeType;
  readonly start: number;
  readonly end: number;
}

function verbHits(text: string): VerbHit[] {
  const hits: VerbHit[] = [];
  for (const [type, re] of VERBS) for (const m of text.matchAll(re)) hits.push({ type, start: m.index, end: m.index + m[0].length });
  return hits.sort((a, b) => a.start - b.start);
}

function sentenceBounds(text: string, index: number): [number, number] {
  let start = index;
  while (start > 0 && !SENTENCE_END.test(text[start - 1] as string)) start--;
  let end = index;
  while (end < text.length && !SENTENCE_END.test(text[end] as string)) end++;
  return [start, end];
}

function governingVerb(text: string, entity: FinanceEntity, verbs: readonly VerbHit[]): MemoryEdgeType | undefined {
  const [start, end] = sentenceBounds(text, entity.index);
  let before: VerbHit | undefined;
  let after: VerbHit | undefined;
  for (const v of verbs) {
    if (v.end <= entity.index && v.start >= start) before = v;
    else if (v.start >= entity.index && v.start < end && after === undefined && v.start - entity.index <= FOLLOWING_VERB_WINDOW) after = v;
  }
  return (before ?? after)?.type;
}

/**
 * Extract the typed edges of one memory.
 *
 * @example
 * ```ts
 * extractMemoryEdges('bought ETH and sold BTC', { scenario_id: 'sc_1' }).map((e) => `${e.edgeType}:${e.entityKey}`);
 * // ['holds:ETH', 'exited:BTC', 'belongs_to_scenario:sc_1', 'co_occurs_with:BTC|ETH']
 * ```
 */
export function extractMemoryEdges(content: string, metadata?: Readonly<Record<string, unknown>>): MemoryEdgeInput[] {
  const entities = extractFinanceEntities(content);
  const verbs = verbHits(content);
  const strong: MemoryEdgeInput[] = [];
  const mentions: MemoryEdgeInput[] = [];
  const edge = (entityKind: string, entityKey: string, edgeType: MemoryEdgeType): MemoryEdgeInput => ({
    entityKind,
    entityKey,
    edgeType,
    weight: WEIGHTS[edgeType] ?? 0.5,
  });
  for (const entity of entities) {
    const verb = entity.kind === 'ticker' || entity.kind === 'forex' ? governingVerb(content, entity, verbs) : undefined;
    if (verb !== undefined) strong.push(edge(entity.kind, entity.key, verb));
    else mentions.push(edge(entity.kind, entity.key, 'mentions'));
  }
  const scenario: MemoryEdgeInput[] = [];
  const scenarioId = metadata?.['scenario_id'];
  if (typeof scenarioId === 'string' && scenarioId.trim().length > 0 && scenarioId.length <= 200) {
    scenario.push(edge('scenario', scenarioId.trim(), 'belongs_to_scenario'));
  }
  const tickers = entities.filter((e) => e.kind === 'ticker').slice(0, MAX_CO_OCCURRING_TICKERS);
  const pairs: MemoryEdgeInput[] = [];
  for (let i = 0; i < tickers.length; i++) {
    for (let j = i + 1; j < tickers.length; j++) {
      const keys = [(tickers[i] as FinanceEntity).key, (tickers[j] as FinanceEntity).key].sort();
      pairs.push(edge('ticker_pair', keys.join('|'), 'co_occurs_with'));
    }
  }
  return [...strong, ...scenario, ...mentions, ...pairs].slice(0, MAX_EDGES_PER_CONTENT);
}
