import { DEFAULT_MODEL_PRICES, priceFor, usageCostUsd } from '../../llm/pricing';
import { turnProvenance } from '../../safety/untrusted';
import type { NewMessage } from '../../storage/types';
import type { UsageEntry } from '../../storage/usage-types';
import { loadMessages, toNewMessages } from '../conversation';
import { saveSessionState, type SessionState } from '../session-state';
import { writeTogether } from '../../storage/write-together';
import { takeAuditRows } from '../../tools/audit-batch';
import { errorText } from './block-codes';
import type { TurnState } from './state';
import type { TurnDeps } from './types';

/**
 * Stage 9, persist: what the model said is stored (even after an error or abort), plus calls that returned in
 * a step cut short; then the journal is cleared, the session state saved and the turn's usage row recorded, and
 * the audit rows of side-effect-free calls the turn held are written. Where the storage batches writes (SQLite),
 * they are one transaction, all or nothing (the journal is cleared only with the messages that make it unneeded);
 * otherwise, or when the batch fails, they run one by one as before (the held rows first). Failures are logged,
 * never thrown. Returns the session's new turn count.
 */
export async function persistTurn(deps: TurnDeps, turn: TurnState): Promise<number> {
  const { options } = deps;
  const { ctx, journal } = turn;
  const turnCount = turn.session.turnCount + 1;
  let toStore: NewMessage[] | undefined;
  try {
    toStore = await messagesToStore(deps, turn);
  } catch (error) {
    deps.logger.error('could not persist the turn', { sessionId: ctx.sessionId, error: errorText(error) });
  }
  const state = nextSessionState(turn, turnCount);
  const usage = usageEntry(deps, turn);
  // The side-effect-free calls' audit rows the turn held (sideEffectFreeAuditRows), first: in the same commit.
  const heldRows: Array<readonly [string, () => Promise<unknown>]> = turn.auditBatch ? (await takeAuditRows(turn.auditBatch)).map((write) => ['audit append failed', write] as const) : [];
  if (toStore === undefined) await writeOneByOne(deps, turn, heldRows);
  else {
    const stored = toStore;
    const writes: Array<readonly [string, () => Promise<unknown>]> = [
      ...heldRows,
      ['could not persist the turn', () => (stored.length > 0 ? options.storage.conversations.appendMessages(ctx.sessionId, stored) : Promise.resolve())],
      ['could not persist the turn', () => journal.clear()],
      ['could not save session state', () => saveSessionState(options.storage, ctx.sessionId, state)],
      ...(usage ? [['usage ledger: recording the turn failed', () => options.storage.usage.record(usage)] as const] : []),
    ];
    const settled = await writeTogether(options.storage, writes.map(([, write]) => write));
    if (settled) {
      settled.forEach((s, i) => {
        if (s.status === 'rejected') deps.logger.error(writes[i]![0], { sessionId: ctx.sessionId, turnId: turn.turnId, error: errorText(s.reason) });
      });
      return turnCount;
    }
    await writeOneByOne(deps, turn, heldRows);
    try {
      if (stored.length > 0) await options.storage.conversations.appendMessages(ctx.sessionId, stored);
      await journal.clear();
    } catch (error) {
      deps.logger.error('could not persist the turn', { sessionId: ctx.sessionId, error: errorText(error) });
    }
  }
  try {
    await saveSessionState(options.storage, ctx.sessionId, state);
  } catch (error) {
    deps.logger.error('could not save session state', { sessionId: ctx.sessionId, error: errorText(error) });
  }
  if (usage) await recordUsage(deps, usage);
  return turnCount;
}

/** Writes of the turn's end that could not commit together, one by one in order; failures logged. */
async function writeOneByOne(deps: TurnDeps, turn: TurnState, writes: ReadonlyArray<readonly [string, () => Promise<unknown>]>): Promise<void> {
  for (const [message, write] of writes) {
    try {
      await write();
    } catch (error) {
      deps.logger.error(message, { sessionId: turn.ctx.sessionId, turnId: turn.turnId, error: errorText(error) });
    }
  }
}

/** The response messages, plus the journaled calls a step cut short left out of them (read back when needed). */
async function messagesToStore(deps: TurnDeps, turn: TurnState): Promise<NewMessage[]> {
  const { journal, ctx, turnId } = turn;
  let tail = journal.missingFrom(turn.responseMessages);
  if (tail.length > 0) tail = journal.missingFrom([...(await loadMessages(deps.options.storage, ctx.sessionId)), ...turn.responseMessages]);
  return toNewMessages([...turn.responseMessages, ...tail], turnId, deps.now());
}

/** The session state after this turn: its skills, turn count, last message and the untrusted sources read. */
function nextSessionState(turn: TurnState, turnCount: number): SessionState {
  const { session, input, ctx } = turn;
  const learningMessage = input.message !== undefined ? input.message.slice(0, 2000) : session.learningMessage;
  const untrusted = turnProvenance(ctx) ?? session.untrusted;
  return { ...session, activeSkills: turn.skillSession?.activeIds() ?? session.activeSkills, turnCount, ...(learningMessage !== undefined ? { learningMessage } : {}), ...(untrusted ? { untrusted } : {}) };
}

/**
 * The turn's tokens and cost for `storage.usage` (what `GET /v1/usage` sums), whoever wired the runtime; none
 * with `recordUsage: false`. A sub-agent's tokens are in its parent turn's usage: recording them twice would
 * double the cost.
 */
function usageEntry(deps: TurnDeps, turn: TurnState): UsageEntry | undefined {
  const { options } = deps;
  if (options.recordUsage === false || turn.source === 'subagent') return undefined;
  try {
    const modelId = turn.answeredBy ?? (typeof options.model === 'string' ? options.model : options.model.modelId);
    const price = priceFor(modelId, options.prices ? { ...DEFAULT_MODEL_PRICES, ...options.prices } : DEFAULT_MODEL_PRICES);
    const u = turn.usage;
    return {
      turnId: turn.turnId, sessionId: turn.ctx.sessionId, userId: turn.scope.userId, source: turn.source, modelId, at: deps.now().toISOString(),
      inputTokens: u.inputTokens, outputTokens: u.outputTokens, cacheReadTokens: u.cacheReadTokens, cacheWriteTokens: u.cacheWriteTokens,
      costUsd: price ? usageCostUsd(u, price) : 0,
    };
  } catch (error) {
    deps.logger.error('usage ledger: recording the turn failed', { turnId: turn.turnId, error: errorText(error) });
    return undefined;
  }
}

async function recordUsage(deps: TurnDeps, entry: UsageEntry): Promise<void> {
  try {
    await deps.options.storage.usage.record(entry);
  } catch (error) {
    deps.logger.error('usage ledger: recording the turn failed', { turnId: entry.turnId, error: errorText(error) });
  }
}
