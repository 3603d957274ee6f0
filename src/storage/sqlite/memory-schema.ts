import type { SqliteMigration } from './handle';
import { signBits } from './memory-vector-cache';

/**
 * Migrations of the `memory` domain. Append new versions; never edit one that has shipped.
 *
 * v1 — `memories` (scoped by `user_id` / `agent_id`, with a derived `scope_key` token the full-text index
 * carries so a MATCH only walks the tenant's postings), the external-content FTS5 index `memories_fts` with
 * its three triggers, `memory_edges` (cascade-purged by trigger), `memory_consolidation_events`,
 * `user_profile` (scoped), `memory_vectors` (float vectors for exact re-scoring) and `memory_settings`.
 * The sqlite-vec `vec0` table `memories_vec` is created on first use, once the embedding dimension is known.
 *
 * v2 — back-fills `source` from `metadata.source` (rows written by older code or imported).
 *
 * v3 — `memory_vectors.bits` (the sign bits, also kept in `vec0`) with the covering index the in-process
 * bit cache loads a scope from, and `memory_vector_generations`, bumped by every transaction that changes a
 * scope's vectors so a cache sees other connections' writes. Existing vectors are back-filled. Drops
 * `memory_edges_src`: the UNIQUE index starts with `(src_table, src_id)` and serves the same lookups, so the
 * extra index only cost one more page written per edge-bearing insert.
 *
 * v4 — batched full-text indexing. `memory_fts_state.indexed_through` is a watermark: every row with
 * `id <= indexed_through` is in `memories_fts` with its current values, rows above it are not yet indexed.
 * Raising the watermark fires `memories_fts_catch_up`, which indexes the rows in between in one statement;
 * the storage raises it once 64 rows wait, at the end of a batch insert, before any
 * full-text lookup and on close (see `memory-fts-sync.ts` for why). The delete and update triggers touch the
 * index only for rows at or below the watermark; `memories_ai` indexes at once a row inserted at or below it
 * (an explicit `id`, which this library never writes). The watermark starts at the highest existing id:
 * the v1 insert trigger indexed every row so far. `changes` counts the changes the three row triggers make to
 * the index, so a document-frequency cache knows when the watermark alone no longer describes the index
 * (see `memory-fts-rank.ts`). FTS5's `usermerge` becomes 2, so the bounded `merge` that
 * follows each catch-up merges any level holding two segments.
 *
 * v5 — `memory_text_log`: the change log of searchable text the memory layer's lexical index follows
 * (`MemoryStorage.textChanges`). Triggers append `(scope, memory_id)` when a row's `content` or `category`
 * changes, a row is deleted, or a row is inserted below an existing id (an explicit id, which this library
 * never writes); other inserts are not logged (ids only grow). Every 1,000th entry prunes the entries
 * more than 20,000 behind and records the pruned position in `memory_text_log_state`, so a reader that fell
 * further behind reloads its scope instead of missing a change. `memories_scope_id` finds a scope's rows added
 * since an id without walking other tenants' newer rows.
 *
 * v6 — `memory_text_index`: one saved lexical index snapshot per scope (`MemoryStorage.saveTextIndex`), so a
 * fresh process loads a large scope's index instead of reading and tokenising every row. Two triggers drop a
 * scope's snapshot when one of its rows is deleted or its `content` changes, so a snapshot never holds text the
 * table no longer has (an erased memory leaves no trace in it).
 */
