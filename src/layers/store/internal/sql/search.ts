/**
 * The SQL store's lexical search: a message's `search` column, a `tsvector` of the shared terms
 * written with the message, and the ranked search over one conversation.
 *
 * The terms are those the in-memory store indexes (`../search.ts`), not a PostgreSQL text search
 * configuration's. PostgreSQL's parser reads `ORD-2024-88417` as `ord`, `-2024`, `-88417`, and
 * `$1,240.00` as `1` and `240.00`. So neither `simple` nor `english` keeps an identifier or an amount
 * whole. The `tsvector` is written in the terms' text form instead: `'term':1,2`, each term once,
 * with one position per occurrence. It is queried with single-term `tsquery`s in the same form. No
 * text search configuration is involved, so PGlite and PostgreSQL 15 answer alike.
 *
 * Each term is scoped by the conversation (`scopeOf`). A term's GIN posting list thus holds one
 * conversation's messages, and a search reads only its own conversation's postings. A message of a
 * conversation with a user also carries terms scoped by the user (`userTerms.ts`). They serve the
 * search across the user's conversations (`userSearch.ts`).
 *
 * Ranking is BM25 over the query's terms (an OR), within `plan`'s bounds (`../search.ts`), as in the
 * in-memory store. PostgreSQL keeps no document frequencies, so each term's is counted through the
 * GIN index, up to `frequencyCap` messages. A more common term's frequency is estimated from the
 * newest `sampleSize` messages, as is the mean message length. Every message of the rarest terms is
 * ranked, up to `candidateBudget` in all. So are the newest `recentCandidates` messages holding
 * another term. A search thus costs about the same on a thousand messages as on a hundred thousand.
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import { MessageMetadata } from "../../../../domain/Message.js"
import type { MessageIndex } from "../../../../services/MessageIndex.js"
import {
  b,
  candidateBudget,
  clampLimit,
  documentTerms,
  frequencyCap,
  k1,
  queryTerms,
  recentCandidates,
  recentWindow,
  searchableText
} from "../search.js"
import { SqlInt } from "./rows.js"
import { upperBound } from "./statements.js"

/**
 * The span of newest seqs that gives the mean message length and each term's estimated frequency.
 * A term this sample extrapolates to more than `2 * frequencyCap` messages is common. It is not
 * counted through the index, and its estimate is its frequency.
 */
export const sampleSize = 500

/**
 * The scope of a conversation's terms in the GIN index: a 53-bit cyrb53 hash of its id, in base 36.
 * Each term is stored as `scope:term`, so a term's posting list holds one conversation's messages.
 * A search reads only its own postings, as if each conversation had its own index. Two ids sharing
 * a scope only share postings, since every statement still checks the conversation id. Every
 * vector stores the scope, so changing it needs a migration that rewrites them.
 */
export const scopeOf = (conversationId: string): string => {
  let h1 = 0xdeadbeef
  let h2 = 0x41c6ce57
  for (let i = 0; i < conversationId.length; i++) {
    const c = conversationId.charCodeAt(i)
    h1 = Math.imul(h1 ^ c, 2654435761)
    h2 = Math.imul(h2 ^ c, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507)
  h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507)
  h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36)
}

/** A term escaped for the quoted text form of `tsvector` and `tsquery`, without the quotes. */
export const escapedTerm = (term: string): string => term.replaceAll("\\", "\\\\").replaceAll("'", "''")

/** A term in the text form of `tsvector` and `tsquery`, which take it as it is, unparsed. */
const quoted = (scope: string, term: string): string => `'${scope}:${escapedTerm(term)}'`

/**
 * A message's `tsvector` text: each scoped term of its searchable text, with positions 1..n for its
 * n occurrences. Only their number matters to the ranking. Null when it holds no term.
 */
export const vectorText = (
  conversationId: string,
  message: { readonly content: string; readonly metadata: MessageMetadata }
): string | null => {
  const scope = scopeOf(conversationId)
  const parts: Array<string> = []
  for (const [term, count] of documentTerms(searchableText(message))) {
    let positions = "1"
    for (let p = 2; p <= count; p++) positions += `,${p}`
    parts.push(`${quoted(scope, term)}:${positions}`)
  }
  return parts.length === 0 ? null : parts.join(" ")
}

