/**
 * The built-in migrations of the Postgres engine, one list per domain like the SQLite engine's (`core`,
 * `memory`, `trading`, `jobs`, `usage`, `learning`). Same tables and columns as SQLite, in Postgres types:
 * TEXT timestamps (ISO-8601 UTC, compared as strings), DOUBLE PRECISION for REAL, BIGINT identities for
 * integer ids, and a `seq` identity where SQLite breaks ties by `rowid`. Append new versions; never edit one
 * that has shipped.
 */
import type { PostgresMigration } from './migrate';

const sql = (text: string): PostgresMigration['up'] => async (tx, { t }) => {
  for (const statement of text.replaceAll('§', `${t('')}`.slice(0, -1)).split(/;\s*\n/)) {
    if (statement.trim().length > 0) await tx.run(statement);
  }
};

/** `§.name` in the SQL below becomes `"schema".name`. */
export const coreMigrations: readonly PostgresMigration[] = [
  {
    domain: 'core',
    version: 1,
    name: 'instance, kv, audit, approvals, grants, conversations',
    up: sql(`
      CREATE TABLE §.instance_meta (
        singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
        instance_id TEXT NOT NULL,
        hmac_key BYTEA NOT NULL,
        created_at TEXT NOT NULL
      );
      CREATE TABLE §.kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at TEXT NOT NULL);
      CREATE TABLE §.audit_log (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at TEXT NOT NULL, tool_name TEXT NOT NULL, tier INTEGER NOT NULL, source TEXT NOT NULL,
        session_id TEXT, trace_id TEXT, tool_call_id TEXT, approval_id TEXT, decision TEXT NOT NULL,
        code TEXT, reason TEXT, duration_ms DOUBLE PRECISION NOT NULL, args_json TEXT NOT NULL, mode TEXT
      );
      CREATE INDEX audit_log_session ON §.audit_log (session_id);
      CREATE INDEX audit_log_trace ON §.audit_log (trace_id);
      CREATE INDEX audit_log_tool_at ON §.audit_log (tool_name, at);
      CREATE TABLE §.approvals (
        id TEXT PRIMARY KEY,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        tool_name TEXT NOT NULL, tool_call_id TEXT NOT NULL, input_hash TEXT NOT NULL, input_json TEXT NOT NULL,
        tier INTEGER NOT NULL, session_id TEXT, trace_id TEXT, source TEXT NOT NULL, reason TEXT NOT NULL,
        status TEXT NOT NULL, created_at TEXT NOT NULL, expires_at TEXT NOT NULL, decided_at TEXT,
        decision_reason TEXT, executed_at TEXT, signature TEXT NOT NULL, decision_signature TEXT, execution_signature TEXT
      );
      CREATE INDEX approvals_status_created ON §.approvals (status, created_at);
      CREATE INDEX approvals_session ON §.approvals (session_id);
      CREATE TABLE §.grants (
        id TEXT PRIMARY KEY,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        kind TEXT NOT NULL, tool_name TEXT NOT NULL, session_id TEXT, sources_json TEXT, arg_limits_json TEXT,
        created_at TEXT NOT NULL, expires_at TEXT, revoked_at TEXT, note TEXT
      );
      CREATE INDEX grants_tool ON §.grants (tool_name);
      CREATE INDEX grants_session ON §.grants (session_id);
      CREATE TABLE §.sessions (
        id TEXT PRIMARY KEY,
        seq BIGINT GENERATED ALWAYS AS IDENTITY,
        user_id TEXT, title TEXT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, metadata_json TEXT
      );
      CREATE INDEX sessions_updated ON §.sessions (updated_at);
      CREATE INDEX sessions_user_updated ON §.sessions (user_id, updated_at);
      CREATE TABLE §.messages (
        session_id TEXT NOT NULL REFERENCES §.sessions (id) ON DELETE CASCADE,
        seq INTEGER NOT NULL, role TEXT NOT NULL, json TEXT NOT NULL, turn_id TEXT, created_at TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      )`),
  },
  {
    domain: 'core',
    version: 2,
    name: 'change log for cross-instance notices (LISTEN/NOTIFY, polled where NOTIFY is unavailable)',
    up: sql(`
      CREATE TABLE §.change_log (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, channel TEXT NOT NULL, payload TEXT NOT NULL, origin TEXT NOT NULL, at TEXT NOT NULL
      );
      CREATE INDEX change_log_at ON §.change_log (at)`),
  },
];

