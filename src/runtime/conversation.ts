import { jsonTextLength } from '../util/json-length';
import type { ModelMessage, ToolModelMessage } from 'ai';
import type { NewMessage, Storage } from '../storage/types';
import type { ToolEnvelope } from '../tools/envelope';

/** Load a session's messages as AI SDK `ModelMessage`s, in order. */
export async function loadMessages(storage: Storage, sessionId: string): Promise<ModelMessage[]> {
  const rows = await storage.conversations.listMessages(sessionId);
  return rows.map((r) => JSON.parse(r.json) as ModelMessage);
}

/** Messages ready to append, stamped with the turn id. */
export function toNewMessages(messages: readonly ModelMessage[], turnId: string, now: Date): NewMessage[] {
  const at = now.toISOString();
  return messages.map((m) => ({ role: m.role, json: JSON.stringify(m), turnId, createdAt: at }));
}

/**
 * The messages as a model call sends them: consecutive user messages (a turn that was cancelled or failed
 * before any answer leaves its message unanswered) joined into one, since strict chat templates reject two
 * user messages in a row. The stored transcript keeps them as they were.
 */
export function mergeConsecutiveUserMessages(messages: readonly ModelMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of messages) {
    const last = out.at(-1);
    if (m.role === 'user' && last?.role === 'user') {
      const parts = (c: typeof m.content) => (typeof c === 'string' ? [{ type: 'text' as const, text: c }] : c);
      const content = [...parts(last.content), { type: 'text' as const, text: '\n\n' }, ...parts(m.content)];
      const textOnly = content.every((p) => p.type === 'text');
      out[out.length - 1] = textOnly
        ? { role: 'user', content: content.map((p) => (p as { text: string }).text).join('') }
        : { role: 'user', content };
      continue;
    }
    out.push(m);
  }
  return out;
}

/** The envelope a repaired or interrupted tool call reports to the model. */
export const INTERRUPTED_ENVELOPE: ToolEnvelope = Object.freeze({
  ok: false,
  error: 'This tool call was interrupted before it returned a result; it may not have run. Check state before retrying.',
  code: 'TURN_ABORTED',
  retryable: false,
});

/** Tool-call ids that already have a result in `messages`. */
export function answeredToolCallIds(messages: readonly ModelMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) if (m.role === 'tool') for (const part of m.content) if (part.type === 'tool-result') ids.add(part.toolCallId);
  return ids;
}

/** A tool result's `output` for a transcript: the envelope as a JSON value (a plain copy). */
export function jsonToolOutput(envelope: ToolEnvelope): { type: 'json'; value: never } {
  return { type: 'json', value: JSON.parse(JSON.stringify(envelope)) as never };
}

/**
 * Close every assistant tool call that has no tool result (a crash or an abort mid-turn leaves them), so
 * the next model call is valid. Returns the repaired list and the ids that were closed.
 */
export function repairOrphanedToolCalls(messages: readonly ModelMessage[]): { messages: ModelMessage[]; repaired: string[] } {
  const answered = answeredToolCallIds(messages);
  const out: ModelMessage[] = [];
  const repaired: string[] = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    out.push(m);
    if (m.role !== 'assistant' || typeof m.content === 'string') continue;
    const missing = m.content.filter((p) => p.type === 'tool-call' && !answered.has(p.toolCallId)) as Array<{ toolCallId: string; toolName: string }>;
    if (missing.length === 0) continue;
    const results = missing.map((p) => ({
      type: 'tool-result' as const,
      toolCallId: p.toolCallId,
      toolName: p.toolName,
      output: jsonToolOutput(INTERRUPTED_ENVELOPE),
    }));
    const next = messages[i + 1];
    if (next?.role === 'tool') {
      // Merge into the following tool message.
      out.push({ ...next, content: [...next.content, ...results] } as ToolModelMessage);
      i++;
    } else {
      out.push({ role: 'tool', content: results });
    }
    for (const p of missing) {
      repaired.push(p.toolCallId);
      answered.add(p.toolCallId);
    }
  }
  return { messages: out, repaired };
}

/**
 * Replace the result of one tool call: an approval outcome replaces its APPROVAL_REQUIRED result. The
 * result is found by its call id or by the approval id it carries (a call made through `tool_invoke` has
 * the outer call id in the transcript and the inner one on the approval).
 */
export function replaceToolResult(
  messages: readonly ModelMessage[],
  match: { toolCallId: string; approvalId?: string | undefined },
  envelope: ToolEnvelope,
): { messages: ModelMessage[]; found: boolean } {
  let found = false;
  const carries = (output: unknown) =>
    match.approvalId !== undefined && (output as { value?: { approval?: { approvalId?: string } } } | undefined)?.value?.approval?.approvalId === match.approvalId;
  const out = messages.map((m) => {
    if (m.role !== 'tool' || found) return m;
    let touched = false;
    const content = m.content.map((p) => {
      if (!touched && p.type === 'tool-result' && (p.toolCallId === match.toolCallId || carries(p.output))) {
        touched = true;
        return { ...p, output: jsonToolOutput(envelope) };
      }
      return p;
    });
    if (!touched) return m;
    found = true;
    return { ...m, content } as ToolModelMessage;
  });
  return { messages: out, found };
}

/**
 * A rough, deterministic token estimate: characters of the JSON / 4 (counted without building the text; the
 * system prompt's long blocks are remembered by content, so the estimate at every model call is cheap).
 */
export function estimateTokens(value: unknown): number {
  return Math.ceil(jsonTextLength(value) / 4);
}
