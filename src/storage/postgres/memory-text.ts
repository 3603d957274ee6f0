/**
 * What the in-process lexical index of `src/memory` reads from the Postgres memory domain: the scope's
 * searchable text (all of it, the rows added since an id, or some ids), the change log by transaction id,
 * and the saved index snapshot (loaded, and stored only when no row it holds changed since its position).
 */
import type { MemoryScope, MemoryStorage, MemoryTextRow } from '../memory-types';
import type { PgRow } from './handle';
import { agentKey, type PgMemoryState, scopeRowsByIds, sp } from './memory-rows';

type Args<K extends keyof MemoryStorage> = Parameters<NonNullable<MemoryStorage[K]>>;
type Result<K extends keyof MemoryStorage> = Awaited<ReturnType<NonNullable<MemoryStorage[K]>>>;

/** Rows per statement of a catch-up read (the rows added since the index's newest id). */
const CATCH_UP_PAGE = 1000;

const textRow = (r: PgRow): MemoryTextRow => ({ id: Number(r.id), content: String(r.content), category: String(r.category) });

/** The scope's searchable rows in id order: all, those after `afterId`, or the given ids. */
export async function textRows(st: PgMemoryState, ...[scope, query]: Args<'textRows'>): Promise<MemoryTextRow[]> {
  const q = st.h.op('memory.textRows');
  const M = st.M;
  if (query?.ids !== undefined) {
    if (query.ids.length === 0) return [];
    return (await q.all(scopeRowsByIds(M, 'id, content, category', 'id'), [...sp(scope), [...query.ids]])).map(textRow);
  }
  // Spelled so the (user_id, agent_id, id) index bounds all three and gives the order (`IS NOT DISTINCT FROM` bounds
  // only user_id: every lookup's catch-up walked all of the tenant's index entries, ~600 pages at 100k rows).
  const scoped = scope.agentId === undefined ? 'user_id = $1 AND agent_id IS NULL AND $2::text IS NULL' : 'user_id = $1 AND agent_id = $2';
  if (query?.afterId !== undefined && query.afterId > 0) {
    // In pages: with a LIMIT only a path that yields rows in order from the start is cheap, and the index is that
    // path. Without one, statistics from mid-way through a bulk load (the tenant at half the table, ids below the
    // bound) made the planner sort a parallel primary-key scan of every newer row instead: ~0.8 s for a catch-up
    // that returns nothing, on each lookup until autoanalyze came round (docs/storage.md, the 100k tail).
    const rows: MemoryTextRow[] = [];
    for (let after = query.afterId; ; ) {
      const page = await q.all(`SELECT id, content, category FROM ${M} WHERE ${scoped} AND id > $3 ORDER BY user_id, agent_id, id LIMIT ${CATCH_UP_PAGE}`, [...sp(scope), after]);
      for (const r of page) rows.push(textRow(r));
      if (page.length < CATCH_UP_PAGE) return rows;
      after = rows[rows.length - 1]!.id;
    }
  }
  return (await q.all(`SELECT id, content, category FROM ${M} WHERE ${scoped} ORDER BY user_id, agent_id, id`, sp(scope))).map(textRow);
}

/** The scope's rows whose text changed at or after position `since` (a transaction id). */
export async function textChanges(st: PgMemoryState, ...[scope, since]: Args<'textChanges'>): Promise<Result<'textChanges'>> {
  // The position is the oldest transaction still running: whatever commits later, whatever its id, is at or
  // after it and comes back next time (applying a change twice is harmless).
  // One statement, one round trip (a lookup makes one of these): the position and the pruning mark on a row of
  // their own (memory_id NULL), then the log's rows after `since` unless it was pruned past it. Every row comes from
  // the one snapshot whose xmin is the position.
  const { h } = st;
  const rows = await h.op('memory.textChanges').all(
    `WITH now AS (SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint AS xmin, (SELECT pruned_before FROM ${h.t('memory_text_log_state')} WHERE id = 1) AS pruned)
     SELECT xmin, pruned, NULL::bigint AS memory_id FROM now
     UNION ALL
     SELECT NULL, NULL, l.memory_id FROM ${h.t('memory_text_log')} l, now
      WHERE $3::bigint < ${Number.MAX_SAFE_INTEGER} AND $3::bigint >= now.pruned AND l.user_id = $1 AND l.agent_key = $2 AND l.xid >= $3::bigint`,
    [scope.userId, agentKey(scope), since],
  );
  const head = rows.find((r) => r.memory_id === null)!;
  const seq = Number(head.xmin);
  if (since >= Number.MAX_SAFE_INTEGER) return { seq, reset: false, ids: [] };
  if (since < Number(head.pruned)) return { seq, reset: true, ids: [] };
  return { seq, reset: false, ids: rows.flatMap((r) => (r.memory_id === null ? [] : [Number(r.memory_id)])) };
}

/** The scope's saved lexical index snapshot, if any. */
export async function loadTextIndex(st: PgMemoryState, scope: MemoryScope): Promise<Uint8Array | undefined> {
  const row = await st.h.op('memory.loadTextIndex').get(`SELECT data FROM ${st.h.t('memory_text_index')} WHERE user_id = $1 AND agent_key = $2`, [scope.userId, agentKey(scope)]);
  const data = row?.data;
  return data instanceof Uint8Array ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : undefined;
}

/** Store a snapshot unless a row it holds changed since its position; whether it was stored. */
export async function saveTextIndex(st: PgMemoryState, ...[scope, snapshot]: Args<'saveTextIndex'>): Promise<boolean> {
  const { h } = st;
  return h.tx('memory.saveTextIndex', async (tx) => {
    // The lock the delete trigger takes too (schema memory v3), then: no change since the snapshot's position
    // to a row it holds, then the upsert.
    await tx.run("SELECT pg_advisory_xact_lock(hashtextextended('minara.memory_text_index:' || length($1::text) || ':' || $1::text || $2::text, 0))", [scope.userId, agentKey(scope)]);
    const state = await tx.get(`SELECT pruned_before FROM ${h.t('memory_text_log_state')} WHERE id = 1`);
    if (snapshot.seq < Number(state?.pruned_before ?? 0)) return false;
    const changed = await tx.get(`SELECT 1 AS x FROM ${h.t('memory_text_log')} WHERE user_id = $1 AND agent_key = $2 AND xid >= $3 AND memory_id <= $4 LIMIT 1`, [
      scope.userId,
      agentKey(scope),
      snapshot.seq,
      snapshot.maxId,
    ]);
    if (changed !== undefined) return false;
    await tx.run(
      `INSERT INTO ${h.t('memory_text_index')} (user_id, agent_key, data) VALUES ($1, $2, $3) ON CONFLICT (user_id, agent_key) DO UPDATE SET data = EXCLUDED.data`,
      [scope.userId, agentKey(scope), Buffer.from(snapshot.data.buffer, snapshot.data.byteOffset, snapshot.data.byteLength)],
    );
    return true;
  });
}
