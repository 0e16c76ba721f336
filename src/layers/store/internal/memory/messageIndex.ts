/**
 * The in-memory store's message index (`MessageIndex`): each conversation's BM25 index, brought up
 * to date when searched, and its message vectors by embedding model.
 */
import { Effect, Option } from "effect"
import type { Message } from "../../../../domain/Message.js"
import { MessageIndex } from "../../../../services/MessageIndex.js"
import { isSearchable } from "../search.js"
import { readable, type State } from "./state.js"

/** The message index over the store's data. */
export const make = ({ indexed, withConversation }: State): MessageIndex.Service =>
  MessageIndex.of({
    searchMessages: Effect.fnUntraced(function*(conversationId, query) {
      return Option.match(yield* indexed(conversationId), {
        onNone: (): ReadonlyArray<MessageIndex.SearchHit> => [],
        onSome: (index) => index.search(query)
      })
    }),

    pendingEmbeddings: Effect.fnUntraced(function*(conversationId, query) {
      const found = yield* withConversation(conversationId, (conversation) => {
        const out: Array<Message> = []
        const limit = Math.max(1, Math.floor(query.limit))
        const messages = conversation.messages
        for (let i = messages.indexAfter(conversation.vectors.upTo(query.model)); i < messages.size; i++) {
          const message = messages.at(i)
          if (message === undefined) break
          if (!isSearchable(message, conversation.info.systemPrefixSeq)) continue
          out.push(readable(message))
          if (out.length >= limit) break
        }
        return out
      })
      return Option.getOrElse(found, (): ReadonlyArray<Message> => [])
    }),

    storeEmbeddings: Effect.fnUntraced(function*(conversationId, model, embeddings) {
      yield* withConversation(
        conversationId,
        (conversation) =>
          conversation.vectors.put(
            model,
            embeddings.filter(({ createdAt, seq }) => {
              const message = conversation.messages.get(seq)
              return message !== undefined &&
                (createdAt === undefined || message.createdAt.epochMillis === createdAt.epochMillis)
            })
          )
      )
    }),

    searchEmbeddings: Effect.fnUntraced(function*(conversationId, query) {
      const found = yield* withConversation(conversationId, (conversation) => conversation.vectors.search(query))
      return Option.getOrElse(found, (): ReadonlyArray<MessageIndex.SearchHit> => [])
    })
  })
