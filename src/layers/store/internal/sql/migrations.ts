/**
 * The SQL store's schema, as `@effect/sql` migrations in the PostgreSQL 15 dialect, which PGlite
 * also runs.
 *
 * Every table's primary key starts with `conversation_id`, and every statement names one
 * conversation. So the tables can be distributed by `conversation_id`. A user's conversation
 * carries the user id in every table (`10_users`). A migration that rewrites existing rows pages
 * through the conversations, working on a page of them or one at a time.
 */
import { Migrator, SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import {
  createReadWindow,
  readWindowIncarnation,
  readWindowNamed,
  readWindowOpening,
  readWindowSettings,
  readWindowUsers
} from "./readWindow.js"
import { backfill } from "./search.js"
import { createUserSearch } from "./userSearch.js"

/** The private table of applied migrations, so a host's own migrations never clash with these. */
export const migrationsTable = "chat_memory_migrations"

const createTables = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // One row per conversation: the counters appends maintain, and the summary state. Its row lock
  // serializes seq assignment. The summary state changes only by compare-and-set under that lock.
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
  // Every read uses the primary key: a range scan of one conversation by seq.
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

// The summarization leases: one row per conversation being summarized. A conditional upsert takes
// it and the holder deletes it when done, so the table holds only leases in force. It is kept out of
// the conversation row, which every append locks and updates. So taking a lease neither waits for
// appends nor rewrites that row. The table is unlogged, since a lease is worth nothing after a
// crash. Crash recovery empties it, and its holders are gone or about to find out. Commits touching
// only this table then skip the WAL flush.
const createLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNLOGGED TABLE chat_memory_leases (
    conversation_id text PRIMARY KEY,
    lease_owner text NOT NULL,
    lease_until timestamptz NOT NULL
  )`
})

// Per-conversation settings, kept apart from the conversation row. An app may configure a
// conversation before its first message, and only the first append creates the row. Settings are
// deleted with the conversation, in the same transaction. Each summarization record also says
// whether its summary was cut to the cap; existing records get false.
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

// The lexical search (`searchMessages`): a `tsvector` of each searchable message's terms, and a GIN
// index over it. The column is written with the message and cannot be generated, since the terms
// are the library's own, not a text search configuration's. Existing messages are indexed here.
// Leading system messages and summary messages keep a null vector. They are never hits and count
// in no term's frequency. The index takes new entries in a small pending list (256 kB). The append
// that fills the list merges it, since PGlite runs no autovacuum. Appends then cost about what they
// cost without the index. On PostgreSQL, 1,000 messages take 37 ms, against 51 ms without the list.
// A search reads at most 256 kB of pending entries.
const addSearch = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chat_memory_messages ADD COLUMN search tsvector NULL`
  yield* sql`CREATE INDEX chat_memory_messages_search ON chat_memory_messages
    USING gin (search) WITH (fastupdate = on, gin_pending_list_limit = 256)`
  yield* backfill(sql)
})

// Hybrid recall's message vectors: one row per message and embedding model, a plain `real[]` of
// unit length. Cosine similarity is then a dot product, computed in SQL over one conversation's
// rows. Plain arrays, not pgvector's type: neither Debian's PostgreSQL packages nor this PGlite
// build ship the extension. The scan is bounded by one conversation anyway. The primary key finds
// both the newest embedded seq (what is pending) and the scan's rows.
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

// The summarization record names, by seq, the `summary` message its run appended. With the
// message's `summaryMetadataId` (the record's version), the link runs both ways. Null for a run
// that appended none. Existing records are linked here to the messages naming them, one
// conversation at a time, among those holding summary messages. `IF NOT EXISTS`, since a database
// rewound to an earlier migration may already hold the column.
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

// The search terms are stemmed by the Porter stemmer, so "booked" and "booking" meet. Every stored
// vector is rewritten from its message, as in `addSearch`: a conversation and a page per statement.
const stemSearch = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* backfill(sql)
})

// Users. A conversation may belong to a user, bound by its first write that names one. Existing
// conversations have none. Every table holding a conversation's data carries the user id. So every
// user-scoped statement filters on it first, and a distributed schema can co-locate a user's rows.
// `last_said_at` orders a user's conversations. It is the latest `created_at` of their non-summary
// messages, or the conversation's start if it holds none. `facts_cursor` is the seq up to which the
// user's facts were read from the conversation. The user facts table has one row per key, and a
// removal is kept as a null value. `IF NOT EXISTS`, since a database rewound to an earlier migration
// may already hold them.
/** The tables holding a conversation's data besides its row, each with the conversation's user. */
const userTables = [
  "chat_memory_messages",
  "chat_memory_summarizations",
  "chat_memory_settings",
  "chat_memory_embeddings"
]

