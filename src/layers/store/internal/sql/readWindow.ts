/**
 * The SQL store's window read as a PL/pgSQL function, in each shape a migration created. Migration
 * 7 reads the conversation's counters, state and window. Migration 8 adds its settings. Migration
 * 11 adds its user's facts and latest other conversations. Migration 12 also reads a new
 * conversation of the user a context names. Migration 14 reads each listed conversation's opening
 * in index order. Migration 17 adds the conversation's incarnation. Migration 18 keeps its plan
 * generic (`plan_cache_mode`), so a migration that recreates it sets that again.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What the function returns besides the window: nothing, the settings, or the settings and the
 * user's sections. `named` also reads a new conversation of the user it names. `opening` reads as
 * `named`, with each listed conversation's first user message read by `opening`.
 */
type Shape = "plain" | "settings" | "users" | "named" | "opening" | "incarnation"

/** Whether the function reads a new conversation of the user it names. */
const readsNamed = (shape: Shape) => shape === "named" || shape === "opening" || shape === "incarnation"

/** Whether the function returns the conversation's incarnation. */
const readsIncarnation = (shape: Shape) => shape === "incarnation"

/** Whether the digest reads each listed conversation's opening in index order. */
const readsOpening = (shape: Shape) => shape === "opening" || shape === "incarnation"

/** Whether the function returns the user's sections. */
const readsUser = (shape: Shape) => shape === "users" || readsNamed(shape)

/** The longest `ConversationEntry.about`, in characters. */
export const aboutLength = 200

/**
 * The user's sections: user id, facts cursor, live facts (latest said first), and the user's
 * `p_digest` latest other conversations with the start of each one's first user message. A
 * conversation without a user gets null columns at no cost, since a `CASE` evaluates its subqueries
 * only when reached. Every subquery filters on the user first.
 */
const userSections = (about: string) =>
  `,
        w.user_id, w.facts_cursor,
        CASE WHEN w.user_id IS NOT NULL THEN (
          SELECT coalesce(json_agg(json_build_object(
            'key', f.key, 'value', f.value, 'category', f.category,
            'said_at', (extract(epoch FROM f.said_at) * 1000)::bigint,
            'conversation_id', f.conversation_id, 'seq', f.seq
          ) ORDER BY f.said_at DESC, f.key COLLATE "C"), '[]'::json)
          FROM chat_memory_user_facts f WHERE f.user_id = w.user_id AND f.value IS NOT NULL
        ) END,
        CASE WHEN w.user_id IS NOT NULL THEN (
          SELECT coalesce(json_agg(json_build_object(
            'conversation_id', d.conversation_id,
            'created_at', (extract(epoch FROM d.created_at) * 1000)::bigint,
            'last_said_at', (extract(epoch FROM d.last_said_at) * 1000)::bigint,
            'message_count', d.message_count,
            'about', ${about}
          ) ORDER BY d.last_said_at DESC, d.conversation_id COLLATE "C"), '[]'::json)
          FROM (
            SELECT o.conversation_id, o.created_at, o.last_said_at, o.message_count, o.system_prefix_seq
            FROM chat_memory_conversations o
            WHERE o.user_id = w.user_id AND o.conversation_id <> p_id
            ORDER BY o.last_said_at DESC, o.conversation_id COLLATE "C"
            LIMIT greatest(0, p_digest)
          ) d
        ) END`

/**
 * The start of the first user message past its system prefix of conversation `c` (a row alias) of
 * user `u` (an expression), as SQL: the filter in the scan.
 */
const scannedOpening = (u: string, c: string): string =>
  `SELECT left(a.content, ${aboutLength}) FROM chat_memory_messages a
      WHERE a.user_id = ${u} AND a.conversation_id = ${c}.conversation_id AND a.seq > ${c}.system_prefix_seq
        AND a.role = 'user'
      ORDER BY a.seq LIMIT 1`

/** How many of a conversation's first messages `opening` looks through in index order. */
const openingSpan = 8

/**
 * What conversation `c` of user `u` was about, as SQL: that message looked for among the first
 * `openingSpan` messages in index order first, then by `scannedOpening`. With the filter in the
 * scan, the planner may read and sort the whole conversation when it expects few rows to pass.
 */
