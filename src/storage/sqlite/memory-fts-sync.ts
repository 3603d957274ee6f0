/**
 * Batched full-text indexing for the SQLite memory domain.
 *
 * Why: FTS5 turns every transaction that touches the index into a new segment and pays its incremental
 * merges at commit, so one memory written per transaction costs ~0.15 ms of FTS5 work at 100k rows on the
 * 2-core reference machine: more than the row, its indexes and its edges together. Indexed 64 rows at a
 * time, the same rows cost a fraction of that (measured: a sequential `write()` loop to 100k rows went from
 * ~2,400 to ~3,400 writes/s).
 *
 * How: a row is durable (with its edges) when its insert commits; the index catches up later, in one
 * statement, by raising the `memory_fts_state.indexed_through` watermark (migration v4's
 * `memories_fts_catch_up` trigger indexes the rows in between). Every row at or below the watermark is in the
 * index with its current values, none above it is, and the delete and update triggers keep that true. The
 * watermark is raised
 * - in the insert transaction once {@link FTS_BATCH_ROWS} rows wait, and at the end of every batch insert;
 * - before every full-text lookup, so a search always sees every committed row (exact, as before);
 * - when the storage closes.
 * A crash leaves at most the waiting rows unindexed, and the next lookup from any process indexes them.
 *
 * Each catch-up adds one FTS5 segment and then runs a bounded merge ({@link FTS_MERGE_PAGES}).
 */
import type { SqliteHandle } from './handle';

/** Rows that may wait for the full-text index before an insert transaction indexes them. */
export const FTS_BATCH_ROWS = 64;

const CATCH_UP = `UPDATE memory_fts_state SET indexed_through = (SELECT MAX(id) FROM memories)
  WHERE id = 1 AND indexed_through < (SELECT MAX(id) FROM memories)`;

/**
 * Merge work after each catch-up, in leaf pages. FTS5's own automerge grants work per leaf page written, which
 * suits one-row transactions (one mostly empty leaf each) but starves batches (a 64-row segment fills 2–3
 * leaves), so segments would pile up to the crisis threshold (16 per level) and every lookup would pay for
 * them. An explicit bounded `merge` after each catch-up keeps them few; with `usermerge = 2` (set by migration
 * v4) it merges any level holding two segments, and is a no-op when none does.
 */
export const FTS_MERGE_PAGES = 64;
const MERGE = `INSERT INTO memories_fts(memories_fts, rank) VALUES ('merge', ${FTS_MERGE_PAGES})`;

/**
 * The catch-up of one connection. A document-frequency cache needs no signal from here: it follows the
 * watermark itself (`memory-fts-rank.ts`).
 */
export function createFtsSync(handle: SqliteHandle) {
  /** Inside a write transaction: index every waiting row, then merge. */
  const catchUp = (): void => {
    if (handle.prepare(CATCH_UP).run().changes > 0) handle.prepare(MERGE).run();
  };
  const pending = (): boolean => handle.prepare('SELECT (SELECT MAX(id) FROM memories) > indexed_through FROM memory_fts_state WHERE id = 1').pluck().get() === 1;

  return {
    catchUp,

    /** Inside an insert transaction whose highest new id is `lastId`: index the waiting rows once enough wait. */
    afterInserts(lastId: number): void {
      const through = handle.prepare('SELECT indexed_through FROM memory_fts_state WHERE id = 1').pluck().get() as number;
      if (lastId - through >= FTS_BATCH_ROWS) catchUp();
    },

    /** Before a full-text lookup: index every committed row not yet indexed (no write when there is none). */
    ensureIndexed(): void {
      if (handle.read('memory.ftsPending', pending)) handle.write('memory.ftsCatchUp', catchUp);
    },
  };
}
