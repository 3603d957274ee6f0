import { MinaraError } from '../errors/minara-error';
import type { AuditEntryInput, Storage } from '../storage/types';
import { writeTogether } from '../storage/write-together';
import { type Logger, silentLogger } from '../util/logger';

/** Options of {@link createAuditBatch}. */
export interface AuditBatchOptions {
  /** Where the held rows are appended (the registry's storage). */
  readonly storage: Storage;
  /** Where a row that could not be written is reported (`audit append failed`, as a dispatch reports it). */
  readonly logger?: Pick<Logger, 'error'> | undefined;
  /** Rows held at most: the row that reaches this many commits them all before its dispatch returns. @default 32 */
  readonly maxRows?: number | undefined;
}

/**
 * Audit rows of side-effect-free calls, held to be committed together (`DispatchOptions.auditBatch`). A dispatch
 * given a batch does not commit the row of a call to a tool declared `sideEffects: false` (a read: nothing outside
 * changed); it holds it, with its time, content and order, and the rows commit in one transaction (where the
 * storage batches writes) when the batch is flushed. Before any other call (a tool with side effects, an unknown
 * tool, a call that commits writes with its row) the dispatch flushes the batch first, so that call's gate, grants
 * and circuit breakers, and the audit log's order, see every row before it. The runtime holds one batch per turn and
 * commits it with the turn's stored messages (`sideEffectFreeAuditRows`).
 */
export interface AuditBatch {
  /** Rows held now. */
  readonly size: number;
  /** Commit every held row (one transaction where the storage batches writes); resolves when they are written. A row that fails is logged, never thrown. */
  flush(): Promise<void>;
}

interface BatchState {
  readonly storage: Storage;
  readonly logger: Pick<Logger, 'error'>;
  readonly maxRows: number;
  rows: AuditEntryInput[];
  /** The flushes begun so far, in order: a later flush (or a take) waits for the earlier ones. */
  chain: Promise<void>;
}

const states = new WeakMap<AuditBatch, BatchState>();

/**
 * A batch that holds the audit rows of side-effect-free calls until it is flushed (see {@link AuditBatch}).
 *
 * @example
 * ```ts
 * const batch = createAuditBatch({ storage });
 * await tools.dispatchDetailed('get_price', { symbol: 'BTC' }, { context, auditBatch: batch }); // row held
 * await tools.dispatchDetailed('get_price', { symbol: 'ETH' }, { context, auditBatch: batch }); // row held
 * await batch.flush(); // both rows, one commit
 * ```
 */
export function createAuditBatch(options: AuditBatchOptions): AuditBatch {
  const maxRows = options.maxRows ?? 32;
  if (!Number.isInteger(maxRows) || maxRows < 1) throw new MinaraError('CONFIG_INVALID', `createAuditBatch: maxRows must be a whole number of at least 1 (got ${String(options.maxRows)})`);
  const state: BatchState = { storage: options.storage, logger: options.logger ?? silentLogger, maxRows, rows: [], chain: Promise.resolve() };
  const batch: AuditBatch = {
    get size() {
      return state.rows.length;
    },
    flush() {
      const rows = state.rows;
      if (rows.length === 0) return state.chain;
      state.rows = [];
      state.chain = state.chain.then(() => commitRows(state, rows));
      return state.chain;
    },
  };
  states.set(batch, state);
  return batch;
}

/** Hold one row (its content fixed now); the row that fills the batch flushes it. */
export async function holdAuditRow(batch: AuditBatch, entry: AuditEntryInput): Promise<void> {
  const state = stateOf(batch);
  state.rows.push(entry);
  if (state.rows.length >= state.maxRows) await batch.flush();
}

/**
 * Hand the held rows to the caller, to commit with its own writes (`writeTogether`): resolves once the flushes
 * begun before have ended, with one write per row (each appends its row; the caller logs a failure). The batch is
 * empty after.
 */
export async function takeAuditRows(batch: AuditBatch): Promise<Array<() => Promise<unknown>>> {
  const state = stateOf(batch);
  await state.chain;
  const rows = state.rows;
  state.rows = [];
  return rows.map((entry) => () => state.storage.audit.append(entry));
}

function stateOf(batch: AuditBatch): BatchState {
  const state = states.get(batch);
  if (state === undefined) throw new MinaraError('CONFIG_INVALID', 'auditBatch: not a batch from createAuditBatch');
  return state;
}

/** The rows in one transaction where the storage batches writes, else one by one in order; failures logged. */
async function commitRows(state: BatchState, rows: readonly AuditEntryInput[]): Promise<void> {
  const writes = rows.map((entry) => () => state.storage.audit.append(entry));
  const settled = rows.length > 1 ? await writeTogether(state.storage, writes) : undefined;
  if (settled !== undefined) {
    settled.forEach((s, i) => {
      if (s.status === 'rejected') state.logger.error('audit append failed', { tool: rows[i]!.toolName, error: errorText(s.reason) });
    });
    return;
  }
  for (const [i, write] of writes.entries()) {
    try {
      await write();
    } catch (error) {
      state.logger.error('audit append failed', { tool: rows[i]!.toolName, error: errorText(error) });
    }
  }
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
