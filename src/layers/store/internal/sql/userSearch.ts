/**
 * The lexical search across a user's conversations (`UserStore.searchMessages`). It applies
 * `search.ts`'s BM25 ranking to all the user's messages at once, as one index of them would. The
 * in-memory store's `SearchIndex.searchAcross` does the same. It reads the user-scoped terms
 * (`userTerms.ts`), so the posting lists it reads hold only that user's messages.
 *
 * The whole-index counts are summed over the user's conversations: messages from their counters,
 * and each term's messages through the user's postings, up to `frequencyCap`. The sample for the
 * mean message length and common terms' estimates is the user's newest `sampleSize` messages. It
 * takes the most recently said conversations, newest first, until their counters fill it. Newest
 * messages holding a common term are sought in each of those conversations, as in memory. A search
 * is thus one statement, however many conversations and messages the user has. It reads the user's
 * conversation rows (an index range), the sample, a posting list per term, and the candidates.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { ConversationId } from "../../../../domain/ConversationId.js"
import type { UserId } from "../../../../domain/UserId.js"
import type { UserStore } from "../../../../services/UserStore.js"
import {
  b,
  candidateBudget,
  clampLimit,
  frequencyCap,
  k1,
  queryTerms,
  recentCandidates,
  recentSpan,
  recentWindow
} from "../search.js"
import { SqlInt } from "./rows.js"
import { escapedTerm, sampleSize } from "./search.js"
import { upperBound } from "./statements.js"
import { userScopeOf } from "./userTerms.js"

const HitRow = Schema.Struct({ conversation_id: ConversationId, seq: SqlInt, score: Schema.Number })

/**
 * The search as the body of `chat_memory_user_search`, over its parameters: the user, the query's
 * terms, the current conversation and the bound of its seqs, and the most hits.
 *
 * As `makeSearch`, with a row per conversation in `convs`. `newer` counts the messages of the
 * conversations said after it, placing it in the sample. `before` bounds its seqs: below the
 * query's `before` in the current conversation. Every read of messages filters on the user, and
 * the user's conversations are read by the index on `user_id`. Each of the user's messages holds
 * every term twice (both scopes), as do all those the mean length covers. So BM25's length ratio
 * is unchanged.
 */
const searchBody = `WITH convs AS MATERIALIZED (
        SELECT c.conversation_id, c.last_seq,
          greatest(0, c.message_count - c.summary_count - c.system_prefix_seq) AS searchable,
          coalesce(sum(c.message_count) OVER (ORDER BY c.last_said_at DESC, c.conversation_id COLLATE "C"
            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS newer,
          row_number() OVER (ORDER BY c.last_said_at DESC, c.conversation_id COLLATE "C") AS ord,
          CASE WHEN c.conversation_id = p_current THEN p_before ELSE ${Number.MAX_SAFE_INTEGER}::bigint
            END AS before
        FROM chat_memory_conversations c WHERE c.user_id = p_user
      ), totals AS MATERIALIZED (
        SELECT greatest(1, coalesce(sum(convs.searchable), 0))::float8 AS n FROM convs
      ), sample AS MATERIALIZED (
        SELECT s.search FROM convs c CROSS JOIN LATERAL (
          SELECT m.search FROM chat_memory_messages m
          WHERE m.user_id = p_user AND m.conversation_id = c.conversation_id
            AND m.seq > c.last_seq - (${sampleSize} - c.newer) AND m.search IS NOT NULL
          ORDER BY m.seq DESC LIMIT ${sampleSize}
        ) s
        WHERE c.newer < ${sampleSize}
      ), sampled AS MATERIALIZED (
        SELECT greatest(1, count(*))::float8 AS size, greatest(1, coalesce(avg(length(search)), 1))::float8 AS len
        FROM sample
      ), terms AS MATERIALIZED (
        SELECT t.i, t.q, least(totals.n, totals.n * h.hits / sampled.size) AS estimate,
          totals.n * h.hits / sampled.size >= ${2 * frequencyCap} AS common
        FROM totals CROSS JOIN sampled
        CROSS JOIN (
          SELECT u.i, ('''' || ${userScopeOf("p_user")} || ':' || u.term || '''')::tsquery AS q
          FROM unnest(p_terms) WITH ORDINALITY AS u(term, i) OFFSET 0
        ) t
        CROSS JOIN LATERAL (
          SELECT count(*) FILTER (WHERE s.search @@ t.q)::float8 AS hits FROM sample s
        ) h
      ), found AS MATERIALIZED (
        SELECT t.i, f.conversation_id, f.seq FROM terms t CROSS JOIN LATERAL (
          SELECT m.conversation_id, m.seq FROM chat_memory_messages m
          WHERE m.search @@ t.q AND m.user_id = p_user LIMIT ${frequencyCap}
        ) f
        WHERE NOT t.common
      ), ordered AS MATERIALIZED (
        SELECT t.i, t.q, t.estimate, c.counted,
          sum(coalesce(c.counted, ${frequencyCap})) OVER (ORDER BY c.counted, t.i) AS reach
        FROM terms t CROSS JOIN LATERAL (
          SELECT CASE WHEN t.common THEN NULL ELSE (SELECT count(*) FROM found f WHERE f.i = t.i) END AS counted
        ) c
      ), weights AS MATERIALIZED (
        SELECT o.i, o.q, o.reach <= ${candidateBudget} AS rare,
          ln(1 + greatest(0, totals.n - e.df + 0.5) / (e.df + 0.5)) AS idf
        FROM ordered o CROSS JOIN totals
        CROSS JOIN LATERAL (
          SELECT CASE WHEN o.counted < ${frequencyCap} THEN o.counted::float8
            ELSE least(totals.n, greatest(${frequencyCap}::float8, o.estimate)) END AS df
        ) e
      ), candidates AS (
        SELECT f.conversation_id, f.seq FROM weights w
        JOIN found f ON f.i = w.i
        JOIN convs c ON c.conversation_id = f.conversation_id
        WHERE w.rare AND f.seq < c.before
        UNION
        (SELECT r.conversation_id, r.seq FROM convs c CROSS JOIN LATERAL (
          SELECT m.conversation_id, m.seq FROM chat_memory_messages m
          WHERE m.user_id = p_user AND m.conversation_id = c.conversation_id AND m.seq < c.before
            AND m.seq > least(c.before - 1, c.last_seq) - ${recentWindow}
            AND m.search IS NOT NULL
            AND EXISTS (SELECT 1 FROM weights w WHERE NOT w.rare AND m.search @@ w.q)
          ORDER BY m.seq DESC LIMIT ${recentCandidates}
        ) r
        WHERE c.newer < ${recentSpan} AND (SELECT bool_or(NOT w.rare) FROM weights w)
        ORDER BY c.ord, r.seq DESC LIMIT ${recentCandidates})
      ), ranked AS (
        SELECT m.conversation_id, m.seq, m.search, length(m.search)::float8 AS len
        FROM candidates c JOIN chat_memory_messages m
          ON m.user_id = p_user AND m.conversation_id = c.conversation_id AND m.seq = c.seq
      )
      SELECT r.conversation_id, r.seq, sum(
          w.idf * f.tf * (${k1}::float8 + 1)
            / (f.tf + ${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * r.len / a.len))
        )::float8 AS score
      FROM ranked r
      CROSS JOIN sampled a
      JOIN weights w ON r.search @@ w.q
      CROSS JOIN LATERAL (SELECT ts_rank_cd('{1,1,1,1}', r.search, w.q)::float8 AS tf) f
      GROUP BY r.conversation_id, r.seq
      ORDER BY score DESC, r.seq DESC, r.conversation_id COLLATE "C"
      LIMIT p_limit`

