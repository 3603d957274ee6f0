import type { CallSource } from '../safety/permission-tier';
import type { Logger } from '../util/logger';
import { hasBootstrapDoneToken } from './bootstrap';
import type { JournalTurn } from './daily-log';
import type { HeartbeatInput } from './heartbeat';

/** What the runtime passes to `onTurnEnd`. */
export interface TurnEndInput {
  readonly sessionId: string;
  /** Where the turn ran (`repl`, `http`, `web`, …). */
  readonly surface: string;
  /** 1-based count of turns in this session, including this one. */
  readonly turnCount: number;
  /** Who started the turn. Sub-agent turns touch nothing; only `user` turns can finish onboarding. @default 'user' */
  readonly source?: CallSource | undefined;
  /** The final assistant text (checked for `BOOTSTRAP_DONE`, excerpted into the journal). */
  readonly replyText?: string | undefined;
  /** The operator's message (excerpted into the journal). */
  readonly userText?: string | undefined;
  /** Open loops after this turn. `undefined` keeps the heartbeat's previous list; `[]` clears it. */
  readonly openLoops?: readonly string[] | undefined;
  /** A host-written summary for the journal entry, used instead of the text excerpts. */
  readonly journalSummary?: string | undefined;
}

/** What `onTurnEnd` did. Failures of one step are logged and listed; they never throw. */
export interface TurnEndResult {
  readonly heartbeatWritten: boolean;
  /** Workspace-relative journal path appended to this turn, if any. */
  readonly journalAppended?: string;
  /** `BOOTSTRAP.md.done.<timestamp>` when this reply completed onboarding. */
  readonly bootstrapArchivedAs?: string;
  readonly errors: readonly { readonly step: 'heartbeat' | 'journal' | 'bootstrap'; readonly message: string }[];
}

/** The workspace operations the turn-end hook drives. */
export interface TurnEndOps {
  readonly heartbeatEnabled: boolean;
  readonly dailyLog: { readonly enabled: boolean; readonly interval: number };
  readonly logger: Logger;
  readonly now: () => Date;
  writeHeartbeat(input: HeartbeatInput): Promise<void>;
  appendJournal(input: { sessionId: string; surface: string; turns: readonly JournalTurn[]; summary?: string | undefined; openLoops?: readonly string[] | undefined }): Promise<string>;
  completeBootstrap(): Promise<string | undefined>;
}

const MAX_BUFFERED_SESSIONS = 1_000;

/** Create the end-of-turn hook; it buffers turns per session between journal appends. */
export function createTurnEndHook(ops: TurnEndOps): (input: TurnEndInput) => Promise<TurnEndResult> {
  const buffers = new Map<string, JournalTurn[]>();
  return async (input) => {
    const source = input.source ?? 'user';
    const errors: Array<TurnEndResult['errors'][number]> = [];
    const fail = (step: 'heartbeat' | 'journal' | 'bootstrap', error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      errors.push({ step, message });
      ops.logger.error('turn_end_step_failed', { module: 'workspace/turn-end', step, error: message, sessionId: input.sessionId });
    };
    if (source === 'subagent') return { heartbeatWritten: false, errors };

    let heartbeatWritten = false;
    if (ops.heartbeatEnabled) {
      try {
        await ops.writeHeartbeat({ sessionId: input.sessionId, surface: input.surface, turnCount: input.turnCount, openLoops: input.openLoops });
        heartbeatWritten = true;
      } catch (error) {
        fail('heartbeat', error);
      }
    }

    let journalAppended: string | undefined;
    if (ops.dailyLog.enabled) {
      const buffer = buffers.get(input.sessionId) ?? [];
      buffers.delete(input.sessionId);
      buffer.push({ turnCount: input.turnCount, at: ops.now(), userText: input.userText, replyText: input.replyText });
      if (input.turnCount % ops.dailyLog.interval === 0) {
        try {
          journalAppended = await ops.appendJournal({
            sessionId: input.sessionId,
            surface: input.surface,
            turns: buffer,
            summary: input.journalSummary,
            openLoops: input.openLoops,
          });
        } catch (error) {
          fail('journal', error);
          buffers.set(input.sessionId, buffer.slice(-ops.dailyLog.interval));
        }
      } else {
        buffers.set(input.sessionId, buffer.slice(-ops.dailyLog.interval));
        if (buffers.size > MAX_BUFFERED_SESSIONS) buffers.delete(buffers.keys().next().value as string);
      }
    }

    let bootstrapArchivedAs: string | undefined;
    if (source === 'user' && input.replyText !== undefined && hasBootstrapDoneToken(input.replyText)) {
      try {
        bootstrapArchivedAs = await ops.completeBootstrap();
      } catch (error) {
        fail('bootstrap', error);
      }
    }
    return {
      heartbeatWritten,
      errors,
      ...(journalAppended !== undefined ? { journalAppended } : {}),
      ...(bootstrapArchivedAs !== undefined ? { bootstrapArchivedAs } : {}),
    };
  };
}