export const opening = (u: string, c: string): string =>
  `coalesce((
      SELECT left(h.content, ${aboutLength}) FROM (
        SELECT a.user_id, a.role, a.content, a.seq FROM chat_memory_messages a
        WHERE a.conversation_id = ${c}.conversation_id AND a.seq > ${c}.system_prefix_seq
        ORDER BY a.seq LIMIT ${openingSpan}
      ) h
      WHERE h.user_id = ${u} AND h.role = 'user' ORDER BY h.seq LIMIT 1
    ), (${scannedOpening(u, c)}), '')`

/** What a listed conversation of the digest was about, as each shape reads it. */
const digestOpening = (shape: Shape): string =>
  readsOpening(shape) ? opening("w.user_id", "d") : `coalesce((${scannedOpening("w.user_id", "d")}), '')`

/**
 * The conversation's row. If it is not stored and `p_user` names a user, it is a new conversation
 * of that user: no message, the initial summary state, started now. So a new conversation's context
 * is one read too, with its settings and user's sections.
 */
const namedConversation = (shape: Shape) =>
  `cv AS (
        SELECT x.last_seq, x.message_count, x.system_count, x.user_count, x.assistant_count, x.tool_count,
          x.summary_count, x.token_count, x.system_prefix_seq, x.first_turn_role, x.narrative, x.facts, x.layers,
          x.summary_cursor, x.summary_version, x.summary_updated_at, x.created_at, x.updated_at, x.user_id,
          x.facts_cursor${readsIncarnation(shape) ? ", x.incarnation" : ""}
        FROM chat_memory_conversations x WHERE x.conversation_id = p_id
        UNION ALL
        SELECT 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL::text, '', '[]'::jsonb, '[]'::jsonb, 0, 0, NULL::timestamptz, now(),
          now(), p_user, 0${readsIncarnation(shape) ? ", 0::bigint" : ""}
        WHERE p_user IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM chat_memory_conversations y WHERE y.conversation_id = p_id)
      ), `

/**
 * `getContext`'s window read as a function, so its plan is made once per session. PL/pgSQL caches
 * its statements' plans. `@effect/sql-pg` sends every statement unnamed, so a plain statement is
 * planned at every call, about a third of its cost on PostgreSQL.
 *
 * It returns one row:
 * - the conversation's counters and summary state;
 * - `window_after`, where the window starts;
 * - `window_floor`, the seq it reads above: the start, or a bound narrowing the index range to the
 *   rows the page can hold;
 * - `window_limit`, the most rows the page reads: `windowPageSize` plus one, in the same float8
 *   arithmetic;
 * - `window_rows`, how many the page held;
 * - `messages`, one JSON array (times in epoch ms) of the leading system messages and the window.
 *   The window is the newest messages holding more than the token limit (summaries aside), back
 *   to a user message.
 *
 * From migration 8, the row ends with the stored settings (`readWindowSettings`). From migration
 * 11, the user's sections follow (`readWindowUsers`). A database keeps what a migration created, so
 * changing the read takes a new migration that recreates the function.
 */
