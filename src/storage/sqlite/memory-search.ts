/**
 * Full-text and substring lookups of the SQLite memory domain.
 *
 * The MATCH expression is compiled from the sanitised {@link MemoryQueryNode} tree and always carries the
 * scope token: `scope_key:"s…" AND search_text:(…)`, so FTS5 intersects with the tenant's postings before
 * ranking; the joined `memories` row is filtered by `user_id`/`agent_id` as well. Ranking is
 * `bm25(memories_fts, 1, 0, 0)` (only the text column weighs), negated so higher is better.
 *
 * The joins are `CROSS JOIN` on purpose: it pins the FTS (or window) side as the outer loop. With a plain
 * JOIN the planner drives from `memories` through the `user_id` index and probes the FTS rows, which at 100k
 * rows per tenant cost ~280 ms instead of ~8 ms.
 */
import { LIKE_CANDIDATES, likeNeedles, scoreLikeMatches } from '../memory-logic';
import type { MemoryLookupFilter, MemoryQueryNode, MemoryScope, MemoryScoredId } from '../memory-types';
import type { SqliteHandle } from './handle';
import { createFtsStats, scoreRows } from './memory-fts-rank';
import { createFtsSync } from './memory-fts-sync';
import { jsonList, scopeKey, scopeParams } from './memory-rows';

/** Render a query tree as an FTS5 expression. Tokens are letters/digits only; quotes are doubled anyway. */
export function toFts5(node: MemoryQueryNode): string {
  switch (node.kind) {
    case 'term':
      return `"${node.text.replaceAll('"', '""')}"${node.prefix === true ? '*' : ''}`;
    case 'phrase':
      return `"${node.tokens.map((t) => t.replaceAll('"', '""')).join(' ')}"`;
    case 'and':
      return `(${node.children.map(toFts5).join(' AND ')})`;
    case 'or':
      return `(${node.children.map(toFts5).join(' OR ')})`;
  }
}

/** The full MATCH expression for one scope (and, when given, its categories as a column filter). */
export function scopedMatch(scope: MemoryScope, node: MemoryQueryNode, categories: readonly string[] = []): string {
  const cats = categories
    .map((c) => c.split(/[^A-Za-z0-9]+/u).filter((t) => t.length > 0))
    .filter((t) => t.length > 0)
    .map((t) => `"${t.join(' ')}"`);
  const catFilter = cats.length > 0 ? ` AND category:(${cats.join(' OR ')})` : '';
  return `scope_key:"${scopeKey(scope)}"${catFilter} AND search_text:(${toFts5(node)})`;
}

/**
 * The row filter after the scope: visible, of the wanted statuses, categories and not excluded. Clauses whose
 * list is empty are left out rather than evaluated per row (each `json_each` list costs ~0.1–0.2 ms per 1,000
 * rows); the statement cache holds one statement per shape.
 */
function rowFilter(scope: MemoryScope, filter: MemoryLookupFilter): { sql: string; params: unknown[] } {
  const cats = filter.categories ?? [];
  const exclude = filter.excludeIds ?? [];
  const statuses = filter.statuses ?? ['active', 'pending'];
  let sql = 'm.user_id = ? AND m.agent_id IS ? AND m.deleted_at IS NULL';
  const params: unknown[] = [...scopeParams(scope)];
  const defaultStatuses = statuses.length === 2 && statuses.includes('active') && statuses.includes('pending');
  if (defaultStatuses) sql += " AND m.status IN ('active', 'pending')";
  else {
    sql += ' AND m.status IN (SELECT value FROM json_each(?))';
    params.push(jsonList(statuses));
  }
  if (cats.length > 0) {
    sql += ' AND m.category IN (SELECT value FROM json_each(?))';
    params.push(jsonList(cats));
  }
  if (exclude.length > 0) {
    sql += ' AND m.id NOT IN (SELECT value FROM json_each(?))';
    params.push(jsonList(exclude));
  }
  return { sql, params };
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The text lookups of the SQLite memory domain. */
export function createSqliteMemorySearch(handle: SqliteHandle) {
  const stats = createFtsStats(handle);
  const fts = createFtsSync(handle);
  return {
    /** The batched indexing of inserted rows (memory-fts-sync.ts). */
    fts,

    text(scope: MemoryScope, query: MemoryQueryNode, filter: MemoryLookupFilter): MemoryScoredId[] {
      fts.ensureIndexed();
      stats.ensureVocab();
      // One read transaction: the statistics, the prefix expansions and the rows come from one snapshot.
      return handle.read('memory.searchText', (db) =>
        db.transaction((): MemoryScoredId[] => {
          const where = rowFilter(scope, filter);
          if (filter.window === undefined) {
            const rows = handle
              .prepare(
                `SELECT m.id AS id, bm25(memories_fts, 1.0, 0.0, 0.0) AS rank
                 FROM memories_fts CROSS JOIN memories m ON m.id = memories_fts.rowid
                 WHERE memories_fts MATCH ? AND ${where.sql}
                 ORDER BY rank ASC, m.id DESC LIMIT ?`,
              )
              .all(scopedMatch(scope, query, filter.categories), ...where.params, filter.limit) as Array<{ id: number; rank: number }>;
            return rows.map((r) => ({ id: r.id, score: -r.rank }));
          }
          // Windowed: FTS5 returns the newest `window` matching rowids of the scope without ranking them; BM25
          // is computed here for the rows that pass the filter (see memory-fts-rank.ts for why and how).
          const match = scopedMatch(scope, stats.windowQuery(query), filter.categories);
          const window = handle
            .prepare(
              `SELECT m.id AS id, m.search_text AS text, m.category AS category
               FROM (SELECT rowid AS id FROM memories_fts WHERE memories_fts MATCH ? ORDER BY rowid DESC LIMIT ?) w
               CROSS JOIN memories m ON m.id = w.id
               WHERE ${where.sql}`,
            )
            .all(match, filter.window, ...where.params) as Array<{ id: number; text: string; category: string }>;
          if (window.length === 0) return [];
          return scoreRows(query, window, stats.stats(query))
            .sort((a, b) => b.score - a.score || b.id - a.id)
            .slice(0, filter.limit);
        })(),
      );
    },

    like(scope: MemoryScope, needles: readonly string[], filter: MemoryLookupFilter): MemoryScoredId[] {
      const list = likeNeedles(needles);
      if (list.length === 0) return [];
      return handle.read('memory.searchLike', () => {
        const where = rowFilter(scope, filter);
        const rows = handle
          .prepare(
            `SELECT m.id AS id, m.content AS content FROM memories m
             WHERE ${where.sql}
               AND EXISTS (SELECT 1 FROM json_each(?) n WHERE m.content LIKE '%' || n.value || '%' ESCAPE '\\')
             ORDER BY m.updated_at DESC, m.id DESC LIMIT ${LIKE_CANDIDATES}`,
          )
          .all(...where.params, jsonList(list.map(escapeLike))) as Array<{ id: number; content: string }>;
        return scoreLikeMatches(rows, list, filter.limit);
      });
    },
  };
}
