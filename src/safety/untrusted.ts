/**
 * Untrusted content: what entered a turn from outside the person and the operator (a web page, a search
 * snippet, an MCP tool's result, a webhook payload, an uploaded file), labelled with where it came from, and
 * what that label changes downstream. The design follows the information-flow view of prompt injection
 * (CaMeL, Microsoft FIDES, the "lethal trifecta", OWASP LLM01): a label is set on data when it enters, it is
 * kept in the turn's state (and the session's, so it survives compaction and later turns), and policies at
 * tool calls read it — the model's judgement is never the control.
 *
 * - A tool declares `trust: 'untrusted'` (`defineTool`); its successful results label the turn with the
 *   tool's `source(input, result)` (a URL, an MCP server, a file). MCP client tools are untrusted by default.
 * - A call made after untrusted content entered carries its provenance: the approval request, its record
 *   (reason), the card and the audit row (`detail.provenance`) say "proposed after reading: …".
 * - {@link UntrustedContentPolicy}: after untrusted content no grant covers a fund-moving call (a person
 *   decides) and a MANUAL_ONLY call is refused (`UNTRUSTED_CONTENT`); durable learning lands as `proposed`.
 */
import type { ToolCallContext } from '../tools/types';
import { findInstructionPassages, type InstructionClass } from './instruction-classifier';

/** Whether content came from the person and the operator (`trusted`) or from anyone else (`untrusted`). */
export type TrustLabel = 'trusted' | 'untrusted';

/** How untrusted content entered a turn. */
export type UntrustedKind = 'tool' | 'webhook' | 'upload' | 'shared' | 'message';

/** One untrusted source that entered a turn. */
export interface UntrustedSource {
  readonly kind: UntrustedKind;
  /** Where it came from: a URL, `mcp:<server>/<tool>`, `webhook:<name>`, `upload:<file>`. */
  readonly source: string;
  /** The tool whose result carried it (kind `tool`). */
  readonly tool?: string | undefined;
  readonly toolCallId?: string | undefined;
}

/** An instruction-like passage found in untrusted content, with the source it came from. */
export interface FlaggedPassage {
  readonly source: string;
  readonly passage: string;
  readonly classes: readonly InstructionClass[];
  readonly toolCallId?: string | undefined;
}

/** What a turn has read from outside so far. */
export interface TurnProvenance {
  readonly sources: readonly UntrustedSource[];
  readonly passages: readonly FlaggedPassage[];
}

/**
 * The provenance a call carries on its approval request, card, record and audit row: the sources read before it
 * was proposed and the first passage among them that reads as an instruction.
 */
export interface CallProvenance {
  /** Distinct sources, oldest first (at most 10). */
  readonly untrustedSources: readonly string[];
  /** The first instruction-like passage read before the call, when there is one. */
  readonly passage?: string | undefined;
  /** One line for a card or an approval reason: `proposed after reading: a, b`. */
  readonly summary: string;
}

/**
 * What untrusted content changes, set by the operator (`createApp({ untrustedContent })`,
 * `createToolRegistry({ untrustedContent })`). The defaults are the safe ones.
 */
export interface UntrustedContentPolicy {
  /**
   * Whether a stored or session grant still covers a fund-moving call made after untrusted content entered the
   * turn. `false`: a person decides every such call (an autonomous turn is refused, `GRANT_REQUIRED`). @default false
   */
  readonly grantsCoverFundMoving?: boolean | undefined;
  /**
   * A MANUAL_ONLY call made after untrusted content entered: `refuse` outright (`UNTRUSTED_CONTENT`), or `approve`
   * (a person may still approve it; the card shows the provenance). @default 'refuse'
   */
  readonly manualOnly?: 'refuse' | 'approve' | undefined;
  /**
   * Whether an MCP host (source `mcp`) may write learnings that shape future prompts (`memory_learn`, prompt-shaping
   * `memory_write` categories, workspace files). @default false
   */
  readonly mcpHostLearning?: boolean | undefined;
}

/** The policy with every default filled in. */
export type ResolvedUntrustedContentPolicy = Required<{ [K in keyof UntrustedContentPolicy]: NonNullable<UntrustedContentPolicy[K]> }>;

/** The safe defaults of {@link UntrustedContentPolicy}. */
export const DEFAULT_UNTRUSTED_CONTENT_POLICY: ResolvedUntrustedContentPolicy = Object.freeze({ grantsCoverFundMoving: false, manualOnly: 'refuse', mcpHostLearning: false });

/**
 * Check and fill an {@link UntrustedContentPolicy}.
 *
 * @throws TypeError naming the field and what was expected.
 */
export function resolveUntrustedContentPolicy(policy: UntrustedContentPolicy | undefined): ResolvedUntrustedContentPolicy {
  if (policy === undefined) return DEFAULT_UNTRUSTED_CONTENT_POLICY;
  if (typeof policy !== 'object' || policy === null) throw new TypeError('untrustedContent: expected an object { grantsCoverFundMoving?, manualOnly?, mcpHostLearning? }');
  const bool = (field: keyof UntrustedContentPolicy, fallback: boolean): boolean => {
    const v = policy[field];
    if (v === undefined) return fallback;
    if (typeof v !== 'boolean') throw new TypeError(`untrustedContent.${field}: expected true or false, got ${JSON.stringify(v)}`);
    return v;
  };
  const manualOnly = policy.manualOnly ?? 'refuse';
  if (manualOnly !== 'refuse' && manualOnly !== 'approve') throw new TypeError(`untrustedContent.manualOnly: expected "refuse" or "approve", got ${JSON.stringify(manualOnly)}`);
  return Object.freeze({ grantsCoverFundMoving: bool('grantsCoverFundMoving', false), manualOnly, mcpHostLearning: bool('mcpHostLearning', false) });
}

