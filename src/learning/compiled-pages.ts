/**
 * Compiled pages: everything the learning loop currently holds about one asset as a single byte-deterministic
 * markdown page (compiled truth: graduated methodologies and active hard constraints; timeline: the latest
 * reflected cases and trades). A small LRU with a time-to-live, keyed by entity and variant, serves repeated
 * calls; the store clears it on `memory:written`, `trade:recorded`, `trade:outcome_updated` (and on methodology,
 * preference and reflection changes) of its tenant.
 */
import type { LearningScope, LearningStorage, MethodologyRecord, PreferenceRecord, RoleCaseRecord, TradeRecord } from '../storage/learning-types';
import { assetClassOf, normalizeAsset } from './assets';
import { methodologyLine, preferenceLine } from './prompt';

/** Options of a page. */
export interface CompiledPageOptions {
  /** Include active hard constraints that mention the asset. @default true */
  readonly includeHardConstraints?: boolean | undefined;
  /** Include the latest trades in the timeline (a memory export leaves them out: it carries no trade history). @default true */
  readonly includeTrades?: boolean | undefined;
}

const money = (n: number) => `${n >= 0 ? '+' : '-'}$${Math.abs(n).toFixed(2)}`;
const num = (n: number) => Number(n.toPrecision(8)).toString();

function tradeLine(t: TradeRecord): string {
  const head = `${t.at} ${t.action} ${t.action === 'open' ? (t.direction ?? t.side) : t.side} ${t.asset} ${t.kind} ${num(t.quantity)} @ ${num(t.price)}`;
  if (t.action !== 'open') return `${head} · ${t.toolName}`;
  if (t.status === 'open') return `${head} · open${t.closedQuantity > 0 ? ` (${num(t.closedQuantity)} closed so far)` : ''}`;
  return `${head} · closed ${t.closedAt ?? ''} at ${num(t.exitPrice ?? 0)}, ${money(t.realizedPnlUsd)} (${t.outcome ?? 'loss'})`;
}

function caseLine(c: RoleCaseRecord): string {
  let lessons: string[] = [];
  try {
    const parsed = JSON.parse(c.reflection ?? '{}') as { lessons?: unknown };
    if (Array.isArray(parsed.lessons)) lessons = parsed.lessons.filter((l): l is string => typeof l === 'string');
  } catch {
    lessons = [];
  }
  return `${c.reflectedAt ?? ''} [${c.classification ?? 'unclassified'}] ${c.summary}${lessons.length > 0 ? ` Lessons: ${lessons.join(' ')}` : ''}`;
}

/** Whether a preference's text or value names the asset (as a whole word). */
function mentions(p: PreferenceRecord, asset: string): boolean {
  const re = new RegExp(`(^|[^A-Za-z0-9])\\$?${asset.replace(/[^A-Za-z0-9]/gu, '')}([^A-Za-z0-9]|$)`, 'iu');
  return re.test(p.text) || (p.value !== undefined && re.test(p.value));
}

/** Render the page of one asset from the scope's rows (no cache). */
export async function compilePage(db: LearningStorage, scope: LearningScope, entity: string, options: CompiledPageOptions & { readonly timelineLimit: number }): Promise<string> {
  const asset = normalizeAsset(entity);
  const assetClass = assetClassOf(asset);
  if (assetClass === undefined) return `# ${asset}\n\nNo compiled knowledge: the asset class of ${asset} is unknown.\n`;
  const [methodologies, hard, cases, trades] = await Promise.all([
    db.listMethodologies(scope, { states: ['graduated'], assetClasses: [assetClass, 'any'], limit: 50 }),
    options.includeHardConstraints === false ? Promise.resolve([] as PreferenceRecord[]) : db.listPreferences(scope, { states: ['active'], kinds: ['hard_constraint'], limit: 200 }),
    db.listCases(scope, { status: 'reflected', asset, limit: options.timelineLimit }),
    options.includeTrades === false ? Promise.resolve([] as TradeRecord[]) : db.listTrades(scope, { asset, limit: options.timelineLimit }),
  ]);
  const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
  const constraints = hard.filter((p) => mentions(p, asset)).sort(byId);
  const lines = [`# ${asset} (${assetClass})`, '', '## Compiled truth', '', '### Graduated methodologies'];
  lines.push(...(methodologies.length > 0 ? [...methodologies].sort((a: MethodologyRecord, b: MethodologyRecord) => b.confidence - a.confidence || a.id - b.id).map((m) => `- ${methodologyLine(m)}`) : ['- none yet']));
  if (options.includeHardConstraints !== false) {
    lines.push('', '### Hard constraints', ...(constraints.length > 0 ? constraints.map((p) => `- ${preferenceLine(p)}`) : ['- none']));
  }
  lines.push('', '## Timeline', '', '### Reflected cases', ...(cases.length > 0 ? cases.map((c) => `- ${caseLine(c)}`) : ['- none yet']));
  if (options.includeTrades !== false) lines.push('', '### Trades', ...(trades.length > 0 ? trades.map((t) => `- ${tradeLine(t)}`) : ['- none yet']));
  return `${lines.join('\n')}\n`;
}

/** A small LRU with a time-to-live. */
export function createPageCache(options: { readonly ttlMs: number; readonly maxEntries: number; readonly now: () => number }) {
  const entries = new Map<string, { text: string; at: number }>();
  return {
    get(key: string): string | undefined {
      const e = entries.get(key);
      if (!e) return undefined;
      if (options.now() - e.at >= options.ttlMs) {
        entries.delete(key);
        return undefined;
      }
      entries.delete(key);
      entries.set(key, e);
      return e.text;
    },
    set(key: string, text: string): void {
      entries.delete(key);
      entries.set(key, { text, at: options.now() });
      while (entries.size > options.maxEntries) entries.delete(entries.keys().next().value as string);
    },
    clear(): void {
      entries.clear();
    },
    get size(): number {
      return entries.size;
    },
  };
}
