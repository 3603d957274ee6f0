/**
 * How the REPL shows a turn: streamed text as markdown (styles, not `**`), one readable line per tool call and
 * result (the finance pack's own words for orders, prices, fills; the JSON on request with `/json`), approvals
 * that say what will happen, errors (the "no model configured" help printed once per turn).
 */
import { type AgentEvent, findArtifactUris, type PendingApproval, type ToolEnvelope } from '@minara/agent';
import { createMarkdownLineRenderer, safeCut, stripControl } from './markdown-terminal';

/** The finance pack's wording (`@minara/agent/finance`), loaded after the prompt is up: start-up does not pay for it. */
type FinanceWords = Pick<typeof import('@minara/agent/finance'), 'describeOrder' | 'describeToolResult'>;
let words: FinanceWords | undefined;

/** Load the words for orders and finance results (once). Until then calls and results show as compact JSON. */
export async function loadFinanceWords(): Promise<void> {
  words ??= await import('@minara/agent/finance');
}
const describeOrder: FinanceWords['describeOrder'] = (o) => words?.describeOrder(o);
const describeToolResult: FinanceWords['describeToolResult'] = (o) => words?.describeToolResult(o);

/** Longest JSON shown for a tool's input. */
export const MAX_INPUT_CHARS = 120;
/** Longest JSON shown for a tool's result. */
export const MAX_RESULT_CHARS = 160;

/** Cut `text` to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ');
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** Compact JSON for one line (never throws). */
export function compactJson(value: unknown, max: number): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return truncate(text, max);
}

