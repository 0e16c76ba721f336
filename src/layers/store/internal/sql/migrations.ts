/**
 * The schema of the SQL repository, as `@effect/sql` migrations in the PostgreSQL 15 dialect
 * (also run by PGlite).
 *
 * Every table carries `conversation_id` first in its primary key and every statement of the
 * repository names one conversation, so the tables can be distributed by `conversation_id`.
 */
import { Migrator, SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** The private table of applied migrations, so a host's own migrations never clash with ours. */
export const migrationsTable = "chat_memory_migrations"

const createTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per conversation: the counters appends maintain (its row lock serializes seq
  // assignment) and the summary state, which changes only by compare-and-set under that lock.
  yield* sql`CREATE TABLE chat_memory_conversations (
    conversation_id text PRIMARY KEY,
    last_seq bigint NOT NULL DEFAULT 0,
    message_count bigint NOT NULL DEFAULT 0,
    system_count bigint NOT NULL DEFAULT 0,
    user_count bigint NOT NULL DEFAULT 0,
    assistant_count bigint NOT NULL DEFAULT 0,
    tool_count bigint NOT NULL DEFAULT 0,
    summary_count bigint NOT NULL DEFAULT 0,
    token_count bigint NOT NULL DEFAULT 0,
    system_prefix_seq bigint NOT NULL DEFAULT 0,
    first_turn_role text NULL,
    narrative text NOT NULL DEFAULT '',
    facts jsonb NOT NULL DEFAULT '[]'::jsonb,
    layers jsonb NOT NULL DEFAULT '[]'::jsonb,
    summary_cursor bigint NOT NULL DEFAULT 0,
    summary_version bigint NOT NULL DEFAULT 0,
    summary_updated_at timestamptz NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  // The primary key is the index every read uses: a range scan of one conversation by seq.
  yield* sql`CREATE TABLE chat_memory_messages (
    conversation_id text NOT NULL,
    seq bigint NOT NULL,
    role text NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool', 'summary')),
    content text NOT NULL,
    metadata jsonb NOT NULL,
    token_count bigint NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, seq)
  )`
  yield* sql`CREATE TABLE chat_memory_summarizations (
    conversation_id text NOT NULL,
    version bigint NOT NULL,
    from_seq bigint NOT NULL,
    to_seq bigint NOT NULL,
    summary text NOT NULL,
    mode text NOT NULL,
    skill_id text NOT NULL,
    model text NULL,
    input_tokens bigint NOT NULL,
    output_tokens bigint NOT NULL,
    duration_ms bigint NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (conversation_id, version)
  )`
})

// The summarization leases: one row per conversation being summarized, taken by one conditional
// upsert and deleted when the holder is done, so the table holds only the leases in force. Kept
// out of the conversation row, which every append locks and updates: taking a lease neither waits
// for appends nor rewrites that row. Unlogged: a lease is worth nothing after a crash (the server
// empties the table on crash recovery, and its holders are gone or about to find out), and commits
// that touch only this table do not wait for a WAL flush.
const createLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNLOGGED TABLE chat_memory_leases (
    conversation_id text PRIMARY KEY,
    lease_owner text NOT NULL,
    lease_until timestamptz NOT NULL
  )`
})

/** Applies the pending migrations; a no-op on an up-to-date database. */
export const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord({ "1_create_tables": createTables, "2_create_leases": createLeases }),
  table: migrationsTable
})