const readWindowFunction = (sql: SqlClient.SqlClient, shape: Shape) =>
  sql`CREATE OR REPLACE FUNCTION chat_memory_read_window(
      p_id text, p_cursor boolean, p_token_limit float8, p_narrow boolean${
    sql.literal(
      shape === "users"
        ? ", p_digest integer DEFAULT 0"
        : readsNamed(shape)
        ? ", p_digest integer DEFAULT 0, p_user text DEFAULT NULL"
        : ""
    )
  })
    RETURNS TABLE (
      last_seq bigint, message_count bigint, system_count bigint, user_count bigint, assistant_count bigint,
      tool_count bigint, summary_count bigint, token_count bigint, system_prefix_seq bigint, first_turn_role text,
      narrative text, facts jsonb, layers jsonb, summary_cursor bigint, summary_version bigint,
      summary_updated_at timestamptz, created_at timestamptz, updated_at timestamptz,
      window_after bigint, window_limit bigint, window_floor bigint, window_rows bigint, messages json${
    sql.literal(
      shape === "plain"
        ? ""
        : shape === "settings"
        ? ",\n      settings jsonb"
        : ",\n      settings jsonb, user_id text, facts_cursor bigint, user_facts json, digest json" +
          (readsIncarnation(shape) ? ", incarnation bigint" : "")
    )
  })
    LANGUAGE plpgsql STABLE AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY
      WITH ${sql.literal(readsNamed(shape) ? namedConversation(shape) : "")}c AS (
        SELECT cv.last_seq, cv.message_count, cv.system_count, cv.user_count, cv.assistant_count, cv.tool_count,
          cv.summary_count, cv.token_count, cv.system_prefix_seq, cv.first_turn_role, cv.narrative, cv.facts,
          cv.layers, cv.summary_cursor, cv.summary_version, cv.summary_updated_at, cv.created_at, cv.updated_at,${
    sql.literal(
      (readsUser(shape) ? "\n          cv.user_id, cv.facts_cursor," : "") +
        (readsIncarnation(shape) ? " cv.incarnation," : "")
    )
  }
          CASE WHEN p_cursor THEN GREATEST(cv.summary_cursor, cv.system_prefix_seq) ELSE cv.system_prefix_seq END
            AS window_after,
          LEAST(10000, GREATEST(32, CEIL((2 * GREATEST(0, p_token_limit)) /
            CASE WHEN cv.message_count = 0 THEN 1 ELSE GREATEST(1, cv.token_count::float8 / cv.message_count) END) + 16)
          )::bigint + 1 AS window_limit
        FROM ${sql.literal(readsNamed(shape) ? "cv" : "chat_memory_conversations cv WHERE cv.conversation_id = p_id")}
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
      shape === "plain"
        ? ""
        : ",\n        (SELECT s.settings FROM chat_memory_settings s WHERE s.conversation_id = p_id)" +
          (readsUser(shape) ? userSections(digestOpening(shape)) : "") +
          (readsIncarnation(shape) ? ",\n        w.incarnation" : "")
    )
  }
      FROM w;
    END
    $$`

/** Migration 7: the window read as a function. */
export const createReadWindow = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* readWindowFunction(sql, "plain")
})

/** Migration 8: the window read with the conversation's settings. */
// The settings decide a context's budget, K and view. Returning them here keeps a context to one
// round trip. The function's columns change, so it is dropped and created again.
export const readWindowSettings = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean)`
  yield* readWindowFunction(sql, "settings")
})

// The read adds the conversation's user and facts cursor and, with a user, the user's facts and
// latest other conversations. A context with user sections thus stays one round trip. `p_digest` says how many
// conversations to list; its default 0 lets a call of the older shape still resolve. The columns
// change, so the function is dropped and created again.
/** Migration 11: the window read with the user's sections. */
export const readWindowUsers = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean)`
  yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean, integer)`
  yield* readWindowFunction(sql, "users")
})

// The read takes the user a context names. For a conversation not stored yet, it returns a new
// conversation of that user, with settings, facts and latest conversations. A new conversation's
// context is thus one read too. `p_user` defaults to null, so a call of the older shape still
// resolves. The parameters change, so the function is dropped and created again.
/** Migration 12: the window read of a new conversation of a named user. */
export const readWindowNamed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean, integer)`
  yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean, integer, text)`
  yield* readWindowFunction(sql, "named")
})

// The digest reads each listed conversation's first user message from its first messages in index
// order (`opening`). The function's shape is unchanged, so it is replaced in place.
/** Migration 14: the window read, each listed conversation's opening read in index order. */
export const readWindowOpening = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* readWindowFunction(sql, "opening")
})

// A conversation deleted and written again has another incarnation, and the window read returns
// it, so a summarization read from one life never commits to the next. The function's columns
// change, so it is dropped and created again.
/** Migration 17: the window read with the conversation's incarnation. */
export const readWindowIncarnation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP FUNCTION IF EXISTS chat_memory_read_window(text, boolean, float8, boolean, integer, text)`
  yield* readWindowFunction(sql, "incarnation")
})
