/**
 * The SQL store's message vectors for hybrid recall: which messages await one, storing them, and
 * ranking one conversation's vectors by cosine. SQL computes it over plain `real[]` columns.
 * Vectors are normalised on the way in, so the score is a dot product. See migration
 * `5_add_embeddings`.
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { DateTime, Effect, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import type { MessageIndex } from "../../../../services/MessageIndex.js"
import { clampLimit } from "../search.js"
import { normalize } from "../vectors.js"
import * as Rows from "./rows.js"
import { upperBound } from "./statements.js"

/** A vector as PostgreSQL array text (`{0.1,-0.2}`), which `::real[]` reads. */
const arrayText = (vector: Float32Array): string => `{${vector.join(",")}}`

const HitRow = Schema.Struct({ seq: Rows.SqlInt, score: Schema.Number })

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
    }
  }
}