export const tradingMigrations: readonly PostgresMigration[] = [
  {
    domain: 'trading',
    version: 1,
    name: 'paper accounts, balances, positions, fills, daily pnl',
    up: sql(`
      CREATE TABLE §.trading_accounts (id TEXT PRIMARY KEY, base_currency TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE §.trading_balances (
        account_id TEXT NOT NULL REFERENCES §.trading_accounts(id) ON DELETE CASCADE,
        asset TEXT NOT NULL,
        amount DOUBLE PRECISION NOT NULL CHECK (amount >= 0),
        cost_basis_usd DOUBLE PRECISION NOT NULL CHECK (cost_basis_usd >= 0),
        updated_at TEXT NOT NULL,
        PRIMARY KEY (account_id, asset)
      );
      CREATE TABLE §.trading_positions (
        account_id TEXT NOT NULL REFERENCES §.trading_accounts(id) ON DELETE CASCADE,
        symbol TEXT NOT NULL, side TEXT NOT NULL CHECK (side IN ('long', 'short')),
        size DOUBLE PRECISION NOT NULL CHECK (size > 0), entry_price DOUBLE PRECISION NOT NULL,
        margin_usd DOUBLE PRECISION NOT NULL CHECK (margin_usd >= 0), leverage DOUBLE PRECISION NOT NULL,
        opened_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        PRIMARY KEY (account_id, symbol)
      );
      CREATE TABLE §.trading_fills (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES §.trading_accounts(id) ON DELETE CASCADE,
        id TEXT NOT NULL, kind TEXT NOT NULL, symbol TEXT NOT NULL, side TEXT NOT NULL,
        quantity DOUBLE PRECISION NOT NULL, price DOUBLE PRECISION NOT NULL, notional_usd DOUBLE PRECISION NOT NULL,
        fee_usd DOUBLE PRECISION NOT NULL, realized_pnl_usd DOUBLE PRECISION NOT NULL, contribution_usd DOUBLE PRECISION NOT NULL,
        at TEXT NOT NULL, details_json TEXT,
        UNIQUE (account_id, id)
      );
      CREATE INDEX trading_fills_account_at ON §.trading_fills (account_id, at DESC, seq DESC);
      CREATE TABLE §.trading_daily_pnl (
        account_id TEXT NOT NULL REFERENCES §.trading_accounts(id) ON DELETE CASCADE,
        day TEXT NOT NULL, realized_usd DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (account_id, day)
      )`),
  },
];

export const jobMigrations: readonly PostgresMigration[] = [
  {
    domain: 'jobs',
    version: 1,
    name: 'background job runs, one per job and slot',
    up: sql(`
      CREATE TABLE §.job_runs (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        job_id TEXT NOT NULL, slot TEXT NOT NULL, owner TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 1,
        started_at TEXT NOT NULL, lease_until TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('running', 'ok', 'failed', 'skipped')),
        ended_at TEXT, error TEXT, detail TEXT,
        UNIQUE (job_id, slot)
      );
      CREATE INDEX job_runs_recent ON §.job_runs (job_id, id DESC);
      CREATE INDEX job_runs_running ON §.job_runs (outcome, lease_until) WHERE outcome = 'running'`),
  },
];

export const usageMigrations: readonly PostgresMigration[] = [
  {
    domain: 'usage',
    version: 1,
    name: 'usage ledger, one row per turn',
    up: sql(`
      CREATE TABLE §.usage_ledger (
        turn_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, user_id TEXT NOT NULL, source TEXT NOT NULL,
        model_id TEXT NOT NULL, at TEXT NOT NULL, day TEXT NOT NULL,
        input_tokens BIGINT NOT NULL, output_tokens BIGINT NOT NULL, cache_read BIGINT NOT NULL, cache_write BIGINT NOT NULL,
        cost_usd DOUBLE PRECISION NOT NULL
      );
      CREATE INDEX usage_ledger_day ON §.usage_ledger (day, user_id);
      CREATE INDEX usage_ledger_session ON §.usage_ledger (session_id)`),
  },
  {
    domain: 'usage',
    version: 2,
    name: 'usage_reservations: the estimated cost of admitted turns still running, per limit scope and day',
    up: sql(`
      CREATE TABLE §.usage_reservations (
        id TEXT PRIMARY KEY, scope TEXT NOT NULL, day TEXT NOT NULL, amount_usd DOUBLE PRECISION NOT NULL, expires_at TEXT NOT NULL
      );
      CREATE INDEX usage_reservations_scope ON §.usage_reservations (scope, day)`),
  },
];

