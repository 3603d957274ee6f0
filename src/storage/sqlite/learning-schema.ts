import type Database from 'better-sqlite3';
import type { SqliteMigration } from './handle';

type SqliteDb = Database.Database;

/** v1 step: `trade_history`: one row per fund-moving execution. */
const tradeHistoryV1 = (db: SqliteDb): void => {
  db.exec(`
    CREATE TABLE trade_history (
      id               INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id          TEXT NOT NULL,
      agent_id         TEXT NOT NULL DEFAULT '',
      order_id         TEXT NOT NULL,
      session_id       TEXT,
      turn_id          TEXT,
      tool_call_id     TEXT,
      tool_name        TEXT NOT NULL,
      action           TEXT NOT NULL CHECK (action IN ('open', 'close', 'transfer')),
      kind             TEXT NOT NULL CHECK (kind IN ('spot', 'perp', 'transfer')),
      asset            TEXT NOT NULL,
      asset_class      TEXT,
      side             TEXT NOT NULL,
      direction        TEXT,
      quantity         REAL NOT NULL,
      price            REAL NOT NULL,
      notional_usd     REAL NOT NULL,
      fee_usd          REAL NOT NULL,
      realized_pnl_usd REAL NOT NULL,
      role             TEXT NOT NULL,
      methodology_ids  TEXT NOT NULL DEFAULT '[]',
      simulated        INTEGER NOT NULL,
      provider         TEXT NOT NULL,
      at               TEXT NOT NULL,
      status           TEXT NOT NULL CHECK (status IN ('open', 'closed', 'settled')),
      closed_quantity  REAL NOT NULL DEFAULT 0,
      exit_price       REAL,
      closed_at        TEXT,
      holding_ms       INTEGER,
      outcome          TEXT,
      closes_trade_ids TEXT,
      details_json     TEXT,
      created_at       TEXT NOT NULL,
      UNIQUE (user_id, agent_id, order_id)
    );
    CREATE INDEX trade_history_open ON trade_history (user_id, agent_id, asset, kind, status, at, id);
    CREATE INDEX trade_history_at ON trade_history (user_id, agent_id, at DESC, id DESC);
    CREATE INDEX trade_history_asset_at ON trade_history (user_id, agent_id, asset, at DESC, id DESC);
  `);
};

/** v1 step: `methodologies` and their `methodology_outcomes`. */
const methodologiesV1 = (db: SqliteDb): void => {
  db.exec(`
    CREATE TABLE methodologies (
      id                     INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id                TEXT NOT NULL,
      agent_id               TEXT NOT NULL DEFAULT '',
      asset_class            TEXT NOT NULL,
      text                   TEXT NOT NULL,
      normalized_text        TEXT NOT NULL,
      origin                 TEXT NOT NULL,
      source_ref             TEXT,
      state                  TEXT NOT NULL CHECK (state IN ('candidate', 'graduated', 'quarantined')),
      uses                   INTEGER NOT NULL DEFAULT 0,
      wins                   INTEGER NOT NULL DEFAULT 0,
      confidence             REAL NOT NULL DEFAULT 0,
      graduation_proposed_at TEXT,
      graduated_at           TEXT,
      quarantined_at         TEXT,
      state_reason           TEXT,
      created_at             TEXT NOT NULL,
      updated_at             TEXT NOT NULL,
      UNIQUE (user_id, agent_id, asset_class, normalized_text)
    );
    CREATE INDEX methodologies_state ON methodologies (user_id, agent_id, state, asset_class, confidence DESC);

    CREATE TABLE methodology_outcomes (
      methodology_id INTEGER NOT NULL REFERENCES methodologies (id) ON DELETE CASCADE,
      trade_id       INTEGER NOT NULL REFERENCES trade_history (id) ON DELETE CASCADE,
      user_id        TEXT NOT NULL,
      agent_id       TEXT NOT NULL DEFAULT '',
      outcome        TEXT NOT NULL,
      created_at     TEXT NOT NULL,
      PRIMARY KEY (methodology_id, trade_id)
    );
  `);
};

