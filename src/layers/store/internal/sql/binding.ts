/**
 * A conversation's user in the SQL store. The first write naming a user binds a conversation that
 * had none, in every table holding its data. A write naming another user is refused.
 */
import type { SqlClient } from "@effect/sql"
import { SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { ConversationId } from "../../../../domain/ConversationId.js"
import type { UserId } from "../../../../domain/UserId.js"
import { DataValidationError } from "../../../../errors/DataValidationError.js"
import * as Rows from "./rows.js"
import { scopeOf } from "./search.js"
import { withUserTerms } from "./userTerms.js"

/** The refusal of a write naming a user other than the conversation's. */
export const refusal = () =>
  new DataValidationError({
    operation: "RepositoryService.appendMessages",
    path: "userId",
    reason: "the conversation belongs to another user"
  })

/** The binding over one `SqlClient`. */
export const makeBinding = (sql: SqlClient.SqlClient) => {
  // The lock appends take, held to the end of the caller's transaction. No append, commit or vector
  // write of the conversation lands between the check and the writes after it.
  const lockOwner = SqlSchema.findOne({
    Request: Schema.String,
    Result: Rows.OwnerRow,
    execute: (id) => sql`SELECT user_id FROM chat_memory_conversations WHERE conversation_id = ${id} FOR UPDATE`
  })

  // One statement gives the user to every row of the conversation. Its messages' `search` vectors
  // gain the user's terms. Only rows without a user lack them, so `user_id IS NULL` bounds the
  // rewrite. A settings row is keyed by the conversation alone.
  const bind = (conversationId: ConversationId, userId: UserId) => {
    const user = sql`${userId}::text`
    return sql`WITH conversation AS (
        UPDATE chat_memory_conversations SET user_id = ${user}
        WHERE conversation_id = ${conversationId} AND user_id IS NULL
      ), messages AS (
        UPDATE chat_memory_messages
        SET user_id = ${user}, search = ${withUserTerms(sql, sql`search::text`, scopeOf(conversationId), user)}
        WHERE conversation_id = ${conversationId} AND user_id IS NULL
      ), records AS (
        UPDATE chat_memory_summarizations SET user_id = ${user}
        WHERE conversation_id = ${conversationId} AND user_id IS NULL
      ), vectors AS (
        UPDATE chat_memory_embeddings SET user_id = ${user}
        WHERE conversation_id = ${conversationId} AND user_id IS NULL
      ), settings AS (
        UPDATE chat_memory_settings SET user_id = ${user}
        WHERE conversation_id = ${conversationId} AND user_id IS NULL
      )
      SELECT 1 AS found`
  }

  /**
   * Binds the conversation to `userId`, or fails with the refusal. Run it in a transaction, before
   * retrying an append that named `userId` and was not applied because the conversation had no user
   * or another. A conversation deleted in between is created bound, by the append.
   */
  const claim = Effect.fnUntraced(function*(conversationId: ConversationId, userId: UserId) {
    const owner = yield* lockOwner(conversationId)
    if (Option.isNone(owner)) return
    if (owner.value.user_id === null) return yield* Effect.asVoid(bind(conversationId, userId))
    if (owner.value.user_id !== userId) return yield* refusal()
  })

  return { claim }
}
