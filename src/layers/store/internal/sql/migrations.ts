/**
 * The schema of the SQL repository, as `@effect/sql` migrations in the PostgreSQL 15 dialect
 * (also run by PGlite).
 *
 * Every table carries `conversation_id` first in its primary key and every statement of the
 * repository names one conversation, so the tables can be distributed by `conversation_id`. (A
 * migration that rewrites existing rows pages through the conversations, then works on one at a
 * time.)
 */
import { Migrator, SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { backfill } from "./search.js"

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

// Per-conversation settings: kept apart from the conversation row, because an application may
// configure a conversation before its first message (the row is created by the first append), and
// deleted with the conversation in the same transaction. The record of each summarization also
// says whether its summary had to be cut to the cap (false for the runs recorded before).
const createSettings = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE chat_memory_settings (
    conversation_id text PRIMARY KEY,
    settings jsonb NOT NULL,
    updated_at timestamptz NOT NULL
  )`
  yield* sql`ALTER TABLE chat_memory_summarizations
    ADD COLUMN summary_truncated boolean NOT NULL DEFAULT false`
})

// The lexical search (`searchMessages`): a `tsvector` of each searchable message's terms, written
// with the message (the terms are the library's own, not a text search configuration's, so the
// column cannot be generated), a GIN index over it, and the messages stored before, indexed here.
// Leading system messages and summary messages keep a null vector: they are never hits and count
// in no term's frequency. The index takes new entries in a small pending list (256 kB), merged
// into it by the append that fills it, since PGlite runs no autovacuum: appends cost about what they
// cost without the index (1,000 messages in 37 ms instead of 51 ms without the list, on
// PostgreSQL), and a search reads at most that much of pending entries.
const addSearch = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chat_memory_messages ADD COLUMN search tsvector NULL`
  yield* sql`CREATE INDEX chat_memory_messages_search ON chat_memory_messages
    USING gin (search) WITH (fastupdate = on, gin_pending_list_limit = 256)`
  yield* backfill(sql)
})

// The message vectors of hybrid recall: one row per message and embedding model, a plain `real[]`
// normalised to unit length (so cosine similarity is a dot product, computed in SQL over one
// conversation's rows). Plain arrays, not pgvector's type: neither Debian's PostgreSQL packages nor
// this PGlite build ship the extension, and the scan is bounded by one conversation. The primary
// key serves both the newest seq embedded (what is pending) and the scan.
const addEmbeddings = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE chat_memory_embeddings (
    conversation_id text NOT NULL,
    model text NOT NULL,
    seq bigint NOT NULL,
    vector real[] NOT NULL,
    PRIMARY KEY (conversation_id, model, seq)
  )`
})

// The summarization record names the `summary` message its run appended, by seq: with the
// message's `summaryMetadataId` (the record's version) the link runs both ways. Null for a run that
// appended none. The records written before are linked here to the messages that name them, one
// conversation at a time (only those that hold summary messages). `IF NOT EXISTS`: a database
// rewound to an earlier migration may hold the column already.
const linkSummaryMessage = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chat_memory_summarizations ADD COLUMN IF NOT EXISTS summary_message_seq bigint NULL`
  const withSummaries = SqlSchema.findAll({
    Request: Schema.String,
    Result: Schema.Struct({ conversation_id: Schema.String }),
    execute: (after) =>
      sql`SELECT conversation_id FROM chat_memory_conversations
        WHERE conversation_id > ${after} AND summary_count > 0 ORDER BY conversation_id LIMIT 500`
  })
  let after = ""
  for (;;) {
    const page = yield* withSummaries(after)
    for (const { conversation_id: id } of page) {
      yield* sql`UPDATE chat_memory_summarizations s SET summary_message_seq = m.seq
        FROM chat_memory_messages m
        WHERE s.conversation_id = ${id} AND m.conversation_id = ${id} AND m.role = 'summary'
          AND m.metadata ->> 'summaryMetadataId' = s.version::text`
    }
    const last = page[page.length - 1]
    if (last === undefined) return
    after = last.conversation_id
  }
})

/**
 * The window read of `getContext` as a function, so that its plan is made once per session (PL/pgSQL
 * caches the plans of its statements; `@effect/sql-pg` sends every statement unnamed, so a plain
 * statement is planned at every call, about a third of its cost on PostgreSQL). One row: the
 * conversation's counters and summary state, where the window starts (`window_after`), the seq it
 * reads above (`window_floor`: the start, or a bound that narrows the index range to the rows the
 * page can hold), how many messages the page holds at most (`window_limit`, computed as
 * `windowPageSize` in `../window.ts` computes it, one more than the page, with the same float8
 * arithmetic), how many it held (`window_rows`), and the leading system messages with the newest
 * messages that hold more than the token limit (summary messages aside) back to a user message, as
 * one JSON array (times in epoch ms). With `withSettings`, the row ends with the conversation's
 * stored settings (`readWindowSettings`). A database that ran a migration keeps what it created: a
 * change to the read is a new migration that creates the function again.
 */