/** ANSI styling; identity functions when colour is off. */
export interface Style {
  dim(s: string): string;
  bold(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
}

export function createStyle(enabled: boolean): Style {
  const wrap = (open: number, close: number) => (s: string) => (enabled ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return { dim: wrap(2, 22), bold: wrap(1, 22), red: wrap(31, 39), green: wrap(32, 39), yellow: wrap(33, 39) };
}

/** How much of a call and its result to show: `json` adds the whole JSON under each line (`/json`). */
export interface FormatOptions {
  readonly json?: boolean | undefined;
}

const fullJson = (value: unknown) => {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
};

/** One line for a tool call: `  ↳ buy_token: Buy $50.00 of ETH` for an order, `  ↳ get_price {"symbol":"BTC"}` otherwise. */
export function formatToolCall(toolName: string, input: unknown, options: FormatOptions = {}): string {
  const words = describeOrder({ toolName, input });
  const line = words ? `  ↳ ${toolName}: ${words}` : `  ↳ ${toolName} ${compactJson(input ?? {}, MAX_INPUT_CHARS)}`;
  return options.json && words ? `${line}\n    ${fullJson(input ?? {})}` : line;
}

/**
 * One line for a tool result: `  ✓ get_price → BTC $97,250` when the finance pack can say it in words, else the
 * compact JSON; `  ✗ buy_token → CODE: message` for a failure. With `json`, the whole JSON follows on the next line.
 */
export function formatToolResult(toolName: string, output: ToolEnvelope, options: FormatOptions & { input?: unknown } = {}): string {
  if (!output.ok) return `  ✗ ${toolName} → ${truncate(`${output.code}: ${output.error}`, MAX_RESULT_CHARS)}`;
  const words = describeToolResult({ toolName, data: output.data, input: options.input });
  if (!words) return `  ✓ ${toolName} → ${options.json ? fullJson(output.data) : compactJson(output.data, MAX_RESULT_CHARS)}`;
  return `  ✓ ${toolName} → ${words}${options.json ? `\n    ${fullJson(output.data)}` : ''}`;
}

/** One line for a blocked call: `  ⛔ transfer_token blocked (MANUAL_ONLY_AUTONOMOUS): reason`. */
export function formatBlocked(toolName: string, code: string, reason: string): string {
  return `  ⛔ ${toolName} blocked (${code}): ${truncate(reason, MAX_RESULT_CHARS)}`;
}

/**
 * The lines shown before asking `Approve? [y/N]`: what will happen in words and numbers (`describeOrder` over
 * the input and, when the caller has it, the call's preview), why it asks, and the input JSON only when no
 * sentence could be made or with `/json`:
 *
 * ```
 *   ⏸ Buy $50.00 of ETH at ~$3,012, fee $0.30, slippage ~0.02% (max 0.5%).
 *     buy_token needs your approval (apr_…): "buy_token" needs your confirmation the first time in this session.
 * ```
 */
export function formatApproval(
  a: Pick<PendingApproval, 'toolName' | 'input' | 'reason' | 'approvalId' | 'provenance'> & { readonly grantLeftTodayUsd?: number | undefined },
  options: FormatOptions & { preview?: unknown; refused?: string | undefined } = {},
): string {
  const words = describeOrder({ toolName: a.toolName, input: a.input, ...(options.preview !== undefined ? { preview: options.preview } : {}) });
  // The provenance gets its own lines below; the reason's copy of it is cut here.
  const reason = a.provenance ? a.reason.replace(/ \(proposed after reading: [\s\S]*\)$/u, '') : a.reason;
  const lines = words
    ? [`  ⏸ ${words}.`, `    ${a.toolName} needs your approval (${a.approvalId}): ${truncate(reason, MAX_RESULT_CHARS)}`]
    : [`  ⏸ ${a.toolName} needs your approval (${a.approvalId})`, `    reason: ${truncate(reason, MAX_RESULT_CHARS)}`];
  if (a.provenance) {
    lines.push(`    ⚠ proposed after reading: ${truncate(a.provenance.untrustedSources.join(', '), MAX_RESULT_CHARS)}`);
    if (a.provenance.passage) lines.push(`      it read: "${truncate(a.provenance.passage, 160)}"`);
  }
  if (options.refused) lines.push(`    ⚠ the safety checks would refuse this now: ${truncate(options.refused, MAX_RESULT_CHARS)}`);
  const previewLeft = (options.preview as { grantLeftTodayUsd?: unknown } | null | undefined)?.grantLeftTodayUsd;
  const left = typeof previewLeft === 'number' ? previewLeft : a.grantLeftTodayUsd;
  if (left !== undefined) lines.push(`    grant left today: $${left.toFixed(2)} (what your grant for autonomous runs still allows, UTC day)`);
  if (!words || options.json) lines.push(`    input:  ${options.json ? fullJson(a.input) : compactJson(a.input, MAX_INPUT_CHARS)}`);
  return lines.join('\n');
}

/** A clarifying question: the question, then numbered choices (the REPL takes a number as the choice). */
export function formatClarification(q: { question: string; choices: ReadonlyArray<{ label: string }>; allowFreeText: boolean }): string {
  return [
    `  ? ${q.question}`,
    ...q.choices.map((c, i) => `    ${i + 1}. ${c.label}`),
    q.choices.length > 0 ? `    (answer with a number${q.allowFreeText ? ' or in your own words' : ''})` : '',
  ].filter((l) => l !== '').join('\n');
}

/** `tool_invoke({ name, args })` reaches a tool outside the turn's list; show it as that tool. */
function unwrapInvoke(toolName: string, input: unknown): { name: string; args: unknown } | undefined {
  if (toolName !== 'tool_invoke' || typeof input !== 'object' || input === null) return undefined;
  const { name, args } = input as { name?: unknown; args?: unknown };
  return typeof name === 'string' ? { name, args: args ?? {} } : undefined;
}

/** Renders the events of turns to a writer, keeping track of whether the cursor is mid-line. */
export interface EventRenderer {
  /** Show one event. */
  render(event: AgentEvent): void;
  /** Write a full line (a newline is inserted first when streamed text left the cursor mid-line). */
  line(text: string): void;
  /** End a streamed answer with a newline if needed. */
  finish(): void;
  /** Whether this turn printed the "no model configured" help. */
  readonly sawModelHelp: boolean;
  /** Forget per-turn state. */
  reset(): void;
}

/** Lines naming where each artifact of an answer can be opened: `  ▸ chart://x-… → /data/artifacts/x-…/index.html`. */
export function formatArtifactPaths(text: string, pathFor: (id: string) => string): string[] {
  return findArtifactUris(text).map((r) => `  ▸ ${r.uri} → ${pathFor(r.id)}`);
}

/** Options of {@link createEventRenderer}. */
export interface EventRendererOptions {
  write: (s: string) => void;
  style?: Style | undefined;
  /** Where an artifact's viewer is written (`index.html` in the materializer's folder); artifact URIs in answers are printed with it. */
  artifactPath?: ((id: string) => string) | undefined;
  /** Show answers' markdown as ANSI styles (true) or as plain text without the markup (false). @default false */
  color?: boolean | undefined;
  /** Whether tool calls and results also show their whole JSON (the REPL's `/json` toggle). @default () => false */
  json?: (() => boolean) | undefined;
  /** Approval requests are shown by the caller when it asks (with the preview); the renderer prints nothing for them. @default false */
  approvalsAskedLater?: boolean | undefined;
  /** Whether the engine's own lines (which skills a turn activated) are shown (the REPL's `--verbose` / `/verbose`). @default () => true */
  verbose?: (() => boolean) | undefined;
}

export function createEventRenderer(options: EventRendererOptions): EventRenderer {
  const out = createTextStream(options.write, createMarkdownLineRenderer({ color: options.color ?? false }));
  const state: RenderState = {
    options,
    style: options.style ?? createStyle(false),
    json: options.json ?? (() => false),
    verbose: options.verbose ?? (() => true),
    out,
    sawModelHelp: false,
    invoked: new Map(),
    inputs: new Map(),
  };
  return {
    get sawModelHelp() {
      return state.sawModelHelp;
    },
    reset() {
      state.sawModelHelp = false;
      state.invoked.clear();
      state.inputs.clear();
      out.reset();
    },
    line: out.line,
    finish: out.finish,
    render: (event) => renderEvent(state, event),
  };
}

/** The streamed answer and whole lines, keeping track of whether the cursor is mid-line. */
interface TextStream {
  /** Write complete lines of the streamed answer (rendered), and the start of the current one when it is safe to. */
  stream(delta: string): void;
  /** The rest of the streamed text, at the end of a text run. */
  flush(): void;
  /** Write a full line (a newline first when the cursor is mid-line). */
  line(text: string): void;
  /** End a streamed answer with a newline if needed. */
  finish(): void;
  /** Whether the cursor is mid-line. */
  readonly midLine: boolean;
  /** Forget the markdown state of the last answer. */
  reset(): void;
}

function createTextStream(write: (s: string) => void, markdown: ReturnType<typeof createMarkdownLineRenderer>): TextStream {
  let midLine = false;
  /** Streamed text of the current line not written yet, and whether part of that line is already on screen. */
  let partial = '';
  let lineStarted = false;
  const stream = (delta: string) => {
    partial += stripControl(delta);
    let nl: number;
    while ((nl = partial.indexOf('\n')) >= 0) {
      const text = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      const rendered = lineStarted ? markdown.inline(text) : markdown.line(text);
      lineStarted = false;
      if (rendered !== undefined) write(`${rendered}\n`);
      midLine = false;
    }
    if (partial !== '' && !markdown.inFence) {
      const cut = safeCut(partial, lineStarted);
      if (cut > 0) {
        write(markdown.inline(partial.slice(0, cut)));
        partial = partial.slice(cut);
        lineStarted = true;
        midLine = true;
      }
    }
  };
  const flush = () => {
    if (partial === '') return;
    const rendered = lineStarted ? markdown.inline(partial) : markdown.line(partial);
    partial = '';
    lineStarted = false;
    if (rendered !== undefined && rendered !== '') {
      write(rendered);
      midLine = true;
    }
  };
  return {
    stream,
    flush,
    line(text) {
      flush();
      if (midLine) write('\n');
      midLine = false;
      write(`${text}\n`);
    },
    finish() {
      flush();
      if (midLine) write('\n');
      midLine = false;
    },
    get midLine() {
      return midLine;
    },
    reset: () => markdown.reset(),
  };
}

interface RenderState {
  readonly options: EventRendererOptions;
  readonly style: Style;
  readonly json: () => boolean;
  readonly verbose: () => boolean;
  readonly out: TextStream;
  sawModelHelp: boolean;
  /** `tool_invoke` calls, shown as the tool they reach: toolCallId → inner tool name. */
  readonly invoked: Map<string, string>;
  /** Inputs of this turn's calls, so a result (a preview) can be described with them. */
  readonly inputs: Map<string, unknown>;
}

/** Show one event. */
function renderEvent(state: RenderState, event: AgentEvent): void {
  const { style, json, out, invoked, inputs } = state;
  const line = out.line;
  switch (event.type) {
    case 'text-delta':
      if (event.delta !== '') out.stream(event.delta);
      return;
    case 'tool-call': {
      const inner = unwrapInvoke(event.toolName, event.input);
      if (inner) invoked.set(event.toolCallId, inner.name);
      inputs.set(event.toolCallId, inner ? inner.args : event.input);
      line(style.dim(inner ? formatToolCall(inner.name, inner.args, { json: json() }) : formatToolCall(event.toolName, event.input, { json: json() })));
      return;
    }
    case 'tool-result': {
      const text = formatToolResult(invoked.get(event.toolCallId) ?? event.toolName, event.output, { json: json(), input: inputs.get(event.toolCallId) });
      // An APPROVAL_REQUIRED result is followed by the approval-request event, which says it better.
      if (!event.output.ok && event.output.code === 'APPROVAL_REQUIRED') return;
      line(event.output.ok ? style.dim(text) : style.red(text));
      return;
    }
    case 'tool-blocked':
      line(style.red(formatBlocked(invoked.get(event.toolCallId) ?? event.toolName, event.code, event.reason)));
      return;
    case 'approval-request':
      // The REPL asks for it after the turn, with the call's preview in numbers (cli/repl.ts); a host
      // without that step gets the sentence from the arguments here.
      if (state.options.approvalsAskedLater) return;
      line(style.yellow(formatApproval(event, { json: json() })));
      return;
    case 'clarification-request':
      line(style.yellow(formatClarification(event)));
      return;
    case 'skill-activated':
      if (event.skillIds.length > 0 && state.verbose()) line(style.dim(`  ⚙ skills: ${event.skillIds.join(', ')} (${event.via})`));
      return;
    case 'input-flagged':
      line(style.yellow(event.source
        ? `  ⚠ instruction-like text from ${truncate(event.source, 80)} (untrusted, not followed): "${truncate(event.excerpt, 120)}"`
        : `  ⚠ ${event.kind.replace('_', ' ')} pattern in the ${event.target}: ${truncate(event.excerpt, 80)}`));
      return;
    case 'compaction':
      line(style.dim(`  ⋯ context compacted: ${event.beforeTokens} → ${event.afterTokens} tokens`));
      return;
    case 'error':
      if (event.code === 'MODEL_NOT_CONFIGURED') {
        if (state.sawModelHelp) return;
        state.sawModelHelp = true;
        line(style.yellow(event.message));
        return;
      }
      line(style.red(`  ! ${event.code}: ${event.message}`));
      return;
    case 'turn-end':
      renderTurnEnd(state, event);
      return;
    case 'subagent':
      renderSubagent(state, event.event);
      return;
    case 'turn-start':
    case 'step-end':
      return;
  }
}

const STOP_LINES: Readonly<Record<string, string>> = {
  'max-steps': '  (stopped: step limit reached)',
  'token-budget': '  (stopped: token budget reached)',
  'repeated-blocked-call': '  (stopped: the same blocked call was repeated)',
};

function renderTurnEnd(state: RenderState, event: Extract<AgentEvent, { type: 'turn-end' }>): void {
  const { out, style, options } = state;
  out.flush();
  if (out.midLine) out.line('');
  if (options.artifactPath && event.text) for (const l of formatArtifactPaths(event.text, options.artifactPath)) out.line(style.dim(l));
  const stop = event.stopReason !== undefined && Object.hasOwn(STOP_LINES, event.stopReason) ? STOP_LINES[event.stopReason] : undefined;
  if (stop) out.line(style.dim(stop));
}

/** A delegated sub-agent's calls and answer, indented under the delegate call. */
function renderSubagent(state: RenderState, e: Extract<AgentEvent, { type: 'subagent' }>['event']): void {
  const { out, style } = state;
  if (e.type === 'tool-call') out.line(style.dim(`    ↳ [sub] ${formatToolCall(e.toolName, e.input).trim().replace(/^↳\s*/, '')}`));
  else if (e.type === 'tool-blocked') out.line(style.red(`    ✗ [sub] ${e.toolName}: ${e.code}`));
  else if (e.type === 'turn-end' && e.text) out.line(style.dim(`    [sub] ${truncate(e.text.replace(/\s+/g, ' '), 160)}`));
}