/** v1 step: `role_memory`: one case per closed trade. */
const roleMemoryV1 = (db: SqliteDb): void => {
  db.exec(`
    CREATE TABLE role_memory (
      id                INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id           TEXT NOT NULL,
      agent_id          TEXT NOT NULL DEFAULT '',
      trade_id          INTEGER NOT NULL REFERENCES trade_history (id) ON DELETE CASCADE,
      role              TEXT NOT NULL,
      asset             TEXT NOT NULL,
      asset_class       TEXT,
      kind              TEXT NOT NULL,
      direction         TEXT,
      summary           TEXT NOT NULL,
      outcome           TEXT NOT NULL,
      realized_pnl_usd  REAL NOT NULL,
      holding_ms        INTEGER NOT NULL,
      methodology_ids   TEXT NOT NULL DEFAULT '[]',
      opened_at         TEXT NOT NULL,
      closed_at         TEXT NOT NULL,
      created_at        TEXT NOT NULL,
      reflected_at      TEXT,
      classification    TEXT,
      reflection        TEXT,
      lesson_memory_ids TEXT NOT NULL DEFAULT '[]',
      UNIQUE (user_id, agent_id, trade_id)
    );
    CREATE INDEX role_memory_pending ON role_memory (user_id, agent_id, reflected_at, id);
    CREATE INDEX role_memory_asset ON role_memory (user_id, agent_id, asset, reflected_at DESC, id DESC);
  `);
};

/** v1 step: `learned_preferences`. */
const learnedPreferencesV1 = (db: SqliteDb): void => {
  db.exec(`
    CREATE TABLE learned_preferences (
      id               INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id          TEXT NOT NULL,
      agent_id         TEXT NOT NULL DEFAULT '',
      dimension        TEXT NOT NULL,
      kind             TEXT NOT NULL CHECK (kind IN ('behavioural', 'hard_constraint')),
      text             TEXT NOT NULL,
      normalized_text  TEXT NOT NULL,
      value            TEXT,
      source           TEXT NOT NULL,
      state            TEXT NOT NULL CHECK (state IN ('proposed', 'active', 'rejected')),
      evidence         INTEGER NOT NULL DEFAULT 0,
      contradictions   INTEGER NOT NULL DEFAULT 0,
      last_evidence_at TEXT NOT NULL,
      activated_at     TEXT,
      decided_at       TEXT,
      memory_id        INTEGER,
      created_at       TEXT NOT NULL,
      updated_at       TEXT NOT NULL,
      UNIQUE (user_id, agent_id, dimension, kind, normalized_text)
    );
    CREATE INDEX learned_preferences_state ON learned_preferences (user_id, agent_id, state, dimension);
  `);
};

