/**
 * Full-text lookup of the Postgres memory domain: candidate retrieval with `tsvector` + GIN, ranking with
 * BM25 computed in JavaScript. Everything ranking-related lives in this one file so it can be pointed at a
 * shared ranking module later.
 *
 * Indexing: a row's `search_tsv` is built from its pre-tokenised `searchText` directly (a tsvector literal of
 * the tokens with their positions; no parser, no stemming, no stop words), so Postgres sees exactly the tokens
 * the SQLite engine's FTS5 index sees, plus one scope lexeme (`_s` + 20 hex of sha256 of the scope, which no
 * token can equal: tokens are letters and digits). The query tree ({@link MemoryQueryNode}) compiles to a
 * tsquery literal the same way: term → `'t'`, prefix → `'t':*`, phrase → `'a' <-> 'b'`, AND → `&`, OR → `|`,
 * always ANDed with the scope lexeme, so GIN intersects with the tenant's postings first. Statements also
 * filter on `user_id` and the exact `agent_id`.
 *
 * Ranking: the formula of the SQLite engine (`scoreRows`, FTS5's BM25: k1 = 1.2, b = 0.75, IDF floored at
 * 1e-6, row size = text tokens + category tokens + 1, the AND-subtree zeroing of FTS5), with statistics per
 * tenant: N and the average row size from `memory_fts_stats` (kept in the writing transaction), and each
 * leaf's document frequency counted over the tenant's rows (soft-deleted and retired rows included, as an
 * FTS index holds them), cached per tenant until its generation changes.
 */
import { createHash } from 'node:crypto';
import { leaves, type Bm25Stats } from '../in-memory/memory-bm25';
import { DEFAULT_MEMORY_STATUSES, memoryDocSize } from '../memory-logic';
import type { MemoryLookupFilter, MemoryQueryNode, MemoryScope, MemoryScoredId } from '../memory-types';
import { scoreRows } from '../sqlite/memory-fts-rank';
import type { PgHandle, PgTx } from './handle';

/** Longest lexeme kept (Postgres refuses lexemes of 2 KiB or more). */
const MAX_LEXEME_BYTES = 2000;
/** Postgres keeps at most this position. */
const MAX_POSITION = 16383;

/** The scope lexeme of a tenant (`_s` + 20 hex chars). */
export function scopeLexeme(scope: MemoryScope): string {
  return `_s${createHash('sha256').update(`${scope.userId}\u0000${scope.agentId ?? ''}`).digest('hex').slice(0, 20)}`;
}