export const memoryMigrations: readonly SqliteMigration[] = [
  {
    domain: 'memory',
    version: 1,
    name: 'memories, fts5 index + triggers, edges, consolidation events, profile, vectors',
    up(db) {
      db.exec(`
        CREATE TABLE memories (
          id              INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id         TEXT NOT NULL,
          agent_id        TEXT,
          scope_key       TEXT NOT NULL,
          category        TEXT NOT NULL,
          content         TEXT NOT NULL,
          search_text     TEXT NOT NULL,
          metadata        TEXT,
          source          TEXT,
          status          TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending', 'retired')),
          content_hash    TEXT NOT NULL,
          embedding_state TEXT NOT NULL DEFAULT 'pending' CHECK (embedding_state IN ('pending', 'embedded', 'failed', 'skipped')),
          deleted_at      TEXT,
          retired_at      TEXT,
          superseded_by   INTEGER,
          created_at      TEXT NOT NULL,
          updated_at      TEXT NOT NULL
        );
        CREATE INDEX memories_scope_updated ON memories (user_id, agent_id, updated_at DESC, id DESC);
        CREATE INDEX memories_scope_category ON memories (user_id, agent_id, category, updated_at DESC, id DESC);
        CREATE INDEX memories_scope_hash ON memories (user_id, agent_id, content_hash);
        CREATE INDEX memories_scope_deleted ON memories (user_id, agent_id, deleted_at) WHERE deleted_at IS NOT NULL;
        CREATE INDEX memories_scope_status ON memories (user_id, agent_id, status) WHERE status = 'pending';

        CREATE VIRTUAL TABLE memories_fts USING fts5(
          search_text,
          category,
          scope_key,
          content='memories',
          content_rowid='id',
          tokenize='unicode61'
        );

        CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
          INSERT INTO memories_fts(rowid, search_text, category, scope_key)
            VALUES (new.id, new.search_text, new.category, new.scope_key);
        END;

        CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
          INSERT INTO memories_fts(memories_fts, rowid, search_text, category, scope_key)
            VALUES ('delete', old.id, old.search_text, old.category, old.scope_key);
          DELETE FROM memory_edges WHERE src_table = 'memories' AND src_id = old.id;
          DELETE FROM memory_vectors WHERE memory_id = old.id;
        END;

        CREATE TRIGGER memories_au AFTER UPDATE OF search_text, category, scope_key ON memories BEGIN
          INSERT INTO memories_fts(memories_fts, rowid, search_text, category, scope_key)
            VALUES ('delete', old.id, old.search_text, old.category, old.scope_key);
          INSERT INTO memories_fts(rowid, search_text, category, scope_key)
            VALUES (new.id, new.search_text, new.category, new.scope_key);
        END;

        CREATE TABLE memory_edges (
          id              INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id         TEXT NOT NULL,
          agent_id        TEXT,
          src_table       TEXT NOT NULL,
          src_id          INTEGER NOT NULL,
          dst_entity_kind TEXT NOT NULL,
          dst_entity_key  TEXT NOT NULL,
          edge_type       TEXT NOT NULL,
          weight          REAL NOT NULL DEFAULT 1.0,
          created_at      TEXT NOT NULL,
          UNIQUE (src_table, src_id, dst_entity_kind, dst_entity_key, edge_type)
        );
        CREATE INDEX memory_edges_entity ON memory_edges (user_id, agent_id, dst_entity_key, dst_entity_kind);
        CREATE INDEX memory_edges_src ON memory_edges (src_table, src_id);

        CREATE TABLE memory_consolidation_events (
          id            INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id       TEXT NOT NULL,
          agent_id      TEXT,
          pass          TEXT NOT NULL,
          decision      TEXT NOT NULL,
          fact_id       INTEGER NOT NULL,
          other_id      INTEGER,
          reason        TEXT NOT NULL,
          model         TEXT,
          model_verdict TEXT,
          created_at    TEXT NOT NULL
        );
        CREATE INDEX memory_consolidation_scope ON memory_consolidation_events (user_id, agent_id, id DESC);

        CREATE TABLE user_profile (
          id         INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id    TEXT NOT NULL,
          agent_key  TEXT NOT NULL DEFAULT '',
          key        TEXT NOT NULL,
          value      TEXT NOT NULL,
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          UNIQUE (user_id, agent_key, key)
        );

        CREATE TABLE memory_vectors (
          memory_id    INTEGER PRIMARY KEY,
          user_id      TEXT NOT NULL,
          agent_id     TEXT,
          content_hash TEXT NOT NULL,
          embedding    BLOB NOT NULL
        );
        CREATE INDEX memory_vectors_hash ON memory_vectors (user_id, agent_id, content_hash);

        CREATE TABLE memory_settings (
          key   TEXT PRIMARY KEY,
          value TEXT NOT NULL
        );
      `);
    },
  },
  {
    domain: 'memory',
    version: 2,
    name: 'back-fill memories.source from metadata.source',
    up(db) {
      db.exec(`
        UPDATE memories SET source = json_extract(metadata, '$.source')
        WHERE source IS NULL AND metadata IS NOT NULL AND json_valid(metadata)
          AND json_type(metadata, '$.source') = 'text';
      `);
    },
  },
  {
    domain: 'memory',
    version: 3,
    name: 'memory_vectors.bits + per-scope vector generations (in-process bit cache)',
    up(db) {
      db.exec(`
        ALTER TABLE memory_vectors ADD COLUMN bits BLOB;
        CREATE INDEX memory_vectors_scope_bits ON memory_vectors (user_id, agent_id, memory_id, bits);
        CREATE TABLE memory_vector_generations (
          user_id   TEXT NOT NULL,
          agent_key TEXT NOT NULL DEFAULT '',
          gen       INTEGER NOT NULL,
          PRIMARY KEY (user_id, agent_key)
        ) WITHOUT ROWID;
        DROP INDEX IF EXISTS memory_edges_src;
      `);
      const page = db.prepare('SELECT memory_id, embedding FROM memory_vectors WHERE memory_id > ? ORDER BY memory_id LIMIT 1000');
      const set = db.prepare('UPDATE memory_vectors SET bits = ? WHERE memory_id = ?');
      for (let after = 0; ; ) {
        const rows = page.all(after) as Array<{ memory_id: number; embedding: Buffer }>;
        if (rows.length === 0) break;
        for (const r of rows) {
          const copy = new Uint8Array(r.embedding.byteLength);
          copy.set(r.embedding);
          set.run(signBits(new Float32Array(copy.buffer, 0, copy.byteLength >> 2)), r.memory_id);
          after = r.memory_id;
        }
      }
    },
  },
  {
    domain: 'memory',
    version: 4,
    name: 'batched full-text indexing: memory_fts_state watermark, catch-up trigger, watermark-aware triggers',
    up(db) {
      db.exec(`
        INSERT INTO memories_fts(memories_fts, rank) VALUES ('usermerge', 2);
        CREATE TABLE memory_fts_state (
          id              INTEGER PRIMARY KEY CHECK (id = 1),
          indexed_through INTEGER NOT NULL,
          changes         INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO memory_fts_state (id, indexed_through)
          VALUES (1, MAX(COALESCE((SELECT MAX(id) FROM memories), 0), COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'memories'), 0)));

        DROP TRIGGER memories_ai;
        DROP TRIGGER memories_ad;
        DROP TRIGGER memories_au;

        CREATE TRIGGER memories_ai AFTER INSERT ON memories
        WHEN new.id <= (SELECT indexed_through FROM memory_fts_state WHERE id = 1) BEGIN
          INSERT INTO memories_fts(rowid, search_text, category, scope_key)
            VALUES (new.id, new.search_text, new.category, new.scope_key);
          UPDATE memory_fts_state SET changes = changes + 1 WHERE id = 1;
        END;

        CREATE TRIGGER memories_fts_catch_up AFTER UPDATE OF indexed_through ON memory_fts_state
        WHEN new.indexed_through > old.indexed_through BEGIN
          INSERT INTO memories_fts(rowid, search_text, category, scope_key)
            SELECT id, search_text, category, scope_key FROM memories
            WHERE id > old.indexed_through AND id <= new.indexed_through ORDER BY id;
        END;

        CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
          INSERT INTO memories_fts(memories_fts, rowid, search_text, category, scope_key)
            SELECT 'delete', old.id, old.search_text, old.category, old.scope_key
            WHERE old.id <= (SELECT indexed_through FROM memory_fts_state WHERE id = 1);
          UPDATE memory_fts_state SET changes = changes + 1 WHERE id = 1 AND old.id <= indexed_through;
          DELETE FROM memory_edges WHERE src_table = 'memories' AND src_id = old.id;
          DELETE FROM memory_vectors WHERE memory_id = old.id;
        END;

        CREATE TRIGGER memories_au AFTER UPDATE OF search_text, category, scope_key ON memories
        WHEN old.id <= (SELECT indexed_through FROM memory_fts_state WHERE id = 1) BEGIN
          INSERT INTO memories_fts(memories_fts, rowid, search_text, category, scope_key)
            VALUES ('delete', old.id, old.search_text, old.category, old.scope_key);
          INSERT INTO memories_fts(rowid, search_text, category, scope_key)
            VALUES (new.id, new.search_text, new.category, new.scope_key);
          UPDATE memory_fts_state SET changes = changes + 1 WHERE id = 1;
        END;
      `);
    },
  },
  {
    domain: 'memory',
    version: 5,
    name: 'memory_text_log: change log of searchable text for the lexical index',
    up(db) {
      db.exec(`
        CREATE TABLE memory_text_log (
          seq       INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id   TEXT NOT NULL,
          agent_key TEXT NOT NULL,
          memory_id INTEGER NOT NULL
        );
        CREATE INDEX memory_text_log_scope ON memory_text_log (user_id, agent_key, seq);
        CREATE INDEX memories_scope_id ON memories (user_id, agent_id, id);
        CREATE TABLE memory_text_log_state (
          id             INTEGER PRIMARY KEY CHECK (id = 1),
          pruned_through INTEGER NOT NULL
        );
        INSERT INTO memory_text_log_state (id, pruned_through) VALUES (1, 0);

        CREATE TRIGGER memories_text_log_update AFTER UPDATE OF content, category ON memories
        WHEN old.content IS NOT new.content OR old.category IS NOT new.category BEGIN
          INSERT INTO memory_text_log (user_id, agent_key, memory_id) VALUES (old.user_id, COALESCE(old.agent_id, ''), old.id);
        END;
        CREATE TRIGGER memories_text_log_insert_below AFTER INSERT ON memories
        WHEN EXISTS (SELECT 1 FROM memories WHERE id > new.id) BEGIN
          INSERT INTO memory_text_log (user_id, agent_key, memory_id) VALUES (new.user_id, COALESCE(new.agent_id, ''), new.id);
        END;
        CREATE TRIGGER memories_text_log_delete AFTER DELETE ON memories BEGIN
          INSERT INTO memory_text_log (user_id, agent_key, memory_id) VALUES (old.user_id, COALESCE(old.agent_id, ''), old.id);
        END;
        CREATE TRIGGER memory_text_log_prune AFTER INSERT ON memory_text_log
        WHEN new.seq % 1000 = 0 BEGIN
          DELETE FROM memory_text_log WHERE seq <= new.seq - 20000;
          UPDATE memory_text_log_state SET pruned_through = MAX(pruned_through, new.seq - 20000) WHERE id = 1;
        END;
      `);
    },
  },
  {
    domain: 'memory',
    version: 6,
    name: 'memory_text_index: saved lexical index snapshots, dropped on delete or content change',
    up(db) {
      db.exec(`
        CREATE TABLE memory_text_index (
          user_id    TEXT NOT NULL,
          agent_key  TEXT NOT NULL,
          data       BLOB NOT NULL,
          PRIMARY KEY (user_id, agent_key)
        ) WITHOUT ROWID;
        CREATE TRIGGER memories_text_index_delete AFTER DELETE ON memories BEGIN
          DELETE FROM memory_text_index WHERE user_id = old.user_id AND agent_key = COALESCE(old.agent_id, '');
        END;
        CREATE TRIGGER memories_text_index_update AFTER UPDATE OF content ON memories
        WHEN old.content IS NOT new.content BEGIN
          DELETE FROM memory_text_index WHERE user_id = old.user_id AND agent_key = COALESCE(old.agent_id, '');
        END;
      `);
    },
  },
  {
    domain: 'memory',
    version: 7,
    name: "user_profile.set_by: who set an entry ('user' or 'agent'); the person's value wins",
    up(db) {
      db.exec(`ALTER TABLE user_profile ADD COLUMN set_by TEXT NOT NULL DEFAULT 'user' CHECK (set_by IN ('user', 'agent'))`);
    },
  },
];
