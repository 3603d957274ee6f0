import type { SqliteHandle } from './handle';
import { signBits } from './memory-vector-cache';

/** One inconsistency {@link SqliteStorage.verify} found. */
export interface SqliteVerifyProblem {
  /**
   * Which check found it: `sqlite` (`PRAGMA integrity_check`), `foreign_keys`, `fts` (the full-text index
   * against the rows), `vectors` (float vectors, their sign bits and the `vec0` index against the rows),
   * `edges` (memory edges against the rows) or `approvals` (executed approvals without their signature).
   */
  readonly check: 'sqlite' | 'foreign_keys' | 'fts' | 'vectors' | 'edges' | 'approvals';
  /** What is wrong, naming the rows involved (at most 20 ids per problem). */
  readonly message: string;
}

/** What {@link SqliteStorage.verify} returns. */
export interface SqliteVerifyReport {
  /** No problem found. */
  readonly ok: boolean;
  readonly problems: readonly SqliteVerifyProblem[];
  /** What was looked at. */
  readonly counted: {
    readonly memories: number;
    readonly vectors: number;
    readonly edges: number;
    readonly approvals: number;
  };
}

const SAMPLE = 20;

function sample(ids: readonly unknown[]): string {
  const shown = ids.slice(0, SAMPLE).map(String).join(', ');
  return ids.length > SAMPLE ? `${shown} … (${ids.length} in all)` : shown;
}

/**
 * Compare every derived structure of a SQLite storage with the rows it derives from, without changing
 * anything (the full-text comparison runs inside a savepoint that is rolled back). Read-mostly: it holds the
 * write lock for the length of the FTS5 check, as any write would.
 */
export function verifySqliteStorage(handle: SqliteHandle): SqliteVerifyReport {
  const problems: SqliteVerifyProblem[] = [];
  const add = (check: SqliteVerifyProblem['check'], message: string) => problems.push({ check, message });
  const { db } = handle;

  const integrity = handle.read('storage.verify', () => db.prepare('PRAGMA integrity_check').pluck().all() as string[]);
  if (!(integrity.length === 1 && integrity[0] === 'ok')) add('sqlite', `PRAGMA integrity_check: ${integrity.slice(0, SAMPLE).join('; ')}`);

  const fk = handle.read('storage.verify', () => db.prepare('PRAGMA foreign_key_check').all() as Array<{ table: string; rowid: number; parent: string }>);
  if (fk.length > 0) add('foreign_keys', `${fk.length} rows point at missing parents: ${sample(fk.map((r) => `${r.table}#${r.rowid}→${r.parent}`))}`);

  const counted = handle.read('storage.verify', () => {
    const count = (sql: string) => db.prepare(sql).pluck().get() as number;

    // Vectors: each float vector belongs to a live row with the same content hash, each embedded row has one,
    // the sign bits match the floats, and the vec0 index holds exactly the vectors' rows.
    const orphanVectors = db
      .prepare('SELECT v.memory_id FROM memory_vectors v LEFT JOIN memories m ON m.id = v.memory_id WHERE m.id IS NULL OR m.content_hash <> v.content_hash ORDER BY v.memory_id')
      .pluck()
      .all();
    if (orphanVectors.length > 0) add('vectors', `vectors without a row of the same content: ${sample(orphanVectors)}`);
    const missingVectors = db
      .prepare("SELECT m.id FROM memories m LEFT JOIN memory_vectors v ON v.memory_id = m.id WHERE m.embedding_state = 'embedded' AND v.memory_id IS NULL ORDER BY m.id")
      .pluck()
      .all();
    if (missingVectors.length > 0) add('vectors', `rows marked embedded without a vector: ${sample(missingVectors)}`);
    const badBits: number[] = [];
    for (const row of db.prepare('SELECT memory_id, embedding, bits FROM memory_vectors').iterate() as Iterable<{ memory_id: number; embedding: Buffer; bits: Buffer | null }>) {
      const floats = new Float32Array(row.embedding.buffer, row.embedding.byteOffset, row.embedding.byteLength / 4);
      if (row.bits === null || !signBits(floats).equals(row.bits)) badBits.push(row.memory_id);
    }
    if (badBits.length > 0) add('vectors', `sign bits that do not match the vector: ${sample(badBits)}`);
    const vecTable = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'memories_vec'").get() !== undefined;
    if (vecTable && handle.vectorAvailable) {
      const notIndexed = db.prepare('SELECT memory_id FROM memory_vectors WHERE memory_id NOT IN (SELECT rowid FROM memories_vec) ORDER BY memory_id').pluck().all();
      if (notIndexed.length > 0) add('vectors', `vectors missing from the vec0 index: ${sample(notIndexed)}`);
      const stale = db.prepare('SELECT rowid FROM memories_vec WHERE rowid NOT IN (SELECT memory_id FROM memory_vectors) ORDER BY rowid').pluck().all();
      if (stale.length > 0) add('vectors', `vec0 entries without a vector: ${sample(stale)}`);
    }

    const orphanEdges = db
      .prepare("SELECT e.id FROM memory_edges e LEFT JOIN memories m ON m.id = e.src_id WHERE e.src_table = 'memories' AND m.id IS NULL ORDER BY e.id")
      .pluck()
      .all();
    if (orphanEdges.length > 0) add('edges', `edges of rows that no longer exist: ${sample(orphanEdges)}`);

    const unsigned = db.prepare("SELECT id FROM approvals WHERE status = 'executed' AND execution_signature IS NULL ORDER BY id").pluck().all();
    if (unsigned.length > 0) add('approvals', `executed approvals without an execution signature: ${sample(unsigned)}`);

    const watermark = db.prepare('SELECT indexed_through FROM memory_fts_state WHERE id = 1').pluck().get() as number | undefined;
    const maxId = (db.prepare('SELECT MAX(id) FROM memories').pluck().get() as number | null) ?? 0;
    if (watermark === undefined) add('fts', 'memory_fts_state has no row');
    else if (watermark > maxId && maxId > 0) {
      // A watermark above the highest row is harmless only when the rows above were deleted; flag only a
      // watermark beyond every id ever assigned.
      const seq = (db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").pluck().get() as number | undefined) ?? 0;
      if (watermark > seq) add('fts', `the full-text watermark (${watermark}) is beyond every row id ever assigned (${seq})`);
    }

    return {
      memories: count('SELECT COUNT(*) FROM memories'),
      vectors: count('SELECT COUNT(*) FROM memory_vectors'),
      edges: count('SELECT COUNT(*) FROM memory_edges'),
      approvals: count('SELECT COUNT(*) FROM approvals'),
    };
  });

  // Full text: index the rows still waiting (as the next lookup would), then let FTS5 compare its index with
  // the rows (`integrity-check` with rank 1 reads the external content table). Rolled back either way.
  handle.write('storage.verify', () => {
    db.exec('SAVEPOINT minara_verify');
    try {
      db.prepare(
        'UPDATE memory_fts_state SET indexed_through = (SELECT MAX(id) FROM memories) WHERE id = 1 AND indexed_through < (SELECT MAX(id) FROM memories)',
      ).run();
      db.prepare("INSERT INTO memories_fts(memories_fts, rank) VALUES ('integrity-check', 1)").run();
    } catch (error) {
      add('fts', `the full-text index does not match the rows: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      db.exec('ROLLBACK TO minara_verify; RELEASE minara_verify');
    }
  });

  return { ok: problems.length === 0, problems, counted };
}
