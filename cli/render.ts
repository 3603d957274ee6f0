/**
 * How the REPL shows a turn: streamed text inline, one compact line per tool call and result, approvals
 * with their input and reason, errors (the "no model configured" help printed once per turn).
 */
import { type AgentEvent, findArtifactUris, type PendingApproval, type ToolEnvelope } from '@minara/agent';

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

/** One line for a tool call: `  ↳ get_price {"symbol":"BTC"}`. */
export function formatToolCall(toolName: string, input: unknown): string {
  return `  ↳ ${toolName} ${compactJson(input ?? {}, MAX_INPUT_CHARS)}`;
}

/** One line for a tool result: `  ✓ get_price → {…}` or `  ✗ buy_token → CODE: message`. */
export function formatToolResult(toolName: string, output: ToolEnvelope): string {
  if (output.ok) return `  ✓ ${toolName} → ${compactJson(output.data, MAX_RESULT_CHARS)}`;
  return `  ✗ ${toolName} → ${truncate(`${output.code}: ${output.error}`, MAX_RESULT_CHARS)}`;
}

/** One line for a blocked call: `  ⛔ transfer_token blocked (MANUAL_ONLY_AUTONOMOUS): reason`. */
export function formatBlocked(toolName: string, code: string, reason: string): string {
  return `  ⛔ ${toolName} blocked (${code}): ${truncate(reason, MAX_RESULT_CHARS)}`;
}

/** The lines shown before asking `Approve? [y/N]`. */
export function formatApproval(a: Pick<PendingApproval, 'toolName' | 'input' | 'reason' | 'approvalId'>): string {
  return [
    `  ⏸ ${a.toolName} needs your approval (${a.approvalId})`,
    `    input:  ${compactJson(a.input, MAX_INPUT_CHARS)}`,
    `    reason: ${truncate(a.reason, MAX_RESULT_CHARS)}`,
  ].join('\n');
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

export function createEventRenderer(options: {
  write: (s: string) => void;
  style?: Style | undefined;
  /** Where an artifact's viewer is written (`index.html` in the materializer's folder); artifact URIs in answers are printed with it. */
  artifactPath?: ((id: string) => string) | undefined;
}): EventRenderer {
  const { write } = options;
  const style = options.style ?? createStyle(false);
  let midLine = false;
  let sawModelHelp = false;
  /** `tool_invoke` calls, shown as the tool they reach: toolCallId → inner tool name. */
  const invoked = new Map<string, string>();

  const line = (text: string) => {
    if (midLine) write('\n');
    midLine = false;
    write(`${text}\n`);
  };

  return {
    get sawModelHelp() {
      return sawModelHelp;
    },
    reset() {
      sawModelHelp = false;
      invoked.clear();
    },
    line,
    finish() {
      if (midLine) write('\n');
      midLine = false;
    },
    render(event) {
      switch (event.type) {
        case 'text-delta':
          if (event.delta === '') return;
          write(event.delta);
          midLine = !event.delta.endsWith('\n');
          return;
        case 'tool-call': {
          const inner = unwrapInvoke(event.toolName, event.input);
          if (inner) invoked.set(event.toolCallId, inner.name);
          line(style.dim(inner ? formatToolCall(inner.name, inner.args) : formatToolCall(event.toolName, event.input)));
          return;
        }
        case 'tool-result': {
          const text = formatToolResult(invoked.get(event.toolCallId) ?? event.toolName, event.output);
          // An APPROVAL_REQUIRED result is followed by the approval-request event, which says it better.
          if (!event.output.ok && event.output.code === 'APPROVAL_REQUIRED') return;
          line(event.output.ok ? style.dim(text) : style.red(text));
          return;
        }
        case 'tool-blocked':
          line(style.red(formatBlocked(invoked.get(event.toolCallId) ?? event.toolName, event.code, event.reason)));
          return;
        case 'approval-request':
          line(style.yellow(formatApproval(event)));
          return;
        case 'clarification-request':
          line(style.yellow(formatClarification(event)));
          return;
        case 'skill-activated':
          if (event.skillIds.length > 0) line(style.dim(`  ⚙ skills: ${event.skillIds.join(', ')} (${event.via})`));
          return;
        case 'input-flagged':
          line(style.yellow(`  ⚠ ${event.kind.replace('_', ' ')} pattern in the ${event.target}: ${truncate(event.excerpt, 80)}`));
          return;
        case 'compaction':
          line(style.dim(`  ⋯ context compacted: ${event.beforeTokens} → ${event.afterTokens} tokens`));
          return;
        case 'error':
          if (event.code === 'MODEL_NOT_CONFIGURED') {
            if (sawModelHelp) return;
            sawModelHelp = true;
            line(style.yellow(event.message));
            return;
          }
          line(style.red(`  ! ${event.code}: ${event.message}`));
          return;
        case 'turn-end':
          if (midLine) line('');
          if (options.artifactPath && event.text) for (const l of formatArtifactPaths(event.text, options.artifactPath)) line(style.dim(l));
          if (event.stopReason === 'max-steps') line(style.dim('  (stopped: step limit reached)'));
          else if (event.stopReason === 'token-budget') line(style.dim('  (stopped: token budget reached)'));
          else if (event.stopReason === 'repeated-blocked-call') line(style.dim('  (stopped: the same blocked call was repeated)'));
          return;
        case 'subagent': {
          // A delegated sub-agent's calls and answer, indented under the delegate call.
          const e = event.event;
          if (e.type === 'tool-call') line(style.dim(`    ↳ [sub] ${formatToolCall(e.toolName, e.input).trim().replace(/^↳\s*/, '')}`));
          else if (e.type === 'tool-blocked') line(style.red(`    ✗ [sub] ${e.toolName}: ${e.code}`));
          else if (e.type === 'turn-end' && e.text) line(style.dim(`    [sub] ${truncate(e.text.replace(/\s+/g, ' '), 160)}`));
          return;
        }
        case 'turn-start':
        case 'step-end':
          return;
      }
    },
  };
}
