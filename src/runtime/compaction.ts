import type { LanguageModel, ModelMessage } from 'ai';
import { loadAi } from '../util/lazy-ai';
import { estimateTokens } from './conversation';

/** Marks the synthetic message that replaces compacted history; everything before it is sliced off. */
export const COMPACTION_MARKER = '[Conversation summary: earlier turns were compacted]';

/** Options of the compaction ladder. */
export interface CompactionOptions {
  /** The model's context window in tokens. @default 200000 */
  readonly contextWindowTokens?: number | undefined;
  /** Compact when the history is above this share of the window. @default 0.6 */
  readonly triggerRatio?: number | undefined;
  /** Aim for at most this share of the window. @default 0.4 */
  readonly targetRatio?: number | undefined;
  /** Recent messages never collapsed or summarised. @default 12 */
  readonly keepRecentMessages?: number | undefined;
  /** Tool outputs longer than this are cut by microcompact (keeping the head). @default 4000 */
  readonly maxToolResultChars?: number | undefined;
  /** The utility model for LLM autocompaction; without one the ladder falls back to a hard trim. */
  readonly summarizer?: LanguageModel | undefined;
  /** Top-N memories to re-inject after autocompaction. */
  readonly reinject?: ((query: string, limit: number) => Promise<readonly string[]>) | undefined;
  /** @default 5 */
  readonly reinjectTopN?: number | undefined;
}

/** What one pass of the ladder did. */
export interface CompactionResult {
  readonly messages: ModelMessage[];
  readonly changed: boolean;
  readonly beforeTokens: number;
  readonly afterTokens: number;
  /** The rungs that changed something: `boundary-slice`, `collapse-tool-results`, `microcompact`, `autocompact`, `hard-trim`, `reinject`. */
  readonly steps: string[];
}

type Part = { type: string; [k: string]: unknown };

/**
 * The compaction ladder, cheapest first: slice at the last summary boundary, collapse old tool results,
 * microcompact (drop old reasoning, cut oversized tool outputs), then — only when still over budget —
 * summarise older turns with the utility model (or trim them when there is none), then re-inject the
 * most relevant memories. Never splits a tool call from its result. Idempotent: a compacted history under
 * the trigger comes back unchanged.
 */
