/**
 * The SQL store's message vectors for hybrid recall: which messages await one, storing them, and
 * ranking one conversation's vectors, or a user's, by cosine. SQL computes it over plain `real[]` columns.
 * Vectors are normalised on the way in, so the score is a dot product. See migration
 * `5_add_embeddings`.
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { DateTime, Effect, Schema } from "effect"
import { ConversationId } from "../../../../domain/ConversationId.js"
import type { UserId } from "../../../../domain/UserId.js"
import type { MessageIndex } from "../../../../services/MessageIndex.js"
import type { UserStore } from "../../../../services/UserStore.js"
import { clampLimit } from "../search.js"
import { clampScan, normalize } from "../vectors.js"
import * as Rows from "./rows.js"
import { upperBound } from "./statements.js"

/** A vector as PostgreSQL array text (`{0.1,-0.2}`), which `::real[]` reads. */
const arrayText = (vector: Float32Array): string => `{${vector.join(",")}}`

const HitRow = Schema.Struct({ seq: Rows.SqlInt, score: Schema.Number })

const UserHitRow = Schema.Struct({ conversation_id: ConversationId, seq: Rows.SqlInt, score: Schema.Number })

/** The statements over one `SqlClient`. */
export const makeEmbeddings = (sql: SqlClient.SqlClient) => {
  const columns = sql.literal(Rows.messageColumns.split(", ").map((column) => `m.${column}`).join(", "))

  // The messages `searchMessages` may find, after the newest one embedded under the model. The
  // vectors' primary key gives that seq, and the messages' primary key gives the range.
  const selectPending = SqlSchema.findAll({
    Request: Schema.Struct({ id: Schema.String, model: Schema.String, limit: Schema.Number }),
    Result: Rows.MessageRow,
    execute: (q) =>
      sql`SELECT ${columns} FROM chat_memory_conversations c
        JOIN chat_memory_messages m ON m.conversation_id = c.conversation_id
        WHERE c.conversation_id = ${q.id} AND m.role <> 'summary'
          AND m.seq > greatest(c.system_prefix_seq, coalesce((
            SELECT max(e.seq) FROM chat_memory_embeddings e WHERE e.conversation_id = ${q.id} AND e.model = ${q.model}
          ), 0))
        ORDER BY m.seq
        LIMIT ${q.limit}`
  })

  // The conversation's row is read `FOR SHARE` first, since a concurrent delete or user binding
  // locks it. Either the vectors commit first, and that delete or binding then covers them. Or they
  // come after it: they find their messages gone, or take the user from their messages.
  // A vector whose message's time is given is kept only for that message: one written at its seq
  // after the conversation was deleted has another.
  const insert = (
    id: string,
    model: string,
    seqs: ReadonlyArray<number>,
    vectors: ReadonlyArray<string>,
    times: ReadonlyArray<string | null>
  ) =>
    sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT 1 FROM chat_memory_conversations WHERE conversation_id = ${id} FOR SHARE`
      yield* sql`INSERT INTO chat_memory_embeddings (conversation_id, model, seq, vector, user_id)
        SELECT ${id}, ${model}, v.seq, v.vector::real[], m.user_id
        FROM unnest(${seqs}::bigint[], ${vectors}::text[], ${times}::timestamptz[]) AS v(seq, vector, created_at)
        JOIN chat_memory_messages m ON m.conversation_id = ${id} AND m.seq = v.seq
          AND (v.created_at IS NULL OR m.created_at = v.created_at)
        ON CONFLICT (conversation_id, model, seq) DO UPDATE SET vector = EXCLUDED.vector`
    }))

  const selectNearest = SqlSchema.findAll({
    Request: Schema.Struct({
      id: Schema.String,
      model: Schema.String,
      vector: Schema.String,
      dimension: Schema.Number,
      before: Schema.Number,
      limit: Schema.Number
    }),
    Result: HitRow,
    // Every vector of the conversation and model below `before` is scored, read as one primary key
    // range. The join leaves out pruned messages. The length test leaves out vectors of another
    // length than the query's, from another model under the same name.
    execute: (q) =>
      sql`SELECT e.seq, (
          SELECT coalesce(sum(a * b), 0) FROM unnest(e.vector, ${q.vector}::real[]) AS t(a, b)
        )::float8 AS score
        FROM chat_memory_embeddings e
        JOIN chat_memory_messages m ON m.conversation_id = e.conversation_id AND m.seq = e.seq
        WHERE e.conversation_id = ${q.id} AND e.model = ${q.model} AND e.seq < ${q.before}
          AND cardinality(e.vector) = ${q.dimension}
        ORDER BY score DESC, e.seq DESC
        LIMIT ${q.limit}`
  })

  const selectUserNearest = SqlSchema.findAll({
    Request: Schema.Struct({
      user: Schema.String,
      model: Schema.String,
      vector: Schema.String,
      dimension: Schema.Number,
      current: Schema.NullOr(Schema.String),
      before: Schema.Number,
      scan: Schema.Number,
      limit: Schema.Number
    }),
    Result: UserHitRow,
    // As `selectNearest`, over the user's conversations said last (by the index on `user_id`),
    // until their seqs cover `scan`: each one's newest seqs, read as a primary key range of its
    // vectors (`OFFSET 0` keeps the planner from joining all the user's vectors at once instead).
    // `newer` counts the seqs of the conversations said after it. Ties go to the
    // conversation said last, as the user's conversations are listed, then to the newer message.
    execute: (q) =>
      sql`WITH convs AS MATERIALIZED (
          SELECT c.conversation_id, c.last_seq, c.last_said_at,
            coalesce(sum(c.last_seq) OVER (ORDER BY c.last_said_at DESC, c.conversation_id COLLATE "C"
              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)::bigint AS newer
          FROM chat_memory_conversations c WHERE c.user_id = ${q.user}
        )
        SELECT c.conversation_id, n.seq, n.score
        FROM convs c CROSS JOIN LATERAL (
          SELECT e.seq, (
              SELECT coalesce(sum(a * b), 0) FROM unnest(e.vector, ${q.vector}::real[]) AS t(a, b)
            )::float8 AS score
          FROM chat_memory_embeddings e
          JOIN chat_memory_messages m ON m.conversation_id = e.conversation_id AND m.seq = e.seq
          WHERE e.conversation_id = c.conversation_id AND e.model = ${q.model}
            AND e.seq > c.last_seq - (${q.scan}::bigint - c.newer)
            AND (c.conversation_id IS DISTINCT FROM ${q.current} OR e.seq < ${q.before})
            AND e.user_id = ${q.user} AND m.user_id = ${q.user} AND cardinality(e.vector) = ${q.dimension}
          OFFSET 0
        ) n
        WHERE c.newer < ${q.scan}::bigint
        ORDER BY n.score DESC, c.last_said_at DESC, c.conversation_id COLLATE "C", n.seq DESC
        LIMIT ${q.limit}`
  })

  return {
    pending: (conversationId: ConversationId, query: MessageIndex.PendingEmbeddingsQuery) =>
      Effect.map(
        selectPending({ id: conversationId, model: query.model, limit: Math.max(1, Math.floor(query.limit)) }),
        (rows) => rows.map((row) => Rows.toMessage(conversationId, row))
      ),
    store: (conversationId: ConversationId, model: string, embeddings: ReadonlyArray<MessageIndex.Embedding>) =>
      embeddings.length === 0 ? Effect.void : Effect.asVoid(insert(
        conversationId,
        model,
        embeddings.map((embedding) => embedding.seq),
        embeddings.map((embedding) => arrayText(normalize(embedding.vector))),
        embeddings.map((embedding) =>
          embedding.createdAt === undefined ? null : DateTime.formatIso(embedding.createdAt)
        )
      )),
    search: (conversationId: ConversationId, query: MessageIndex.VectorQuery) => {
      const vector = normalize(query.vector)
      return vector.length === 0 ? Effect.succeed([]) : selectNearest({
        id: conversationId,
        model: query.model,
        vector: arrayText(vector),
        dimension: vector.length,
        before: upperBound(query.before),
        limit: clampLimit(query.limit)
      })
    },
    searchUser: (userId: UserId, query: UserStore.VectorQuery) => {
      const vector = normalize(query.vector)
      return vector.length === 0 ? Effect.succeed([]) : Effect.map(
        selectUserNearest({
          user: userId,
          model: query.model,
          vector: arrayText(vector),
          dimension: vector.length,
          current: query.current?.conversationId ?? null,
          before: upperBound(query.current?.before ?? 0),
          scan: clampScan(query.scanLimit),
          limit: clampLimit(query.limit)
        }),
        (rows) => rows.map((row) => ({ conversationId: row.conversation_id, seq: row.seq, score: row.score }))
      )
    }
  }
}
