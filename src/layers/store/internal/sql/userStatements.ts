/**
 * The SQL store's user port statements, with their row schemas. Each filters on the user first.
 * Facts go by their primary key and conversations by the index on `user_id`. Messages go by
 * `user_id` and the conversation's primary key.
 */
import type { SqlClient, Statement } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ConversationId } from "../../../../domain/ConversationId.js"
import type { UserId } from "../../../../domain/UserId.js"
import { opening } from "./readWindow.js"
import * as Rows from "./rows.js"
import { turnReach } from "./statements.js"

/** A merge's result: whether the cursor moved, the keys written, and what they held before. */
const MergedRow = Schema.Struct({
  moved: Rows.SqlInt,
  written: Schema.Array(Schema.String),
  previous: Schema.Array(Schema.Struct({ key: Schema.String, said_at: Schema.DateTimeUtcFromNumber }))
})

/** A message of a turn read across conversations, with its turn's position in the hits. */
const TurnRow = Schema.Struct({ ...Rows.MessageRow.fields, turn: Rows.SqlInt, conversation_id: ConversationId })

/** How many facts an erasure removed. */
const ErasedRow = Schema.Struct({ facts: Rows.SqlInt })

/** The statements over one `SqlClient`. */
export const makeUserStatements = (sql: SqlClient.SqlClient) => {
  const selectFacts = SqlSchema.findAll({
    Request: Schema.String,
    Result: Rows.UserFactRow,
    execute: (user) =>
      sql`SELECT ${sql.literal(Rows.userFactColumns)} FROM chat_memory_user_facts
        WHERE user_id = ${user} AND value IS NOT NULL ORDER BY said_at DESC, key COLLATE "C"`
  })

  // One statement, so no transaction around it. With a cursor, the conversation's row moves first,
  // by compare-and-set: it must be the user's, still at `expected`, in the life `incarnation` when
  // given. The facts are written only if it moved. Each fact is an upsert keeping the later-said
  // value, this one on ties. So two merges of one user lose no update, whatever order their rows are
  // locked in. Rows are written in key order, so two merges lock shared keys in the same order and
  // cannot deadlock. The keys' earlier values come from the statement's snapshot, to tell which
  // facts applied.
  const merge = SqlSchema.findOne({
    Request: Schema.Struct({
      user: Schema.String,
      cursor: Schema.Boolean,
      conversationId: Schema.NullOr(Schema.String),
      expected: Schema.Number,
      next: Schema.Number,
      incarnation: Schema.NullOr(Schema.Number),
      keys: Schema.Array(Schema.String),
      values: Schema.Array(Schema.NullOr(Schema.String)),
      categories: Schema.Array(Schema.String),
      saidAt: Schema.Array(Schema.String),
      sources: Schema.Array(Schema.NullOr(Schema.String)),
      seqs: Schema.Array(Schema.NullOr(Schema.Number))
    }),
    Result: MergedRow,
    execute: (q) =>
      sql`WITH moved AS (
        UPDATE chat_memory_conversations SET facts_cursor = ${q.next}
        WHERE ${q.cursor} AND conversation_id = ${q.conversationId} AND user_id = ${q.user}
          AND facts_cursor = ${q.expected}${
        q.incarnation === null ? sql.literal("") : sql` AND incarnation = ${q.incarnation}`
      }
        RETURNING 1 AS found
      ), previous AS (
        SELECT f.key, f.said_at FROM chat_memory_user_facts f
        WHERE f.user_id = ${q.user} AND f.key = ANY(${q.keys}::text[])
      ), written AS (
        INSERT INTO chat_memory_user_facts AS f (user_id, key, value, category, said_at, conversation_id, seq)
        SELECT ${q.user}, v.key, v.value, v.category, v.said_at::timestamptz, v.conversation_id, v.seq
        FROM unnest(${q.keys}::text[], ${q.values}::text[], ${q.categories}::text[], ${q.saidAt}::text[],
          ${q.sources}::text[], ${q.seqs}::bigint[]) WITH ORDINALITY AS v(key, value, category, said_at,
          conversation_id, seq, i)
        WHERE NOT ${q.cursor} OR EXISTS (SELECT 1 FROM moved)
        ORDER BY v.i
        ON CONFLICT (user_id, key) DO UPDATE SET value = EXCLUDED.value, category = EXCLUDED.category,
          said_at = EXCLUDED.said_at, conversation_id = EXCLUDED.conversation_id, seq = EXCLUDED.seq
        WHERE EXCLUDED.said_at >= f.said_at
        RETURNING f.key
      )
      SELECT (SELECT count(*) FROM moved) AS moved, ARRAY(SELECT written.key FROM written) AS written,
        coalesce((
          SELECT json_agg(json_build_object(
            'key', p.key, 'said_at', (extract(epoch FROM p.said_at) * 1000)::bigint
          )) FROM previous p
        ), '[]'::json) AS previous`
  })

  // The index on `(user_id, last_said_at DESC, conversation_id)` gives the page in order.
  const selectEntries = SqlSchema.findAll({
    Request: Schema.Struct({
      user: Schema.String,
      limit: Schema.Number,
      before: Schema.NullOr(Schema.String),
      after: Schema.NullOr(Schema.Struct({ at: Schema.String, id: Schema.String })),
      factsPending: Schema.Boolean
    }),
    Result: Rows.EntryRow,
    execute: (q) =>
      sql`SELECT c.conversation_id, c.created_at, c.last_said_at, c.message_count, ${
        sql.literal(opening("c.user_id", "c"))
      } AS about
        FROM chat_memory_conversations c
        WHERE c.user_id = ${q.user}${
        q.before === null ? sql.literal("") : sql` AND c.last_said_at < ${q.before}::timestamptz`
      }${
        q.after === null ? sql.literal("") : sql` AND (c.last_said_at < ${q.after.at}::timestamptz
          OR (c.last_said_at = ${q.after.at}::timestamptz AND c.conversation_id COLLATE "C" > ${q.after.id}))`
      }${q.factsPending ? sql.literal(" AND c.facts_cursor < c.last_seq") : sql.literal("")}
        ORDER BY c.last_said_at DESC, c.conversation_id COLLATE "C"
        LIMIT ${q.limit}`
  })

  // The turns holding the hits, in one statement, as `selectTurns` reads one conversation. For each
  // hit in the user's conversations, in the order given, it finds the user message at or before it
  // and the next one after it. The distinct turns of the first hits are kept, at most `limit`. Their
  // messages are then read by range, in the order of the hits.
  const selectTurns = SqlSchema.findAll({
    Request: Schema.Struct({
      user: Schema.String,
      conversations: Schema.Array(Schema.String),
      seqs: Schema.Array(Schema.Number),
      limit: Schema.NullOr(Schema.Number)
    }),
    Result: TurnRow,
    execute: (q) => {
      const user = sql`${q.user}::text`
      const userAtOrBefore = (floor: Statement.Fragment) =>
        sql`SELECT u.seq FROM chat_memory_messages u
          WHERE u.user_id = ${user} AND u.conversation_id = c.conversation_id AND u.seq <= h.seq AND u.seq > ${floor}
            AND u.role = 'user'
          ORDER BY u.seq DESC LIMIT 1`
      const userAfter = (ceiling: Statement.Fragment) =>
        sql`SELECT u.seq FROM chat_memory_messages u
          WHERE u.user_id = ${user} AND u.conversation_id = c.conversation_id AND u.seq > h.seq AND u.seq < ${ceiling}
            AND u.role = 'user'
          ORDER BY u.seq ASC LIMIT 1`
      const prefix = sql.literal("c.system_prefix_seq")
      const end = sql`${Number.MAX_SAFE_INTEGER}::bigint`
      return sql`SELECT t.i AS turn, t.conversation_id, x.seq, x.role, x.content, x.metadata, x.token_count,
          x.created_at
        FROM (
          SELECT d.i, d.conversation_id, d.turn_start, d.turn_end FROM (
            SELECT DISTINCT ON (b.conversation_id, b.turn_start) b.i, b.conversation_id, b.turn_start, b.turn_end
            FROM (
              SELECT h.i, c.conversation_id,
                coalesce(
                  (${userAtOrBefore(sql`GREATEST(${prefix}, h.seq - ${turnReach})`)}),
                  (${userAtOrBefore(prefix)}),
                  ${prefix} + 1
                ) AS turn_start,
                coalesce(
                  (${userAfter(sql`h.seq + ${turnReach}`)}),
                  (${userAfter(end)}),
                  ${end}
                ) AS turn_end
              FROM unnest(${q.conversations}::text[], ${q.seqs}::bigint[]) WITH ORDINALITY AS h(conversation_id, seq, i)
              JOIN chat_memory_conversations c ON c.user_id = ${user} AND c.conversation_id = h.conversation_id
              WHERE h.seq > c.system_prefix_seq AND EXISTS (
                SELECT 1 FROM chat_memory_messages e
                WHERE e.user_id = ${user} AND e.conversation_id = c.conversation_id AND e.seq = h.seq
                  AND e.role <> 'summary'
              )
            ) b
            ORDER BY b.conversation_id, b.turn_start, b.i
          ) d
          ORDER BY d.i LIMIT ${q.limit}
        ) t
        JOIN chat_memory_messages x ON x.user_id = ${user} AND x.conversation_id = t.conversation_id
          AND x.seq >= t.turn_start AND x.seq < t.turn_end AND x.role <> 'summary'
        ORDER BY t.i, x.seq`
    }
  })

  const deleteConversations = SqlSchema.findAll({
    Request: Schema.String,
    Result: Schema.Struct({ conversation_id: Schema.String, message_count: Rows.SqlInt }),
    execute: (user) =>
      sql`DELETE FROM chat_memory_conversations WHERE user_id = ${user} RETURNING conversation_id, message_count`
  })
  // The rows of the user's conversations are deleted by conversation id, whatever user they carry:
  // a settings row written while its conversation was being created may not carry the user yet, and
  // a process of the version before users writes none. Leases hold only the id. A holder finds its
  // lease gone and stops.
  const deleteRest = SqlSchema.findOne({
    Request: Schema.Struct({ user: Schema.String, ids: Schema.Array(Schema.String) }),
    Result: ErasedRow,
    execute: (q) =>
      sql`WITH messages AS (
        DELETE FROM chat_memory_messages WHERE conversation_id = ANY(${q.ids}::text[])
      ), records AS (
        DELETE FROM chat_memory_summarizations WHERE conversation_id = ANY(${q.ids}::text[])
      ), vectors AS (
        DELETE FROM chat_memory_embeddings WHERE conversation_id = ANY(${q.ids}::text[])
      ), settings AS (
        DELETE FROM chat_memory_settings WHERE conversation_id = ANY(${q.ids}::text[])
      ), leases AS (
        DELETE FROM chat_memory_leases WHERE conversation_id = ANY(${q.ids}::text[])
      ), facts AS (
        DELETE FROM chat_memory_user_facts WHERE user_id = ${q.user} RETURNING value
      )
      SELECT count(*) FILTER (WHERE value IS NOT NULL) AS facts FROM facts`
  })

  /**
   * Erases the user; run it in a transaction. The user's conversation rows go first. Their locks
   * wait for the appends, commits and vector writes in flight, and keep new ones out. A second
   * statement, seeing what those committed, deletes every other row of the user.
   */
  const erase = Effect.fnUntraced(function*(userId: UserId) {
    const conversations = yield* deleteConversations(userId)
    const erased = yield* deleteRest({ user: userId, ids: conversations.map((row) => row.conversation_id) })
    return {
      conversations: conversations.length,
      messages: conversations.reduce((sum, row) => sum + row.message_count, 0),
      facts: Option.match(erased, { onNone: () => 0, onSome: (row) => row.facts })
    }
  })

  return { selectFacts, merge, selectEntries, selectTurns, erase }
}