export async function compactMessages(
  input: readonly ModelMessage[],
  options: CompactionOptions & { query?: string | undefined; force?: boolean | undefined; signal?: AbortSignal | undefined } = {},
): Promise<CompactionResult> {
  const {
    contextWindowTokens = 200_000,
    triggerRatio = 0.6,
    targetRatio = 0.4,
    keepRecentMessages = 12,
    maxToolResultChars = 4_000,
    summarizer,
    reinject,
    reinjectTopN = 5,
    query = '',
    force = false,
  } = options;
  const beforeTokens = estimateTokens(input);
  const trigger = contextWindowTokens * triggerRatio;
  const target = contextWindowTokens * targetRatio;
  let messages = [...input];
  const steps: string[] = [];
  if (!force && beforeTokens <= trigger) return { messages, changed: false, beforeTokens, afterTokens: beforeTokens, steps };

  // 1. Boundary slice: nothing before the last summary is needed.
  const boundary = findLastIndex(messages, isSummaryMessage);
  if (boundary > 0) {
    messages = messages.slice(boundary);
    steps.push('boundary-slice');
  }
  const over = () => estimateTokens(messages) > target;

  // 2. Collapse tool results outside the recent window.
  const recentFrom = () => Math.max(0, messages.length - keepRecentMessages);
  if (over()) {
    let collapsed = false;
    const cut = recentFrom();
    messages = messages.map((m, i) => {
      if (i >= cut || m.role !== 'tool') return m;
      const content = m.content.map((p) => {
        if (p.type !== 'tool-result' || isCollapsed(p.output)) return p;
        collapsed = true;
        return { ...p, output: { type: 'json' as const, value: { collapsed: true, tool: p.toolName, summary: summarizeOutput(p.output) } } };
      });
      return { ...m, content } as ModelMessage;
    });
    if (collapsed) steps.push('collapse-tool-results');
  }

  // 3. Microcompact: drop old reasoning, cut oversized tool outputs everywhere.
  if (over()) {
    let touched = false;
    const cut = recentFrom();
    messages = messages.map((m, i) => {
      if (m.role === 'assistant' && typeof m.content !== 'string' && i < cut) {
        const content = (m.content as Part[]).filter((p) => p.type !== 'reasoning');
        if (content.length !== m.content.length) {
          touched = true;
          return { ...m, content } as ModelMessage;
        }
      }
      if (m.role === 'tool') {
        const content = m.content.map((p) => {
          if (p.type !== 'tool-result') return p;
          const text = JSON.stringify(p.output);
          if (text.length <= maxToolResultChars) return p;
          touched = true;
          return { ...p, output: { type: 'text' as const, value: `${text.slice(0, maxToolResultChars)}… [cut ${text.length - maxToolResultChars} chars]` } };
        });
        return { ...m, content } as ModelMessage;
      }
      return m;
    });
    if (touched) steps.push('microcompact');
  }

  // 4. Autocompact (LLM) or hard trim, at a user-message boundary so no tool call loses its result.
  if (over() || (force && steps.length === 0)) {
    const cut = userBoundaryBefore(messages, recentFrom());
    if (cut > 0) {
      const older = messages.slice(0, cut);
      let summary: string;
      if (summarizer) {
        const { generateText } = await loadAi();
        const { text } = await generateText({
          model: summarizer,
          instructions: 'Summarise this conversation between a user and a finance agent for the agent itself. Keep: the user\'s goals, decisions, stated preferences, numbers, assets, open questions, pending confirmations, and what tools returned that still matters. Drop chit-chat. Plain bullet points, at most 300 words.',
          prompt: older.map(renderForSummary).join('\n'),
          ...(options.signal ? { abortSignal: options.signal } : {}),
        });
        summary = text.trim();
        steps.push('autocompact');
      } else {
        summary = `${older.length} earlier message(s) were trimmed to fit the context window.`;
        steps.push('hard-trim');
      }
      let note = `${COMPACTION_MARKER}\n${summary}`;
      if (reinject && query.trim() !== '') {
        const recalled = await reinject(query, reinjectTopN);
        if (recalled.length > 0) {
          note += `\n\nRelevant memories:\n${recalled.map((r) => `- ${r}`).join('\n')}`;
          steps.push('reinject');
        }
      }
      messages = [{ role: 'user', content: note }, ...messages.slice(cut)];
    }
  }
  const afterTokens = estimateTokens(messages);
  return { messages, changed: steps.length > 0, beforeTokens, afterTokens, steps };
}

function isSummaryMessage(m: ModelMessage): boolean {
  return m.role === 'user' && typeof m.content === 'string' && m.content.startsWith(COMPACTION_MARKER);
}

function isCollapsed(output: unknown): boolean {
  const o = output as { type?: string; value?: { collapsed?: boolean } };
  return o?.type === 'json' && o.value?.collapsed === true;
}

function summarizeOutput(output: unknown): string {
  const o = output as { type?: string; value?: unknown };
  const value = o?.value as { ok?: boolean; code?: string; error?: string } | undefined;
  if (value && typeof value === 'object' && 'ok' in value) {
    return value.ok ? `ok: ${JSON.stringify((value as { data?: unknown }).data).slice(0, 160)}` : `error ${value.code ?? ''}: ${(value.error ?? '').slice(0, 120)}`;
  }
  return JSON.stringify(o?.value ?? o).slice(0, 160);
}

function findLastIndex<T>(list: readonly T[], pred: (v: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i--) if (pred(list[i]!)) return i;
  return -1;
}

/** The largest index ≤ `limit` where a user message starts (0 when none). */
function userBoundaryBefore(messages: readonly ModelMessage[], limit: number): number {
  for (let i = Math.min(limit, messages.length - 1); i > 0; i--) if (messages[i]!.role === 'user') return i;
  return 0;
}

function renderForSummary(m: ModelMessage): string {
  if (typeof m.content === 'string') return `${m.role}: ${m.content}`;
  const parts = (m.content as Part[]).map((p) => {
    if (p.type === 'text') return String(p.text);
    if (p.type === 'tool-call') return `[called ${String(p.toolName)} ${JSON.stringify(p.input)}]`;
    if (p.type === 'tool-result') return `[${String(p.toolName)} → ${summarizeOutput(p.output)}]`;
    return '';
  });
  return `${m.role}: ${parts.filter(Boolean).join(' ')}`;
}
