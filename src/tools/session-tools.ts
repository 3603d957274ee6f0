import { z } from 'zod';
import { MinaraError } from '../errors/minara-error';
import { PermissionTier } from '../safety/permission-tier';
import type { Storage } from '../storage/types';
import { defineTool } from './define-tool';
import type { ToolEntry } from './types';

/** Name of the tool that ends the turn with a question. */
export const CLARIFY_TOOL = 'clarify';

/** One answer the user can pick. */
export interface ClarificationChoice {
  /** What the user sees. */
  readonly label: string;
  /** What is sent back as the user's message when picked. @default the label */
  readonly value: string;
}

/** What `clarify` returns (and the `clarification-request` event carries): a question the UI renders as choices. */
export interface Clarification {
  readonly kind: 'clarification';
  readonly question: string;
  readonly choices: readonly ClarificationChoice[];
  /** The user may answer in their own words instead of picking. */
  readonly allowFreeText: boolean;
}

/** True when a tool result's data is a {@link Clarification} (the runtime ends the turn on one). */
export function isClarification(value: unknown): value is Clarification {
  const v = value as Partial<Clarification> | null;
  return typeof v === 'object' && v !== null && v.kind === 'clarification' && typeof v.question === 'string' && Array.isArray(v.choices);
}

/** One task of a session's list. */
export interface TodoItem {
  readonly id: number;
  readonly text: string;
  readonly status: 'pending' | 'in_progress' | 'done';
}

/** Options of {@link createSessionTools}. */
export interface SessionToolsOptions {
  /** Where task lists are kept (`meta`, one key per session). */
  readonly storage: Storage;
  /** Tasks per session at most. @default 50 */
  readonly maxTodos?: number | undefined;
}

const todoKey = (sessionId: string) => `todo:session:${sessionId}`;

/** A session's task list as stored (an empty list when none or unreadable). */
export async function readTodos(storage: Storage, sessionId: string): Promise<TodoItem[]> {
  const raw = await storage.meta.get(todoKey(sessionId));
  if (raw === undefined) return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    return Array.isArray(parsed) ? (parsed as TodoItem[]).filter((t) => Number.isInteger(t?.id) && typeof t.text === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * The session tools (tool set `session`, READ_ONLY, baseline: the model sees them on every turn):
 *
 * - `clarify({ question, choices?, allowFreeText? })` ends the turn with a question. The runtime emits a
 *   `clarification-request` event (the gateway's UI stream carries it as `data-minara-clarification-request`; the
 *   CLI prints numbered choices) and stops with `stopReason: 'clarification'`; the user's answer is the next message.
 * - `todo({ op, … })` keeps a task list for this session (`list`, `add`, `update`, `remove`, `clear`), persisted in
 *   storage under the session id the turn runs in (the model cannot name another session), so a long task can be
 *   read back after a restart or a compaction.
 */
export function createSessionTools(options: SessionToolsOptions): ToolEntry[] {
  if (typeof options?.storage?.meta?.get !== 'function') throw new MinaraError('CONFIG_INVALID', 'createSessionTools: "storage" must be a Storage.');
  const { storage, maxTodos = 50 } = options;
  const text = z.string().trim().min(1).max(300);
  const status = z.enum(['pending', 'in_progress', 'done']);

  return [
    defineTool({
      name: CLARIFY_TOOL,
      toolSet: 'session',
      description:
        'Ask the user one clarifying question and end your turn (e.g. which account, how much, which timeframe). Offer 2-6 short choices when the answers are few; ' +
        'the user picks one or types their own. Use it only when you cannot proceed sensibly without the answer; do not also answer in text.',
      inputSchema: z.object({
        question: z.string().trim().min(3).max(500),
        choices: z
          .array(z.union([z.string().trim().min(1).max(100), z.object({ label: z.string().trim().min(1).max(100), value: z.string().trim().min(1).max(300).nullish() })]))
          .max(6)
          .nullish(),
        allowFreeText: z.boolean().nullish().describe('Default true: the user may answer in their own words.'),
      }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: ({ question, choices, allowFreeText }): Clarification => {
        const list = (choices ?? []).map((c) => (typeof c === 'string' ? { label: c, value: c } : { label: c.label, value: c.value ?? c.label }));
        if (list.length === 1) throw new MinaraError('INVALID_ARGUMENT', 'choices: give at least 2 choices, or none for a free-text question');
        if (new Set(list.map((c) => c.label.toLowerCase())).size !== list.length) throw new MinaraError('INVALID_ARGUMENT', 'choices: labels must differ');
        const free = allowFreeText ?? true;
        if (list.length === 0 && !free) throw new MinaraError('INVALID_ARGUMENT', 'allowFreeText: false needs choices to pick from');
        return { kind: 'clarification', question, choices: list, allowFreeText: free };
      },
    }),
    defineTool({
      name: 'todo',
      toolSet: 'session',
      description:
        'Your task list for this conversation: plan multi-step work, mark progress, read it back later. ' +
        'op: list | add (items) | update (id, status and/or text) | remove (id) | clear. Returns the whole list.',
      inputSchema: z.object({
        op: z.enum(['list', 'add', 'update', 'remove', 'clear']),
        items: z.array(z.union([text, z.object({ text, status: status.nullish() })])).max(20).nullish(),
        id: z.number().int().positive().nullish(),
        status: status.nullish(),
        text: text.nullish(),
      }),
      permissionTier: PermissionTier.READ_ONLY,
      execute: async (input, ctx) => {
        const sessionId = ctx.call.sessionId;
        let list = await readTodos(storage, sessionId);
        const find = () => {
          if (input.id == null) throw new MinaraError('INVALID_ARGUMENT', `id: required for op "${input.op}"`);
          const i = list.findIndex((t) => t.id === input.id);
          if (i < 0) throw new MinaraError('INVALID_ARGUMENT', `id: no task ${input.id} (tasks: ${list.map((t) => t.id).join(', ') || 'none'})`);
          return i;
        };
        switch (input.op) {
          case 'list':
            break;
          case 'add': {
            if (!input.items || input.items.length === 0) throw new MinaraError('INVALID_ARGUMENT', 'items: give at least one task to add');
            if (list.length + input.items.length > maxTodos) throw new MinaraError('INVALID_ARGUMENT', `items: the list holds at most ${maxTodos} tasks (it has ${list.length}); remove done ones first`);
            let next = list.reduce((m, t) => Math.max(m, t.id), 0);
            list = [...list, ...input.items.map((it) => (typeof it === 'string' ? { id: ++next, text: it, status: 'pending' as const } : { id: ++next, text: it.text, status: it.status ?? 'pending' }))];
            break;
          }
          case 'update': {
            const i = find();
            if (input.status == null && input.text == null) throw new MinaraError('INVALID_ARGUMENT', 'status or text: give what changes');
            const t = list[i]!;
            list = list.map((x, j) => (j === i ? { id: t.id, text: input.text ?? t.text, status: input.status ?? t.status } : x));
            break;
          }
          case 'remove': {
            const i = find();
            list = list.filter((_t, j) => j !== i);
            break;
          }
          case 'clear':
            list = [];
            break;
        }
        if (input.op !== 'list') await storage.meta.set(todoKey(sessionId), JSON.stringify(list));
        const count = (s: TodoItem['status']) => list.filter((t) => t.status === s).length;
        return { todos: list, pending: count('pending'), inProgress: count('in_progress'), done: count('done') };
      },
    }),
  ];
}