const HitRow = Schema.Struct({ seq: SqlInt, score: Schema.Number })

/** The search statement over one `SqlClient`. */
export const makeSearch = (sql: SqlClient.SqlClient) => {
  const select = SqlSchema.findAll({
    Request: Schema.Struct({
      id: Schema.String,
      queries: Schema.Array(Schema.String),
      before: Schema.Number,
      limit: Schema.Number
    }),
    Result: HitRow,
    // The GIN index finds a term's messages in a subquery run once per term. At most `frequencyCap`
    // are counted and kept as the rare terms' candidates. `conversation_id || ''` keeps the planner
    // from reading the conversation by primary key and testing every message instead. It may think
    // a conversation short, since PGlite keeps no statistics. The scoped terms already name the
    // conversation; the test only guards against two ids sharing a scope. A conversation with a
    // user holds each term twice, under both scopes. Lengths and the sample's mean then all double,
    // so BM25's ratio is unchanged.
    // The plan must not depend on the planner's estimate of the conversation's length, which is
    // often wrong: a long conversation among short ones, or statistics older than its messages. So
    // the seq bounds come from `conv` as scalar subqueries, making the sample and the recent
    // candidates primary-key ranges. Each candidate is read by its primary key. `LIMIT 1` keeps that
    // lookup a subquery, never a scan of the conversation joined to the candidates. Scores sum the
    // terms in query order, as the in-memory store does, whatever the plan.
    execute: (q) => {
      const own = sql`m.conversation_id || '' = ${q.id}`
      return sql`WITH conv AS (
        SELECT last_seq, greatest(1, message_count - summary_count - system_prefix_seq)::float8 AS n
        FROM chat_memory_conversations WHERE conversation_id = ${q.id}
      ), sample AS MATERIALIZED (
        SELECT m.search FROM chat_memory_messages m
        WHERE m.conversation_id = ${q.id} AND m.seq > (SELECT last_seq FROM conv) - ${sampleSize}
          AND m.seq <= (SELECT last_seq FROM conv) AND m.search IS NOT NULL
      ), sampled AS MATERIALIZED (
        SELECT greatest(1, count(*))::float8 AS size, greatest(1, coalesce(avg(length(search)), 1))::float8 AS len
        FROM sample
      ), terms AS MATERIALIZED (
        SELECT t.i, t.q::tsquery AS q, least(conv.n, conv.n * h.hits / sampled.size) AS estimate,
          CASE WHEN conv.n * h.hits / sampled.size >= ${2 * frequencyCap} THEN NULL ELSE ARRAY(
            SELECT m.seq FROM chat_memory_messages m WHERE m.search @@ t.q::tsquery AND ${own} LIMIT ${frequencyCap}
          ) END AS found
        FROM conv CROSS JOIN sampled CROSS JOIN unnest(${q.queries}::text[]) WITH ORDINALITY AS t(q, i)
        CROSS JOIN LATERAL (
          SELECT count(*) FILTER (WHERE s.search @@ t.q::tsquery)::float8 AS hits FROM sample s
        ) h
      ), ordered AS MATERIALIZED (
        SELECT t.i, t.q, t.found, t.estimate, cardinality(t.found) AS counted,
          sum(coalesce(cardinality(t.found), ${frequencyCap})) OVER (ORDER BY cardinality(t.found), t.i) AS reach
        FROM terms t
      ), weights AS MATERIALIZED (
        SELECT o.i, o.q, o.found, o.reach <= ${candidateBudget} AS rare,
          ln(1 + greatest(0, conv.n - e.df + 0.5) / (e.df + 0.5)) AS idf
        FROM ordered o CROSS JOIN conv
        CROSS JOIN LATERAL (
          SELECT CASE WHEN o.counted < ${frequencyCap} THEN o.counted::float8
            ELSE least(conv.n, greatest(${frequencyCap}::float8, o.estimate)) END AS df
        ) e
      ), candidates AS (
        SELECT found.seq FROM weights w CROSS JOIN LATERAL unnest(w.found) AS found(seq)
        WHERE w.rare AND found.seq < ${q.before}
        UNION
        (SELECT m.seq FROM chat_memory_messages m
          WHERE (SELECT bool_or(NOT w.rare) FROM weights w)
            AND m.conversation_id = ${q.id} AND m.seq < ${q.before}
            AND m.seq > (SELECT least(${q.before}::bigint - 1, last_seq) FROM conv) - ${recentWindow}
            AND m.search IS NOT NULL
            AND EXISTS (SELECT 1 FROM weights w WHERE NOT w.rare AND m.search @@ w.q)
          ORDER BY m.seq DESC LIMIT ${recentCandidates})
      ), ranked AS (
        SELECT m.seq, m.search, length(m.search)::float8 AS len
        FROM candidates c CROSS JOIN LATERAL (
          SELECT m.seq, m.search FROM chat_memory_messages m
          WHERE m.conversation_id = ${q.id} AND m.seq = c.seq LIMIT 1
        ) m
      )
      SELECT r.seq, sum(
          w.idf * f.tf * (${k1}::float8 + 1)
            / (f.tf + ${k1}::float8 * (1 - ${b}::float8 + ${b}::float8 * r.len / a.len))
          ORDER BY w.i
        )::float8 AS score
      FROM ranked r
      CROSS JOIN sampled a
      JOIN weights w ON r.search @@ w.q
      CROSS JOIN LATERAL (SELECT ts_rank_cd('{1,1,1,1}', r.search, w.q)::float8 AS tf) f
      GROUP BY r.seq
      ORDER BY score DESC, r.seq DESC
      LIMIT ${q.limit}`
    }
  })

  /** The best matches of `query` in the conversation, best first, newer first on ties. */
  return (conversationId: ConversationId, query: MessageIndex.SearchQuery) => {
    const terms = queryTerms(query.text)
    const before = Number.isNaN(query.before) ? 0 : upperBound(query.before)
    if (terms.length === 0 || before <= 1) return Effect.succeed([])
    const scope = scopeOf(conversationId)
    return select({
      id: conversationId,
      queries: terms.map((term) => quoted(scope, term)),
      before,
      limit: clampLimit(query.limit)
    })
  }
}