/** v1 step: The trade-history mirror: `perps_fills`, `external_spot_activities`, `history_sync_state`. */
const historyMirrorV1 = (db: SqliteDb): void => {
  db.exec(`
    CREATE TABLE perps_fills (
      id             INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id        TEXT NOT NULL,
      agent_id       TEXT NOT NULL DEFAULT '',
      sub_account_id TEXT NOT NULL,
      wallet_address TEXT,
      oid            TEXT NOT NULL,
      ts_ms          INTEGER NOT NULL,
      symbol         TEXT NOT NULL,
      side           TEXT NOT NULL,
      dir            TEXT,
      size           REAL NOT NULL,
      price          REAL NOT NULL,
      fee            REAL NOT NULL DEFAULT 0,
      closed_pnl     REAL NOT NULL DEFAULT 0,
      raw_json       TEXT,
      fill_uid       TEXT NOT NULL,
      created_at     TEXT NOT NULL
    );
    CREATE UNIQUE INDEX uniq_perps_fills_dedup ON perps_fills (user_id, agent_id, sub_account_id, fill_uid);
    CREATE INDEX perps_fills_ts ON perps_fills (user_id, agent_id, ts_ms DESC, id DESC);

    CREATE TABLE external_spot_activities (
      id         INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id    TEXT NOT NULL,
      agent_id   TEXT NOT NULL DEFAULT '',
      tx_hash    TEXT NOT NULL,
      ts_ms      INTEGER NOT NULL,
      type       TEXT NOT NULL,
      from_token TEXT,
      to_token   TEXT,
      amount     TEXT,
      value_usd  REAL,
      status     TEXT NOT NULL,
      raw_json   TEXT,
      created_at TEXT NOT NULL,
      UNIQUE (user_id, agent_id, tx_hash)
    );
    CREATE INDEX external_spot_ts ON external_spot_activities (user_id, agent_id, ts_ms DESC, id DESC);

    CREATE TABLE history_sync_state (
      user_id              TEXT NOT NULL,
      agent_id             TEXT NOT NULL DEFAULT '',
      source               TEXT NOT NULL,
      sub_account_id       TEXT NOT NULL DEFAULT '',
      last_synced_ts_ms    INTEGER,
      last_synced_at       TEXT NOT NULL,
      last_error           TEXT,
      consecutive_failures INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (user_id, agent_id, source, sub_account_id)
    );
  `);
};

/** v1 step: `personalization_snapshots`. */
const personalizationSnapshotsV1 = (db: SqliteDb): void => {
  db.exec(`
    CREATE TABLE personalization_snapshots (
      id                INTEGER PRIMARY KEY AUTOINCREMENT,
      user_id           TEXT NOT NULL,
      agent_id          TEXT NOT NULL DEFAULT '',
      session_watermark TEXT NOT NULL,
      session_ids       TEXT NOT NULL,
      fact_hashes       TEXT NOT NULL,
      written_ids       TEXT NOT NULL,
      created_at        TEXT NOT NULL
    );
    CREATE INDEX personalization_snapshots_scope ON personalization_snapshots (user_id, agent_id, id DESC);
  `);
};

/**
 * Migrations of the `learning` domain. Append new versions; never edit one that has shipped.
 *
 * v1 — `trade_history` (one row per fund-moving execution, UNIQUE per scope and order id), `methodologies`
 * (UNIQUE per scope, asset class and normalised text), `methodology_outcomes` (one attribution per
 * methodology and trade), `role_memory` (one case per closed trade), `learned_preferences`, the trade-history
 * mirror (`perps_fills`, `external_spot_activities`, `history_sync_state`) and `personalization_snapshots`.
 * Every table carries `user_id` and `agent_id` (`''` for user-level rows).
 *
 * v2 — `memory_extraction_queue`: user turns waiting for the memory extraction pass (UNIQUE per scope and turn
 * id), claimed under a lease (`claimed_by`, `claimed_until`, `attempts`) and deleted once processed.
 *
 * v3 — `role_memory.memory_id`: each trade case's own memory row (its edges and embedding make it reachable by
 * entity and hybrid search). Existing cases start at NULL; the trade-case index (`LearningStore.indexCases`, run by
 * `createApp` when it opens the storage) writes their rows, a partial index finding them.
 *
 * v4 — `methodologies.state` also allows `proposed` (what the synthesis pass writes: out of prompts until an
 * operator accepts it). SQLite cannot change a CHECK constraint in place, so the table is rebuilt: rows copied with
 * their ids, the attributions in `methodology_outcomes` kept (the drop would cascade to them), the index and the
 * AUTOINCREMENT high-water mark restored, so no id is ever reused.
 */