const readWindowFunction = (sql: SqlClient.SqlClient, withSettings: boolean) =>
  sql`CREATE OR REPLACE FUNCTION chat_memory_read_window(
      p_id text, p_cursor boolean, p_token_limit float8, p_narrow boolean)
    RETURNS TABLE (
      last_seq bigint, message_count bigint, system_count bigint, user_count bigint, assistant_count bigint,
      tool_count bigint, summary_count bigint, token_count bigint, system_prefix_seq bigint, first_turn_role text,
      narrative text, facts jsonb, layers jsonb, summary_cursor bigint, summary_version bigint,
      summary_updated_at timestamptz, created_at timestamptz, updated_at timestamptz,
      window_after bigint, window_limit bigint, window_floor bigint, window_rows bigint, messages json${
    sql.literal(withSettings ? ",\n      settings jsonb" : "")
  })
    LANGUAGE plpgsql STABLE AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH c AS (
        SELECT cv.last_seq, cv.message_count, cv.system_count, cv.user_count, cv.assistant_count, cv.tool_count,
          cv.summary_count, cv.token_count, cv.system_prefix_seq, cv.first_turn_role, cv.narrative, cv.facts,
          cv.layers, cv.summary_cursor, cv.summary_version, cv.summary_updated_at, cv.created_at, cv.updated_at,
          CASE WHEN p_cursor THEN GREATEST(cv.summary_cursor, cv.system_prefix_seq) ELSE cv.system_prefix_seq END
            AS window_after,
          LEAST(10000, GREATEST(32, CEIL((2 * GREATEST(0, p_token_limit)) /
            CASE WHEN cv.message_count = 0 THEN 1 ELSE GREATEST(1, cv.token_count::float8 / cv.message_count) END) + 16)
          )::bigint + 1 AS window_limit
        FROM chat_memory_conversations cv WHERE cv.conversation_id = p_id
      ), w AS (
        SELECT c.*,
          CASE WHEN p_narrow THEN GREATEST(c.window_after, c.last_seq - c.window_limit -
            CASE WHEN c.window_after >= c.summary_cursor THEN 0 ELSE c.last_seq - c.message_count END)
          ELSE c.window_after END AS window_floor
        FROM c
      ), page AS (
        SELECT p.seq, p.role, p.content, p.metadata, p.token_count, p.created_at,
          sum(CASE WHEN p.role = 'summary' THEN 0 ELSE p.token_count END) OVER (ORDER BY p.seq DESC)
            - CASE WHEN p.role = 'summary' THEN 0 ELSE p.token_count END AS newer_tokens
        FROM (
          SELECT m.seq, m.role, m.content, m.metadata, m.token_count, m.created_at FROM chat_memory_messages m
          WHERE m.conversation_id = p_id AND m.seq > (SELECT w.window_floor FROM w)
            AND m.seq <= (SELECT w.last_seq FROM w)
          ORDER BY m.seq DESC LIMIT (SELECT w.window_limit FROM w)
        ) p
      ), cut AS (
        SELECT coalesce(max(page.seq) FILTER (WHERE page.role = 'user' AND page.seq <= (
          SELECT min(q.seq) FROM page q WHERE q.newer_tokens <= p_token_limit
        )), 0) AS from_seq, count(*) AS page_rows FROM page
      ), shown AS (
        SELECT m.seq, m.role, m.content, m.metadata, m.token_count, m.created_at FROM chat_memory_messages m
        WHERE m.conversation_id = p_id AND m.seq <= (SELECT w.system_prefix_seq FROM w)
        UNION ALL
        SELECT page.seq, page.role, page.content, page.metadata, page.token_count, page.created_at FROM page
        WHERE page.seq >= (SELECT cut.from_seq FROM cut)
      )
      SELECT w.last_seq, w.message_count, w.system_count, w.user_count, w.assistant_count, w.tool_count,
        w.summary_count, w.token_count, w.system_prefix_seq, w.first_turn_role, w.narrative, w.facts, w.layers,
        w.summary_cursor, w.summary_version, w.summary_updated_at, w.created_at, w.updated_at, w.window_after,
        w.window_limit, w.window_floor, (SELECT cut.page_rows FROM cut), (
          SELECT coalesce(json_agg(json_build_object(
            'seq', shown.seq, 'role', shown.role, 'content', shown.content, 'metadata', shown.metadata,
            'token_count', shown.token_count,
            'created_at', (extract(epoch FROM shown.created_at) * 1000)::bigint
          )), '[]'::json) FROM shown
        )${
    sql.literal(
      withSettings ? ",\n        (SELECT s.settings FROM chat_memory_settings s WHERE s.conversation_id = p_id)" : ""
    )
  }
      FROM w;
    END
    $$`

const createReadWindow = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* readWindowFunction(sql, false)
})

// The window read also returns the conversation's stored settings, so that a context is one round
// trip: the settings decide its budget, K and view, and were a statement of their own before. The
// function's columns change, so it is dropped and created again.
const readWindowSettings = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean)`
  yield* readWindowFunction(sql, true)
})

// The search terms are stemmed by the Porter stemmer since this version ("booked" and "booking"
// meet; before, only plural endings were cut): every stored vector is written again from its
// message, a conversation and a page of messages per statement, as `addSearch` wrote them first.
const stemSearch = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* backfill(sql)
})

/** Applies the pending migrations; a no-op on an up-to-date database. */
export const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord({
    "1_create_tables": createTables,
    "2_create_leases": createLeases,
    "3_create_settings": createSettings,
    "4_add_search": addSearch,
    "5_add_embeddings": addEmbeddings,
    "6_link_summary_message": linkSummaryMessage,
    "7_create_read_window": createReadWindow,
    "8_read_window_settings": readWindowSettings,
    "9_stem_search": stemSearch
  }),
  table: migrationsTable
})