const addUsers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chat_memory_conversations
    ADD COLUMN IF NOT EXISTS user_id text NULL,
    ADD COLUMN IF NOT EXISTS last_said_at timestamptz NULL,
    ADD COLUMN IF NOT EXISTS facts_cursor bigint NOT NULL DEFAULT 0`
  for (const table of userTables) yield* sql`ALTER TABLE ${sql(table)} ADD COLUMN IF NOT EXISTS user_id text NULL`
  const conversations = SqlSchema.findAll({
    Request: Schema.String,
    Result: Schema.Struct({ conversation_id: Schema.String }),
    execute: (after) =>
      sql`SELECT conversation_id FROM chat_memory_conversations
        WHERE conversation_id > ${after} ORDER BY conversation_id LIMIT 500`
  })
  let after = ""
  for (;;) {
    const page = yield* conversations(after)
    const last = page[page.length - 1]
    if (last === undefined) break
    yield* sql`UPDATE chat_memory_conversations c SET last_said_at = coalesce((
        SELECT max(m.created_at) FROM chat_memory_messages m
        WHERE m.conversation_id = c.conversation_id AND m.role <> 'summary'
      ), c.created_at)
      WHERE c.conversation_id = ANY(${page.map((row) => row.conversation_id)}::text[]) AND c.last_said_at IS NULL`
    after = last.conversation_id
  }
  yield* sql`ALTER TABLE chat_memory_conversations ALTER COLUMN last_said_at SET NOT NULL`
  // A user's conversations, the latest said first, ties by id in code point order. The list, the
  // digest and the search across them read this index. Conversations without a user stay out.
  yield* sql`CREATE INDEX IF NOT EXISTS chat_memory_conversations_user ON chat_memory_conversations
    (user_id, last_said_at DESC, conversation_id COLLATE "C") WHERE user_id IS NOT NULL`
  yield* sql`CREATE TABLE IF NOT EXISTS chat_memory_user_facts (
    user_id text NOT NULL,
    key text NOT NULL,
    value text NULL,
    category text NOT NULL,
    said_at timestamptz NOT NULL,
    conversation_id text NULL,
    seq bigint NULL,
    PRIMARY KEY (user_id, key)
  )`
})

// A message row holds its text and its search vector, and a user's message holds each term twice.
// Past 2 kB, PostgreSQL compresses a row's largest values, and a search decompresses every vector it
// reads. Rows up to a page (8 kB) are now kept as written. Rows already stored keep their form.
const inlineMessages = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chat_memory_messages SET (toast_tuple_target = 8160)`
})

// A process of the version before users inserts conversations without `last_said_at`. So that it
// keeps writing while a rolling deploy replaces it, the column takes the insert's time.
const saidAtDefault = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE chat_memory_conversations ALTER COLUMN last_said_at SET DEFAULT now()`
})

// Each life of a conversation gets a number of its own from a sequence: the rows stored get theirs
// now, and each new row (of any version's process) by default. The compare-and-sets of summaries and
// facts check it, so work read before a deletion never lands in the conversation written again.
const conversationIncarnation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SEQUENCE IF NOT EXISTS chat_memory_incarnations`
  yield* sql`ALTER TABLE chat_memory_conversations
    ADD COLUMN IF NOT EXISTS incarnation bigint NOT NULL DEFAULT nextval('chat_memory_incarnations')`
  yield* readWindowIncarnation
})

// PL/pgSQL plans a statement again at every call while it estimates a custom plan cheaper than the
// generic one. It did so for user-scoped reads, which then spent a millisecond or more planning.
// The two functions find rows by key (a conversation, a user) within bounds read from the rows
// themselves, so the generic plan reads the same indexes whatever the arguments. A migration that
// recreates either function sets this again.
const genericPlans = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER FUNCTION chat_memory_read_window(text, boolean, float8, boolean, integer, text)
    SET plan_cache_mode = force_generic_plan`
  yield* sql`ALTER FUNCTION chat_memory_user_search(text, text[], text, bigint, integer)
    SET plan_cache_mode = force_generic_plan`
})

/**
 * The migrations by id, in order. A database of an earlier version has run a prefix of them.
 */
export const migrations = {
  "1_create_tables": createTables,
  "2_create_leases": createLeases,
  "3_create_settings": createSettings,
  "4_add_search": addSearch,
  "5_add_embeddings": addEmbeddings,
  "6_link_summary_message": linkSummaryMessage,
  "7_create_read_window": createReadWindow,
  "8_read_window_settings": readWindowSettings,
  "9_stem_search": stemSearch,
  "10_users": addUsers,
  "11_read_window_users": readWindowUsers,
  "12_read_window_named": readWindowNamed,
  "13_inline_messages": inlineMessages,
  "14_read_window_opening": readWindowOpening,
  "15_user_search_function": createUserSearch,
  "16_said_at_default": saidAtDefault,
  "17_conversation_incarnation": conversationIncarnation,
  "18_generic_plans": genericPlans
}

/** Applies the pending migrations. A no-op on an up-to-date database. */
export const runMigrations = Migrator.make({})({
  loader: Migrator.fromRecord(migrations),
  table: migrationsTable
})