/** Where a turn's {@link TurnProvenance} is kept in its `ToolCallContext.state`. */
export const UNTRUSTED_STATE_KEY = 'minara.untrusted';

interface MutableProvenance {
  sources: UntrustedSource[];
  passages: FlaggedPassage[];
}

const MAX_SOURCES = 50;
const MAX_PASSAGES = 20;

function stateOf(ctx: ToolCallContext): MutableProvenance {
  let p = ctx.state.get(UNTRUSTED_STATE_KEY) as MutableProvenance | undefined;
  if (p === undefined) {
    p = { sources: [], passages: [] };
    ctx.state.set(UNTRUSTED_STATE_KEY, p);
  }
  return p;
}

/**
 * Label the turn: `source` entered it, with `text` (judged by the instruction classifier). Returns the
 * instruction-like passages found in `text` (already recorded on the turn).
 *
 * @example
 * ```ts
 * recordUntrusted(ctx, { kind: 'tool', tool: 'web_fetch', source: 'https://example.com/' }, pageText);
 * turnProvenance(ctx)?.sources[0]?.source; // 'https://example.com/'
 * ```
 */
export function recordUntrusted(ctx: ToolCallContext, source: UntrustedSource, text?: string): FlaggedPassage[] {
  const p = stateOf(ctx);
  if (!p.sources.some((s) => s.source === source.source && s.toolCallId === source.toolCallId) && p.sources.length < MAX_SOURCES) p.sources.push(source);
  if (typeof text !== 'string' || text.length === 0) return [];
  const found = findInstructionPassages(text).map((f) => ({ source: source.source, passage: f.passage, classes: f.classes, ...(source.toolCallId ? { toolCallId: source.toolCallId } : {}) }));
  for (const f of found) if (p.passages.length < MAX_PASSAGES) p.passages.push(f);
  return found;
}

/** Seed a turn with provenance carried over from earlier turns of its session (session state). */
export function restoreProvenance(ctx: ToolCallContext, carried: TurnProvenance | undefined): void {
  if (!carried || carried.sources.length === 0) return;
  const p = stateOf(ctx);
  for (const s of carried.sources) if (!p.sources.some((x) => x.source === s.source && x.toolCallId === s.toolCallId) && p.sources.length < MAX_SOURCES) p.sources.push(s);
  for (const f of carried.passages) if (p.passages.length < MAX_PASSAGES && !p.passages.some((x) => x.passage === f.passage)) p.passages.push(f);
}

/** What the turn has read from outside, or undefined when nothing untrusted entered it. */
export function turnProvenance(ctx: ToolCallContext | undefined): TurnProvenance | undefined {
  const p = ctx?.state.get(UNTRUSTED_STATE_KEY) as MutableProvenance | undefined;
  if (!p || p.sources.length === 0) return undefined;
  return { sources: [...p.sources], passages: [...p.passages] };
}

/** The provenance a call proposed now carries, or undefined when the turn read nothing untrusted. */
export function callProvenance(ctx: ToolCallContext | undefined): CallProvenance | undefined {
  const p = turnProvenance(ctx);
  if (!p) return undefined;
  const untrustedSources = [...new Set(p.sources.map((s) => s.source))].slice(0, 10);
  const passage = p.passages[0]?.passage;
  return { untrustedSources, ...(passage ? { passage } : {}), summary: `proposed after reading: ${untrustedSources.join(', ')}` };
}

/** Parse provenance kept as JSON (session state); anything malformed reads as none. */
export function parseTurnProvenance(raw: unknown): TurnProvenance | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const r = raw as { sources?: unknown; passages?: unknown };
  if (!Array.isArray(r.sources)) return undefined;
  const kinds = new Set<UntrustedKind>(['tool', 'webhook', 'upload', 'shared', 'message']);
  const sources = r.sources.filter((s): s is UntrustedSource => typeof s === 'object' && s !== null && typeof (s as UntrustedSource).source === 'string' && kinds.has((s as UntrustedSource).kind)).slice(0, MAX_SOURCES);
  const passages = Array.isArray(r.passages)
    ? r.passages.filter((f): f is FlaggedPassage => typeof f === 'object' && f !== null && typeof (f as FlaggedPassage).passage === 'string' && typeof (f as FlaggedPassage).source === 'string' && Array.isArray((f as FlaggedPassage).classes)).slice(0, MAX_PASSAGES)
    : [];
  return sources.length > 0 ? { sources, passages } : undefined;
}

/** The source string of a tool result: the tool's own `source(input, result)`, else the tool's name. */
export function describeToolSource(toolName: string, declared: string | readonly string[] | undefined): string[] {
  const list = declared === undefined ? [] : typeof declared === 'string' ? [declared] : [...declared];
  const clean = list.filter((s) => typeof s === 'string' && s.trim() !== '').map((s) => s.trim().slice(0, 300));
  return clean.length > 0 ? clean.slice(0, 10) : [toolName];
}

/**
 * An approval's reason as the model may read it: the record keeps the instruction-like passage the agent had read
 * (`; it read: "…"`) for the person, and the model is never shown the attacker's sentence again.
 */
export function reasonForModel(reason: string): string {
  const at = reason.indexOf('; it read: "');
  if (at < 0) return reason;
  const close = reason.lastIndexOf('")');
  return close > at ? `${reason.slice(0, at)}${reason.slice(close + 1)}` : reason.slice(0, at);
}