const quote = (token: string) => `'${token.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;

/** The tsvector literal of a row: its tokens with positions, plus the scope lexeme. */
export function tsvectorLiteral(scope: MemoryScope, searchText: string): string {
  const positions = new Map<string, number[]>();
  let pos = 0;
  for (const token of searchText.split(' ')) {
    if (token.length === 0) continue;
    pos++;
    if (Buffer.byteLength(token) > MAX_LEXEME_BYTES) continue;
    let list = positions.get(token);
    if (list === undefined) positions.set(token, (list = []));
    if (list.length < 255) list.push(Math.min(pos, MAX_POSITION));
  }
  const parts = [quote(scopeLexeme(scope))];
  for (const [token, list] of positions) parts.push(`${quote(token)}:${[...new Set(list)].join(',')}`);
  return parts.join(' ');
}

/** A row's size as BM25 counts it: text tokens + category tokens + 1 (the scope token), as the SQLite index. */
export const docSize = memoryDocSize;

/** A query tree as a tsquery literal (without the scope). */
export function toTsquery(node: MemoryQueryNode): string {
  switch (node.kind) {
    case 'term':
      return `${quote(node.text)}${node.prefix === true ? ':*' : ''}`;
    case 'phrase':
      return node.tokens.length === 1 ? quote(node.tokens[0] as string) : `(${node.tokens.map(quote).join(' <-> ')})`;
    case 'and':
      return `(${node.children.map(toTsquery).join(' & ')})`;
    case 'or':
      return `(${node.children.map(toTsquery).join(' | ')})`;
  }
}

/** The scoped tsquery literal. */
export function scopedTsquery(scope: MemoryScope, node: MemoryQueryNode): string {
  return `${quote(scopeLexeme(scope))} & ${toTsquery(node)}`;
}

/** Stats rows per scope (writers pick one at random, readers sum them). */
export const FTS_STATS_SHARDS = 16;

/**
 * The upsert of a write's statistics change, as SQL with placeholders `$<user>`, `$<agentKey>`, `$<rows>`,
 * `$<size>` (numbers given) and a random shard; for a CTE or a statement of its own.
 */
export function ftsStatsUpsert(h: PgHandle, p: { user: number; agentKey: number; rows: string; size: string }): string {
  const shard = Math.floor(Math.random() * FTS_STATS_SHARDS);
  return `INSERT INTO ${h.t('memory_fts_stats')} AS s (user_id, agent_key, shard, rows, total_size, gen) VALUES ($${p.user}, $${p.agentKey}, ${shard}, ${p.rows}, ${p.size}, 1)
     ON CONFLICT (user_id, agent_key, shard) DO UPDATE SET rows = s.rows + excluded.rows, total_size = s.total_size + excluded.total_size, gen = s.gen + 1`;
}

/** The statistics change of a write (inside its transaction). */
export async function bumpFtsStats(tx: PgTx, h: PgHandle, scope: MemoryScope, rows: number, size: number): Promise<void> {
  await tx.run(ftsStatsUpsert(h, { user: 1, agentKey: 2, rows: '$3::bigint', size: '$4::bigint' }), [scope.userId, scope.agentId ?? '', rows, size]);
}

const DF_CACHE_LIMIT = 4096;

/** The row filter after the scope (`$1`, `$2` are user and agent). */
export function rowFilter(filter: MemoryLookupFilter, params: unknown[], alias = ''): string {
  const a = alias === '' ? '' : `${alias}.`;
  let sql = `${a}user_id = $1 AND ${a}agent_id IS NOT DISTINCT FROM $2 AND ${a}deleted_at IS NULL`;
  const statuses = filter.statuses ?? DEFAULT_MEMORY_STATUSES;
  params.push([...statuses]);
  sql += ` AND ${a}status = ANY($${params.length}::text[])`;
  if ((filter.categories ?? []).length > 0) {
    params.push([...(filter.categories ?? [])]);
    sql += ` AND ${a}category = ANY($${params.length}::text[])`;
  }
  if ((filter.excludeIds ?? []).length > 0) {
    params.push([...(filter.excludeIds ?? [])]);
    sql += ` AND NOT (${a}id = ANY($${params.length}::bigint[]))`;
  }
  return sql;
}

/** The full-text lookup of the Postgres memory domain. */
export function createPgMemoryFts(h: PgHandle) {
  const M = h.t('memories');
  /** `scope|leaf` → document frequency at a generation of the scope's index. */
  const df = new Map<string, { gen: number; n: number }>();

  /** Per-leaf document frequencies over the scope's rows: cached ones, the rest counted in one statement. */
  const frequencies = async (q: PgTx, scope: MemoryScope, query: MemoryQueryNode, gen: number): Promise<number[]> => {
    const lexeme = scopeLexeme(scope);
    const literals = leaves(query).map(toTsquery);
    const out = literals.map((literal) => {
      const cached = df.get(`${lexeme}|${literal}`);
      return cached !== undefined && cached.gen === gen ? cached.n : undefined;
    });
    const missing = [...new Set(literals.filter((_, i) => out[i] === undefined))];
    if (missing.length > 0) {
      const params: unknown[] = [scope.userId, scope.agentId ?? null, `${quote(lexeme)} & (${missing.join(' | ')})`, ...missing];
      const counts = missing.map((_, i) => `COUNT(*) FILTER (WHERE search_tsv @@ $${i + 4}::tsquery) AS c${i}`).join(', ');
      const row = await q.get(`SELECT ${counts} FROM ${M} WHERE search_tsv @@ $3::tsquery AND user_id = $1 AND agent_id IS NOT DISTINCT FROM $2`, params);
      if (df.size + missing.length > DF_CACHE_LIMIT) df.clear();
      missing.forEach((literal, i) => df.set(`${lexeme}|${literal}`, { gen, n: Number(row?.[`c${i}`] ?? 0) }));
    }
    return literals.map((literal) => df.get(`${lexeme}|${literal}`)?.n ?? 0);
  };

  return {
    async search(scope: MemoryScope, query: MemoryQueryNode, filter: MemoryLookupFilter): Promise<MemoryScoredId[]> {
      const q = h.op('memory.searchText');
      const params: unknown[] = [scope.userId, scope.agentId ?? null];
      const where = rowFilter(filter, params);
      params.push(scopedTsquery(scope, query));
      const match = `search_tsv @@ $${params.length}::tsquery`;
      params.push(scope.agentId ?? '');
      const agentKey = params.length;
      let limit = '';
      if (filter.window !== undefined) {
        params.push(filter.window);
        limit = ` ORDER BY id DESC LIMIT $${params.length}`;
      }
      // One statement: the candidates (GIN, scoped) with the scope's statistics summed over its shards.
      const rows = await q.all<{ id: unknown; search_text: string; category: string; n: unknown; total: unknown; gen: unknown }>(
        `SELECT c.id, c.search_text, c.category, st.n, st.total, st.gen
         FROM (SELECT id, search_text, category FROM ${M} WHERE ${match} AND ${where}${limit}) c
         CROSS JOIN (SELECT COALESCE(SUM(rows), 0) AS n, COALESCE(SUM(total_size), 0) AS total, COALESCE(SUM(gen), 0) AS gen
                     FROM ${h.t('memory_fts_stats')} WHERE user_id = $1 AND agent_key = $${agentKey}) st`,
        params,
      );
      const first = rows[0];
      if (first === undefined) return [];
      const rowCount = Number(first.n);
      const stats: Bm25Stats = { rowCount, avgSize: rowCount === 0 ? 1 : Number(first.total) / rowCount, hits: await frequencies(q, scope, query, Number(first.gen)) };
      const scored = scoreRows(query, rows.map((r) => ({ id: Number(r.id), text: r.search_text, category: r.category })), stats);
      return scored.sort((a, b) => b.score - a.score || b.id - a.id).slice(0, filter.limit);
    },
  };
}
