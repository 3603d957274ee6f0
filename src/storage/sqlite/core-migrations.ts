import type { SqliteMigration } from './handle';

/**
 * Migrations of the `core` domain: instance metadata, key/value flags, audit log, approvals, grants,
 * sessions and messages. Append new versions at the end; never edit one that has shipped.
 */
export const coreMigrations: readonly SqliteMigration[] = [
  {
    domain: 'core',
    version: 1,
    name: 'instance, kv, audit, approvals, grants, conversations',
    up(db) {
      db.exec(`
        CREATE TABLE instance_meta (
          singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
          instance_id TEXT NOT NULL,
          hmac_key BLOB NOT NULL,
          created_at TEXT NOT NULL
        ) STRICT;

        CREATE TABLE kv (
          key TEXT PRIMARY KEY,
          value TEXT NOT NULL,
          updated_at TEXT NOT NULL
        ) STRICT;

        CREATE TABLE audit_log (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          at TEXT NOT NULL,
          tool_name TEXT NOT NULL,
          tier INTEGER NOT NULL,
          source TEXT NOT NULL,
          session_id TEXT,
          trace_id TEXT,
          tool_call_id TEXT,
          approval_id TEXT,
          decision TEXT NOT NULL,
          code TEXT,
          reason TEXT,
          duration_ms REAL NOT NULL,
          args_json TEXT NOT NULL,
          mode TEXT
        ) STRICT;
        CREATE INDEX audit_log_session ON audit_log (session_id);
        CREATE INDEX audit_log_trace ON audit_log (trace_id);
        CREATE INDEX audit_log_tool_at ON audit_log (tool_name, at);

        CREATE TABLE approvals (
          id TEXT PRIMARY KEY,
          tool_name TEXT NOT NULL,
          tool_call_id TEXT NOT NULL,
          input_hash TEXT NOT NULL,
          input_json TEXT NOT NULL,
          tier INTEGER NOT NULL,
          session_id TEXT,
          trace_id TEXT,
          source TEXT NOT NULL,
          reason TEXT NOT NULL,
          status TEXT NOT NULL,
          created_at TEXT NOT NULL,
          expires_at TEXT NOT NULL,
          decided_at TEXT,
          decision_reason TEXT,
          executed_at TEXT,
          signature TEXT NOT NULL,
          decision_signature TEXT
        ) STRICT;
        CREATE INDEX approvals_status_created ON approvals (status, created_at);
        CREATE INDEX approvals_session ON approvals (session_id);

        CREATE TABLE grants (
          id TEXT PRIMARY KEY,
          kind TEXT NOT NULL,
          tool_name TEXT NOT NULL,
          session_id TEXT,
          sources_json TEXT,
          arg_limits_json TEXT,
          created_at TEXT NOT NULL,
          expires_at TEXT,
          revoked_at TEXT,
          note TEXT
        ) STRICT;
        CREATE INDEX grants_tool ON grants (tool_name);
        CREATE INDEX grants_session ON grants (session_id);

        CREATE TABLE sessions (
          id TEXT PRIMARY KEY,
          user_id TEXT,
          title TEXT,
          created_at TEXT NOT NULL,
          updated_at TEXT NOT NULL,
          metadata_json TEXT
        ) STRICT;
        CREATE INDEX sessions_updated ON sessions (updated_at);
        CREATE INDEX sessions_user_updated ON sessions (user_id, updated_at);

        CREATE TABLE messages (
          session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
          seq INTEGER NOT NULL,
          role TEXT NOT NULL,
          json TEXT NOT NULL,
          turn_id TEXT,
          created_at TEXT NOT NULL,
          PRIMARY KEY (session_id, seq)
        ) STRICT;
      `);
    },
  },
  {
    domain: 'core',
    version: 2,
    name: 'approvals: signed execution transition',
    up(db) {
      db.exec('ALTER TABLE approvals ADD COLUMN execution_signature TEXT');
    },
  },
];
