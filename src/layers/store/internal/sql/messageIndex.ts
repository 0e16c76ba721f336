/**
 * The SQL store's message index (`MessageIndex`): one conversation's lexical search and message
 * vectors, over the columns and tables the log writes.
 */
import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { MessageIndex } from "../../../../services/MessageIndex.js"
import { makeEmbeddings } from "./embeddings.js"
import { storeErrors } from "./errors.js"
import { makeSearch } from "./search.js"

/** The message index over one `SqlClient`. */
export const make = (sql: SqlClient.SqlClient): MessageIndex.Service => {
  const search = makeSearch(sql)
  const embeddings = makeEmbeddings(sql)

  return MessageIndex.of({
    searchMessages: Effect.fnUntraced(
      function*(conversationId, query) {
        return yield* search(conversationId, query)
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("searchMessages", conversationId))
    ),

    pendingEmbeddings: Effect.fnUntraced(
      function*(conversationId, query) {
        return yield* embeddings.pending(conversationId, query)
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("pendingEmbeddings", conversationId))
    ),

    storeEmbeddings: Effect.fnUntraced(
      function*(conversationId, model, vectors) {
        yield* embeddings.store(conversationId, model, vectors)
      },
      (effect, conversationId) =>
        Effect.catchTags(effect, { SqlError: storeErrors("storeEmbeddings", conversationId).SqlError })
    ),

    searchEmbeddings: Effect.fnUntraced(
      function*(conversationId, query) {
        return yield* embeddings.search(conversationId, query)
      },
      (effect, conversationId) => Effect.catchTags(effect, storeErrors("searchEmbeddings", conversationId))
    )
  })
}