export const learningMigrations: readonly PostgresMigration[] = [
  {
    domain: 'learning',
    version: 1,
    name: 'trade history, methodologies, role memory, preferences, history mirror, personalization snapshots',
    up: sql(`
      CREATE TABLE §.trade_history (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', order_id TEXT NOT NULL,
        session_id TEXT, turn_id TEXT, tool_call_id TEXT, tool_name TEXT NOT NULL,
        action TEXT NOT NULL CHECK (action IN ('open', 'close', 'transfer')),
        kind TEXT NOT NULL CHECK (kind IN ('spot', 'perp', 'transfer')),
        asset TEXT NOT NULL, asset_class TEXT, side TEXT NOT NULL, direction TEXT,
        quantity DOUBLE PRECISION NOT NULL, price DOUBLE PRECISION NOT NULL, notional_usd DOUBLE PRECISION NOT NULL,
        fee_usd DOUBLE PRECISION NOT NULL, realized_pnl_usd DOUBLE PRECISION NOT NULL, role TEXT NOT NULL,
        methodology_ids TEXT NOT NULL DEFAULT '[]', simulated BOOLEAN NOT NULL, provider TEXT NOT NULL, at TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('open', 'closed', 'settled')),
        closed_quantity DOUBLE PRECISION NOT NULL DEFAULT 0, exit_price DOUBLE PRECISION, closed_at TEXT, holding_ms BIGINT,
        outcome TEXT, closes_trade_ids TEXT, details_json TEXT, created_at TEXT NOT NULL,
        UNIQUE (user_id, agent_id, order_id)
      );
      CREATE INDEX trade_history_open ON §.trade_history (user_id, agent_id, asset, kind, status, at, id);
      CREATE INDEX trade_history_at ON §.trade_history (user_id, agent_id, at DESC, id DESC);
      CREATE TABLE §.methodologies (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', asset_class TEXT NOT NULL, text TEXT NOT NULL,
        normalized_text TEXT NOT NULL, origin TEXT NOT NULL, source_ref TEXT,
        state TEXT NOT NULL CHECK (state IN ('candidate', 'graduated', 'quarantined')),
        uses INTEGER NOT NULL DEFAULT 0, wins INTEGER NOT NULL DEFAULT 0, confidence DOUBLE PRECISION NOT NULL DEFAULT 0,
        graduation_proposed_at TEXT, graduated_at TEXT, quarantined_at TEXT, state_reason TEXT,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        UNIQUE (user_id, agent_id, asset_class, normalized_text)
      );
      CREATE INDEX methodologies_state ON §.methodologies (user_id, agent_id, state, asset_class, confidence DESC);
      CREATE TABLE §.methodology_outcomes (
        methodology_id BIGINT NOT NULL REFERENCES §.methodologies (id) ON DELETE CASCADE,
        trade_id BIGINT NOT NULL REFERENCES §.trade_history (id) ON DELETE CASCADE,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', outcome TEXT NOT NULL, created_at TEXT NOT NULL,
        PRIMARY KEY (methodology_id, trade_id)
      );
      CREATE TABLE §.role_memory (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '',
        trade_id BIGINT NOT NULL REFERENCES §.trade_history (id) ON DELETE CASCADE,
        role TEXT NOT NULL, asset TEXT NOT NULL, asset_class TEXT, kind TEXT NOT NULL, direction TEXT, summary TEXT NOT NULL,
        outcome TEXT NOT NULL, realized_pnl_usd DOUBLE PRECISION NOT NULL, holding_ms BIGINT NOT NULL,
        methodology_ids TEXT NOT NULL DEFAULT '[]', opened_at TEXT NOT NULL, closed_at TEXT NOT NULL, created_at TEXT NOT NULL,
        reflected_at TEXT, classification TEXT, reflection TEXT, lesson_memory_ids TEXT NOT NULL DEFAULT '[]',
        UNIQUE (user_id, agent_id, trade_id)
      );
      CREATE INDEX role_memory_pending ON §.role_memory (user_id, agent_id, reflected_at, id);
      CREATE TABLE §.learned_preferences (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', dimension TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('behavioural', 'hard_constraint')),
        text TEXT NOT NULL, normalized_text TEXT NOT NULL, value TEXT, source TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('proposed', 'active', 'rejected')),
        evidence INTEGER NOT NULL DEFAULT 0, contradictions INTEGER NOT NULL DEFAULT 0, last_evidence_at TEXT NOT NULL,
        activated_at TEXT, decided_at TEXT, memory_id BIGINT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        UNIQUE (user_id, agent_id, dimension, kind, normalized_text)
      );
      CREATE INDEX learned_preferences_state ON §.learned_preferences (user_id, agent_id, state, dimension);
      CREATE TABLE §.perps_fills (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', sub_account_id TEXT NOT NULL, wallet_address TEXT,
        oid TEXT NOT NULL, ts_ms BIGINT NOT NULL, symbol TEXT NOT NULL, side TEXT NOT NULL, dir TEXT,
        size DOUBLE PRECISION NOT NULL, price DOUBLE PRECISION NOT NULL, fee DOUBLE PRECISION NOT NULL DEFAULT 0,
        closed_pnl DOUBLE PRECISION NOT NULL DEFAULT 0, raw_json TEXT, fill_uid TEXT NOT NULL, created_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX uniq_perps_fills_dedup ON §.perps_fills (user_id, agent_id, sub_account_id, fill_uid);
      CREATE INDEX perps_fills_ts ON §.perps_fills (user_id, agent_id, ts_ms DESC, id DESC);
      CREATE TABLE §.external_spot_activities (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', tx_hash TEXT NOT NULL, ts_ms BIGINT NOT NULL,
        type TEXT NOT NULL, from_token TEXT, to_token TEXT, amount TEXT, value_usd DOUBLE PRECISION, status TEXT NOT NULL,
        raw_json TEXT, created_at TEXT NOT NULL,
        UNIQUE (user_id, agent_id, tx_hash)
      );
      CREATE INDEX external_spot_ts ON §.external_spot_activities (user_id, agent_id, ts_ms DESC, id DESC);
      CREATE TABLE §.history_sync_state (
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', source TEXT NOT NULL, sub_account_id TEXT NOT NULL DEFAULT '',
        last_synced_ts_ms BIGINT, last_synced_at TEXT NOT NULL, last_error TEXT, consecutive_failures INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (user_id, agent_id, source, sub_account_id)
      );
      CREATE TABLE §.personalization_snapshots (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', session_watermark TEXT NOT NULL, session_ids TEXT NOT NULL,
        fact_hashes TEXT NOT NULL, written_ids TEXT NOT NULL, created_at TEXT NOT NULL
      );
      CREATE INDEX personalization_snapshots_scope ON §.personalization_snapshots (user_id, agent_id, id DESC)`),
  },
  {
    domain: 'learning',
    version: 2,
    name: 'memory_extraction_queue: user turns waiting for the memory extraction pass',
    up: sql(`
      CREATE TABLE §.memory_extraction_queue (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT NOT NULL DEFAULT '', session_id TEXT NOT NULL, turn_id TEXT NOT NULL, text TEXT NOT NULL,
        created_at TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, claimed_by TEXT, claimed_until TEXT,
        UNIQUE (user_id, agent_id, turn_id)
      );
      CREATE INDEX memory_extraction_queue_scope ON §.memory_extraction_queue (user_id, agent_id, id)`),
  },
  {
    domain: 'learning',
    version: 3,
    name: 'role_memory.memory_id: each trade case linked to its own memory row (edges, embedding)',
    up: sql(`
      ALTER TABLE §.role_memory ADD COLUMN memory_id BIGINT;
      CREATE INDEX role_memory_unindexed ON §.role_memory (user_id, agent_id, id) WHERE memory_id IS NULL`),
  },
  {
    domain: 'learning',
    version: 4,
    name: "methodologies.state allows 'proposed' (the synthesis pass's methodologies, out of prompts until accepted)",
    up: sql(`
      ALTER TABLE §.methodologies DROP CONSTRAINT methodologies_state_check;
      ALTER TABLE §.methodologies ADD CONSTRAINT methodologies_state_check CHECK (state IN ('proposed', 'candidate', 'graduated', 'quarantined'))`),
  },
];