export const learningMigrations: readonly SqliteMigration[] = [
  {
    domain: 'learning',
    version: 1,
    name: 'trade history, methodologies, role memory, preferences, history mirror, personalization snapshots',
    up(db) {
      tradeHistoryV1(db);
      methodologiesV1(db);
      roleMemoryV1(db);
      learnedPreferencesV1(db);
      historyMirrorV1(db);
      personalizationSnapshotsV1(db);
    },
  },
  {
    domain: 'learning',
    version: 2,
    name: 'memory_extraction_queue: user turns waiting for the memory extraction pass',
    up(db) {
      db.exec(`
        CREATE TABLE memory_extraction_queue (
          id            INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id       TEXT NOT NULL,
          agent_id      TEXT NOT NULL DEFAULT '',
          session_id    TEXT NOT NULL,
          turn_id       TEXT NOT NULL,
          text          TEXT NOT NULL,
          created_at    TEXT NOT NULL,
          attempts      INTEGER NOT NULL DEFAULT 0,
          claimed_by    TEXT,
          claimed_until TEXT,
          UNIQUE (user_id, agent_id, turn_id)
        );
        CREATE INDEX memory_extraction_queue_scope ON memory_extraction_queue (user_id, agent_id, id);
      `);
    },
  },
  {
    domain: 'learning',
    version: 3,
    name: 'role_memory.memory_id: each trade case linked to its own memory row (edges, embedding)',
    up(db) {
      db.exec(`
        ALTER TABLE role_memory ADD COLUMN memory_id INTEGER;
        CREATE INDEX role_memory_unindexed ON role_memory (user_id, agent_id, id) WHERE memory_id IS NULL;
      `);
    },
  },
  {
    domain: 'learning',
    version: 4,
    name: "methodologies.state allows 'proposed' (table rebuilt; ids, attributions and the id high-water mark kept)",
    up(db) {
      const seq = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'methodologies'").get() as { seq: number } | undefined;
      db.exec(`
        CREATE TABLE methodologies_v4 (
          id                     INTEGER PRIMARY KEY AUTOINCREMENT,
          user_id                TEXT NOT NULL,
          agent_id               TEXT NOT NULL DEFAULT '',
          asset_class            TEXT NOT NULL,
          text                   TEXT NOT NULL,
          normalized_text        TEXT NOT NULL,
          origin                 TEXT NOT NULL,
          source_ref             TEXT,
          state                  TEXT NOT NULL CHECK (state IN ('proposed', 'candidate', 'graduated', 'quarantined')),
          uses                   INTEGER NOT NULL DEFAULT 0,
          wins                   INTEGER NOT NULL DEFAULT 0,
          confidence             REAL NOT NULL DEFAULT 0,
          graduation_proposed_at TEXT,
          graduated_at           TEXT,
          quarantined_at         TEXT,
          state_reason           TEXT,
          created_at             TEXT NOT NULL,
          updated_at             TEXT NOT NULL,
          UNIQUE (user_id, agent_id, asset_class, normalized_text)
        );
        INSERT INTO methodologies_v4 (id, user_id, agent_id, asset_class, text, normalized_text, origin, source_ref, state, uses, wins, confidence,
          graduation_proposed_at, graduated_at, quarantined_at, state_reason, created_at, updated_at)
          SELECT id, user_id, agent_id, asset_class, text, normalized_text, origin, source_ref, state, uses, wins, confidence,
          graduation_proposed_at, graduated_at, quarantined_at, state_reason, created_at, updated_at FROM methodologies;
        CREATE TEMP TABLE methodology_outcomes_v4 AS SELECT * FROM methodology_outcomes;
        DROP TABLE methodologies;
        ALTER TABLE methodologies_v4 RENAME TO methodologies;
        INSERT INTO methodology_outcomes (methodology_id, trade_id, user_id, agent_id, outcome, created_at)
          SELECT methodology_id, trade_id, user_id, agent_id, outcome, created_at FROM temp.methodology_outcomes_v4;
        DROP TABLE temp.methodology_outcomes_v4;
        CREATE INDEX methodologies_state ON methodologies (user_id, agent_id, state, asset_class, confidence DESC);
      `);
      if (seq !== undefined) {
        const now = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'methodologies'").get() as { seq: number } | undefined;
        if (now === undefined) db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('methodologies', ?)").run(seq.seq);
        else if (now.seq < seq.seq) db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'methodologies'").run(seq.seq);
      }
    },
  },
];