/**
 * Migration 15: the search as a PL/pgSQL function, run without JIT compilation. A user with
 * thousands of others in the database gets a plan estimated past `jit_above_cost`, and compiling it
 * took ten times as long as running it. Migration 18 makes its plan once per session
 * (`plan_cache_mode`). A database keeps what a migration created, so changing the search takes a
 * new migration that recreates it and sets both again.
 */
export const createUserSearch = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE OR REPLACE FUNCTION chat_memory_user_search(
      p_user text, p_terms text[], p_current text, p_before bigint, p_limit integer
    )
    RETURNS TABLE (conversation_id text, seq bigint, score float8)
    LANGUAGE plpgsql STABLE SET jit = off AS $$
    #variable_conflict use_column
    BEGIN
      RETURN QUERY ${sql.literal(searchBody)};
    END
    $$`
})

/** The search over one `SqlClient`. */
export const makeUserSearch = (sql: SqlClient.SqlClient) => {
  const select = SqlSchema.findAll({
    Request: Schema.Struct({
      user: Schema.String,
      terms: Schema.Array(Schema.String),
      current: Schema.NullOr(Schema.String),
      before: Schema.Number,
      limit: Schema.Number
    }),
    Result: HitRow,
    execute: (q) =>
      sql`SELECT conversation_id, seq, score
        FROM chat_memory_user_search(${q.user}, ${q.terms}::text[], ${q.current}, ${q.before}, ${q.limit})`
  })

  /** The best matches of `query` in the user's conversations, best first, newer first on ties. */
  return (userId: UserId, query: UserStore.SearchQuery) => {
    const terms = queryTerms(query.text)
    if (terms.length === 0) return Effect.succeed<ReadonlyArray<UserStore.SearchHit>>([])
    const current = query.current
    const before = current === undefined || Number.isNaN(current.before) ? 0 : upperBound(current.before)
    return Effect.map(
      select({
        user: userId,
        terms: terms.map(escapedTerm),
        current: current?.conversationId ?? null,
        before,
        limit: clampLimit(query.limit)
      }),
      (rows): ReadonlyArray<UserStore.SearchHit> =>
        rows.map((row) => ({ conversationId: row.conversation_id, seq: row.seq, score: row.score }))
    )
  }
}