/**
 * The `memory` domain. `memories.search_tsv` is the row's pre-tokenised `search_text` as a tsvector built from
 * the tokens themselves (no parser, no stemming), plus one scope lexeme (`_s` + 20 hex of sha256 of the scope)
 * that the full-text lookup intersects with first, as the SQLite engine's `scope_key` token; `doc_size` is the
 * row size BM25 uses (text tokens + category tokens + 1). `memory_fts_stats` keeps per-scope row counts and
 * size sums for BM25, and a generation bumped by every change to the scope's index (the document-frequency
 * cache keys on the sum), spread over 16 shard rows per scope so concurrent writers of one tenant rarely wait
 * on the same row; readers sum the shards. `memory_vectors.embedding` holds the float32 vector; `embedding_v` (pgvector) is added at
 * open when the extension is available.
 */
export const memoryMigrations: readonly PostgresMigration[] = [
  {
    domain: 'memory',
    version: 1,
    name: 'memories with tsvector + GIN, per-scope fts stats, edges, consolidation events, profile, vectors, settings',
    up: sql(`
      CREATE TABLE §.memories (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT, category TEXT NOT NULL, content TEXT NOT NULL, search_text TEXT NOT NULL,
        search_tsv TSVECTOR NOT NULL, doc_size INTEGER NOT NULL, metadata TEXT, source TEXT,
        status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'pending', 'retired')),
        content_hash TEXT NOT NULL,
        embedding_state TEXT NOT NULL DEFAULT 'pending' CHECK (embedding_state IN ('pending', 'embedded', 'failed', 'skipped')),
        deleted_at TEXT, retired_at TEXT, superseded_by BIGINT, created_at TEXT NOT NULL, updated_at TEXT NOT NULL
      );
      CREATE INDEX memories_scope_updated ON §.memories (user_id, agent_id, updated_at DESC, id DESC);
      CREATE INDEX memories_scope_hash ON §.memories (user_id, agent_id, content_hash);
      CREATE INDEX memories_scope_id ON §.memories (user_id, agent_id, id);
      CREATE INDEX memories_scope_deleted ON §.memories (user_id, agent_id, deleted_at) WHERE deleted_at IS NOT NULL;
      CREATE INDEX memories_fts ON §.memories USING GIN (search_tsv);
      CREATE TABLE §.memory_fts_stats (
        user_id TEXT NOT NULL, agent_key TEXT NOT NULL, shard SMALLINT NOT NULL, rows BIGINT NOT NULL DEFAULT 0, total_size BIGINT NOT NULL DEFAULT 0,
        gen BIGINT NOT NULL DEFAULT 0, PRIMARY KEY (user_id, agent_key, shard)
      );
      CREATE TABLE §.memory_edges (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT, src_table TEXT NOT NULL, src_id BIGINT NOT NULL,
        dst_entity_kind TEXT NOT NULL, dst_entity_key TEXT NOT NULL, edge_type TEXT NOT NULL,
        weight DOUBLE PRECISION NOT NULL DEFAULT 1.0, created_at TEXT NOT NULL,
        UNIQUE (src_table, src_id, dst_entity_kind, dst_entity_key, edge_type)
      );
      CREATE INDEX memory_edges_entity ON §.memory_edges (user_id, agent_id, dst_entity_key, dst_entity_kind);
      CREATE TABLE §.memory_consolidation_events (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_id TEXT, pass TEXT NOT NULL, decision TEXT NOT NULL, fact_id BIGINT NOT NULL,
        other_id BIGINT, reason TEXT NOT NULL, model TEXT, model_verdict TEXT, created_at TEXT NOT NULL
      );
      CREATE INDEX memory_consolidation_scope ON §.memory_consolidation_events (user_id, agent_id, id DESC);
      CREATE TABLE §.user_profile (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id TEXT NOT NULL, agent_key TEXT NOT NULL DEFAULT '', key TEXT NOT NULL, value TEXT NOT NULL,
        created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
        UNIQUE (user_id, agent_key, key)
      );
      CREATE TABLE §.memory_vectors (
        memory_id BIGINT PRIMARY KEY REFERENCES §.memories (id) ON DELETE CASCADE,
        user_id TEXT NOT NULL, agent_id TEXT, content_hash TEXT NOT NULL, embedding BYTEA NOT NULL
      );
      CREATE INDEX memory_vectors_hash ON §.memory_vectors (user_id, agent_id, content_hash);
      CREATE TABLE §.memory_settings (key TEXT PRIMARY KEY, value TEXT NOT NULL)`),
  },
  {
    domain: 'memory',
    version: 2,
    name: 'memory_text_log: change log of searchable text for the lexical index (inserts, text updates, deletes), by transaction id',
    // Every insert, change of content or category, and delete appends (scope, memory id, the writer's transaction id).
    // Readers use the oldest transaction still running as their position, so a transaction that commits after a
    // reader looked (with a lower id or sequence number) is still seen the next time. Every 1,000th entry prunes the
    // entries 20,000 behind and records the newest pruned transaction id, so a reader behind it reloads.
    up: async (tx, { t }) => {
      const LOG = t('memory_text_log');
      const STATE = t('memory_text_log_state');
      await tx.run(`CREATE TABLE ${LOG} (
        seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, xid BIGINT NOT NULL DEFAULT (pg_current_xact_id()::text::bigint),
        user_id TEXT NOT NULL, agent_key TEXT NOT NULL, memory_id BIGINT NOT NULL)`);
      await tx.run(`CREATE INDEX memory_text_log_scope ON ${LOG} (user_id, agent_key, xid)`);
      await tx.run(`CREATE TABLE ${STATE} (id INTEGER PRIMARY KEY CHECK (id = 1), pruned_before BIGINT NOT NULL)`);
      await tx.run(`INSERT INTO ${STATE} (id, pruned_before) VALUES (1, 0)`);
      await tx.run(`CREATE FUNCTION ${t('memory_text_log_fn')}() RETURNS trigger LANGUAGE plpgsql AS $fn$
        DECLARE n BIGINT; cut BIGINT;
        BEGIN
          IF TG_OP = 'UPDATE' AND OLD.content IS NOT DISTINCT FROM NEW.content AND OLD.category IS NOT DISTINCT FROM NEW.category THEN RETURN NULL; END IF;
          IF TG_OP = 'DELETE' THEN
            INSERT INTO ${LOG} (user_id, agent_key, memory_id) VALUES (OLD.user_id, COALESCE(OLD.agent_id, ''), OLD.id) RETURNING seq INTO n;
          ELSE
            INSERT INTO ${LOG} (user_id, agent_key, memory_id) VALUES (NEW.user_id, COALESCE(NEW.agent_id, ''), NEW.id) RETURNING seq INTO n;
          END IF;
          IF n % 1000 = 0 THEN
            SELECT max(xid) INTO cut FROM ${LOG} WHERE seq <= n - 20000;
            IF cut IS NOT NULL THEN
              DELETE FROM ${LOG} WHERE seq <= n - 20000;
              UPDATE ${STATE} SET pruned_before = GREATEST(pruned_before, cut + 1) WHERE id = 1;
            END IF;
          END IF;
          RETURN NULL;
        END
      $fn$`);
      await tx.run(`CREATE TRIGGER memories_text_log AFTER INSERT OR DELETE OR UPDATE OF content, category ON ${t('memories')} FOR EACH ROW EXECUTE FUNCTION ${t('memory_text_log_fn')}()`);
    },
  },
  {
    domain: 'memory',
    version: 3,
    name: 'memory_text_index: saved lexical index snapshots, dropped on delete or content change',
    // One snapshot per scope (MemoryStorage.saveTextIndex). The trigger drops a scope's snapshot when one of its
    // rows is deleted or its content changes; it and the save take the same per-scope transaction lock, so a save
    // that checked the log before a concurrent delete committed is removed by that delete (never left holding
    // text the table no longer has).
    up: async (tx, { t }) => {
      const INDEX = t('memory_text_index');
      await tx.run(`CREATE TABLE ${INDEX} (user_id TEXT NOT NULL, agent_key TEXT NOT NULL, data BYTEA NOT NULL, PRIMARY KEY (user_id, agent_key))`);
      await tx.run(`CREATE FUNCTION ${t('memory_text_index_fn')}() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
          IF TG_OP = 'UPDATE' AND OLD.content IS NOT DISTINCT FROM NEW.content THEN RETURN NULL; END IF;
          PERFORM pg_advisory_xact_lock(hashtextextended('minara.memory_text_index:' || length(OLD.user_id) || ':' || OLD.user_id || COALESCE(OLD.agent_id, ''), 0));
          DELETE FROM ${INDEX} WHERE user_id = OLD.user_id AND agent_key = COALESCE(OLD.agent_id, '');
          RETURN NULL;
        END
      $fn$`);
      await tx.run(`CREATE TRIGGER memories_text_index AFTER DELETE OR UPDATE OF content ON ${t('memories')} FOR EACH ROW EXECUTE FUNCTION ${t('memory_text_index_fn')}()`);
    },
  },
  {
    domain: 'memory',
    version: 4,
    name: "user_profile.set_by: who set an entry ('user' or 'agent'); the person's value wins",
    up: sql(`ALTER TABLE §.user_profile ADD COLUMN set_by TEXT NOT NULL DEFAULT 'user' CHECK (set_by IN ('user', 'agent'))`),
  },
];