const BackfillRow = Schema.Struct({ seq: SqlInt, content: Schema.String, metadata: Schema.Unknown })
const ConversationPage = Schema.Struct({ conversation_id: Schema.String, system_prefix_seq: SqlInt })

const isMetadata = Schema.is(MessageMetadata)

/** Rows per statement of the backfill. */
const backfillBatch = 500

/**
 * Rewrites every searchable message's `search` column from its content and tool calls. It fills in
 * messages stored before the column existed or with older terms. It goes one conversation at a
 * time, a page of messages per statement, and every statement names one conversation.
 */
export const backfill = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const conversations = SqlSchema.findAll({
      Request: Schema.String,
      Result: ConversationPage,
      execute: (after) =>
        sql`SELECT conversation_id, system_prefix_seq FROM chat_memory_conversations
          WHERE conversation_id > ${after} ORDER BY conversation_id LIMIT ${backfillBatch}`
    })
    const messages = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.String, after: Schema.Number }),
      Result: BackfillRow,
      execute: (q) =>
        sql`SELECT seq, content, metadata FROM chat_memory_messages
          WHERE conversation_id = ${q.id} AND seq > ${q.after} AND role <> 'summary'
          ORDER BY seq LIMIT ${backfillBatch}`
    })
    let lastId = ""
    for (;;) {
      const page = yield* conversations(lastId)
      for (const conversation of page) {
        let after = conversation.system_prefix_seq
        for (;;) {
          const rows = yield* messages({ id: conversation.conversation_id, after })
          const last = rows[rows.length - 1]
          if (last === undefined) break
          const seqs = rows.map((row) => row.seq)
          const vectors = rows.map((row) =>
            vectorText(conversation.conversation_id, {
              content: row.content,
              metadata: isMetadata(row.metadata) ? row.metadata : {}
            })
          )
          yield* sql`UPDATE chat_memory_messages m SET search = v.search::tsvector
            FROM unnest(${seqs}::bigint[], ${vectors}::text[]) AS v(seq, search)
            WHERE m.conversation_id = ${conversation.conversation_id} AND m.seq = v.seq`
          after = last.seq
        }
      }
      const last = page[page.length - 1]
      if (last === undefined) return
      lastId = last.conversation_id
    }
  })
