import { randomBytes } from 'node:crypto';
import { hostname as osHostname } from 'node:os';
import type { ModelMessage, ToolModelMessage } from 'ai';
import { parseTurnProvenance, type TurnProvenance } from '../safety/untrusted';
import type { Storage } from '../storage/types';
import type { ToolEnvelope } from '../tools/envelope';
import type { Logger } from '../util/logger';
import { defaultIsPidAlive } from '../workspace/file-lock';
import { answeredToolCallIds, jsonToolOutput } from './conversation';

/**
 * The call journal: each tool call that returned during a turn is kept as it returns, before the turn ends and
 * appends its messages. If an abort ends a step after its tools ran, the executed calls and their results are
 * still known: the turn end adds the ones its messages lack. A call of a tool with side effects is also written
 * to storage metadata as it returns (with every call kept so far), so when the process dies mid-turn (SIGKILL,
 * OOM, power) the next turn of the session (in any process) restores the calls the dead process left, and the
 * model never repeats a side effect because it forgot it already happened. A call of a tool declared
 * side-effect free (`sideEffects: false`) is kept in memory only: repeating a read is harmless, and a turn of
 * reads then writes no journal at all (it used to rewrite the whole record, results included, at each call).
 */

/** One call that returned. */
export interface JournaledCall {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
  readonly output: ToolEnvelope;
}

interface JournalRecord {
  readonly turnId: string;
  readonly pid: number;
  /** Random per process: a restarted process can get the dead one's pid (PID 1 in a container). */
  readonly process: string;
  readonly host: string;
  readonly at: string;
  readonly calls: readonly JournaledCall[];
  /** What the turn had read from outside when the record was written: restored with the calls. */
  readonly provenance?: TurnProvenance | undefined;
}

/** A journal left by a live process on another host is taken over only after this long. */
export const JOURNAL_TAKEOVER_MS = 15 * 60_000;

const PROCESS_TOKEN = randomBytes(8).toString('hex');
/** Read once per process: a journal record is written per tool call (and `hostname()` is a system call). */
const HOST = osHostname();

const key = (sessionId: string) => `runtime:calls-in-flight:${sessionId}`;

/** The calls as an assistant message with the calls and a tool message with their results. */
function callMessages(calls: readonly JournaledCall[]): ModelMessage[] {
  if (calls.length === 0) return [];
  return [
    { role: 'assistant', content: calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.toolCallId, toolName: c.toolName, input: c.input })) },
    {
      role: 'tool',
      content: calls.map((c) => ({
        type: 'tool-result' as const,
        toolCallId: c.toolCallId,
        toolName: c.toolName,
        output: jsonToolOutput(c.output),
      })),
    } as ToolModelMessage,
  ];
}

/** Options of {@link createCallJournal}. */
export interface CallJournalOptions {
  /** True for a tool declared side-effect free: its calls are kept in memory, not written. @default every tool is written */
  readonly sideEffectFree?: ((toolName: string) => boolean) | undefined;
  /**
   * What the turn has read from outside so far (`turnProvenance` of its context), written with each record: a turn
   * that restores the calls of a dead one also knows that their results came from untrusted sources.
   */
  readonly provenance?: (() => TurnProvenance | undefined) | undefined;
}

/** The journal of one running turn. */
export function createCallJournal(storage: Storage, sessionId: string, turnId: string, logger: Pick<Logger, 'error'>, options: CallJournalOptions = {}) {
  const calls: JournaledCall[] = [];
  /** This turn has written (or tried to write) a record: the turn end removes it. */
  let written = false;
  const record = (): string => {
    const provenance = options.provenance?.();
    return JSON.stringify({ turnId, pid: process.pid, process: PROCESS_TOKEN, host: HOST, at: new Date().toISOString(), calls, ...(provenance ? { provenance } : {}) } satisfies JournalRecord);
  };
  return {
    /**
     * Keep one returned call; a call with side effects is written with every call kept so far (awaited before the
     * stream moves on). A failed write is logged, not thrown.
     */
    async add(call: JournaledCall): Promise<void> {
      // A batch that rolled back is written again one by one: the same call is recorded once.
      const i = calls.findIndex((c) => c.toolCallId === call.toolCallId);
      if (i >= 0) calls[i] = call;
      else calls.push(call);
      if (options.sideEffectFree?.(call.toolName) === true) return;
      try {
        written = true;
        await storage.meta.set(key(sessionId), record());
      } catch (error) {
        logger.error('could not journal a tool call', { sessionId, toolName: call.toolName, error: error instanceof Error ? error.message : String(error) });
      }
    },
    /** Messages for the calls that returned but are not answered in `messages` (a step cut short). */
    missingFrom(messages: readonly ModelMessage[]): ModelMessage[] {
      const answered = answeredToolCallIds(messages);
      return callMessages(calls.filter((c) => !answered.has(c.toolCallId)));
    },
    /** Forget the journal once the turn's messages are stored. */
    async clear(): Promise<void> {
      if (!written) return;
      try {
        await storage.meta.delete(key(sessionId));
      } catch (error) {
        logger.error('could not clear the tool-call journal', { sessionId, error: error instanceof Error ? error.message : String(error) });
      }
    },
  };
}

/** What {@link restoreJournaledCalls} took over from a dead turn. */
export interface RestoredCalls {
  /** The calls the transcript lacks, as an assistant message and a tool message (none when nothing is missing). */
  readonly messages: ModelMessage[];
  /** Their tool call ids. */
  readonly restored: string[];
  /** What the dead turn had read from outside when it last wrote its journal, or undefined. */
  readonly provenance?: TurnProvenance | undefined;
}

/** The session's stored journal as written (undefined: none), for {@link restoreJournaledCalls} to read ahead. */
export function readJournal(storage: Storage, sessionId: string): Promise<string | undefined> {
  return storage.meta.get(key(sessionId));
}

/**
 * Before a turn loads its history: a journal left by a turn whose process died is turned into transcript
 * messages (calls the transcript already answers are skipped) and removed. A journal of a live process on
 * this host is left alone (that turn is still running); one from another host is taken over after
 * {@link JOURNAL_TAKEOVER_MS}. Returns the ids restored and the dead turn's provenance. `journal`: the row as
 * {@link readJournal} read it ahead (else it is read now).
 */
export async function restoreJournaledCalls(storage: Storage, sessionId: string, history: readonly ModelMessage[], now: Date, journal?: Promise<string | undefined>): Promise<RestoredCalls> {
  const raw = await (journal ?? readJournal(storage, sessionId));
  if (raw === undefined) return { messages: [], restored: [] };
  let record: JournalRecord;
  try {
    record = JSON.parse(raw) as JournalRecord;
    if (!Array.isArray(record.calls)) throw new Error('no calls');
  } catch {
    await storage.meta.delete(key(sessionId));
    return { messages: [], restored: [] };
  }
  const live =
    record.host !== HOST
      ? now.getTime() - Date.parse(record.at) < JOURNAL_TAKEOVER_MS
      : record.pid === process.pid
        ? record.process === PROCESS_TOKEN
        : defaultIsPidAlive(record.pid);
  if (live) return { messages: [], restored: [] };
  const answered = answeredToolCallIds(history);
  const missing = record.calls.filter((c) => typeof c?.toolCallId === 'string' && !answered.has(c.toolCallId));
  await storage.meta.delete(key(sessionId));
  const provenance = parseTurnProvenance(record.provenance);
  return { messages: callMessages(missing), restored: missing.map((c) => c.toolCallId), ...(provenance ? { provenance } : {}) };
}
