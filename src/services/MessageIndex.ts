/**
 * The message index port: a lexical search of one conversation's messages. For hybrid recall it
 * also keeps message vectors per embedding model, with a search by similarity.
 *
 * @since 0.1.0
 */
import type { DateTime, Effect } from "effect"
import { Context } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { Message } from "../domain/Message.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Finds the messages of the log (`RepositoryService`) by their words or by their meaning. Every
 * implementation passes the search and embedding contract suites.
 *
 * Laws:
 * - `searchMessages` answers from the searched conversation only, whatever the words.
 * - It finds messages of the roles user, assistant and tool, and system messages after the
 *   leading system prefix. It never finds a `summary` message, a leading system message or a
 *   pruned one. It finds only seqs below `query.before`.
 * - A message is found by its content, and for an assistant message, by its tool call params
 *   (`metadata.toolCalls`).
 * - Matching is lexical and case-insensitive, on whole words. A query that names an identifier
 *   (`ORD-2024-88417`), an amount (`$1,240.00`, `€ 3.450,00`), a date (`2026-04-18`, `April
 *   18`) or an email address finds it, alone or inside a longer question.
 * - Ranking is an OR over the query's words, weighted like BM25. A word that few of the
 *   conversation's messages hold, such as an identifier, counts far more than a common one.
 * - A query of stop words or punctuation only has no hits. Any query text is safe: quotes,
 *   operators, very long text.
 * - An unknown or deleted conversation has no hits: an empty answer, not an error.
 * - Embeddings, for hybrid recall, are kept per conversation and embedding model name, one vector
 *   per message.
 * - `pendingEmbeddings` lists, oldest first, the messages `searchMessages` could find that come
 *   after the newest message embedded under the model.
 * - `storeEmbeddings` keeps vectors of messages that still exist, replacing one stored for the same
 *   message. A vector for a gone message, or of an unknown conversation, is dropped. So is one
 *   whose `createdAt` is not its message's: the conversation was deleted and written again.
 * - `searchEmbeddings` ranks one conversation's embedded messages below `query.before` by cosine
 *   similarity to the query vector, best first, with scores in [-1, 1].
 * - It never returns vectors of other models or conversations, or of pruned or deleted messages.
 *   Nor does it return empty vectors, or vectors of another length than the query's. So a model
 *   changed under the same name compares nothing.
 * - A vector holding a number that is not finite is stored empty, and never found.
 * - `RepositoryService.deleteConversation` and a pruning `SummaryStore.commitSummary` delete the
 *   vectors of what they delete.
 * - No operation fails on an unknown conversation: nothing is pending and nothing is found.
 *
 * @since 0.1.0
 * @category tags
 */
export class MessageIndex extends Context.Tag("effect-chat-memory/MessageIndex")<
  MessageIndex,
  MessageIndex.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace MessageIndex {
  /**
   * The index's operations; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The stored messages of one conversation that best match `query.text`, best first. */
    readonly searchMessages: (
      conversationId: ConversationId,
      query: SearchQuery
    ) => Effect.Effect<ReadonlyArray<SearchHit>, RepositoryError>
    /** The messages still to embed under `query.model`, oldest first. See the laws. */
    readonly pendingEmbeddings: (
      conversationId: ConversationId,
      query: PendingEmbeddingsQuery
    ) => Effect.Effect<ReadonlyArray<Message>, RepositoryError>
    /** Stores the vectors of messages under an embedding model. See the laws. */
    readonly storeEmbeddings: (
      conversationId: ConversationId,
      model: string,
      embeddings: ReadonlyArray<Embedding>
    ) => Effect.Effect<void, RepositoryError>
    /** The embedded messages of one conversation closest to `query.vector`, best first. */
    readonly searchEmbeddings: (
      conversationId: ConversationId,
      query: VectorQuery
    ) => Effect.Effect<ReadonlyArray<SearchHit>, RepositoryError>
  }

  /**
   * A lexical search of one conversation's messages.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SearchQuery {
    /** Free text, e.g. the user's new message. */
    readonly text: string
    /** Only messages with a seq below this one. */
    readonly before: number
    /** At most this many hits, from 1 to 100. A value outside is brought into that range. */
    readonly limit: number
    /**
     * `false` searches by words only. An index that also searches by meaning
     * (`Recall.layerHybrid`) does so unless told not to. A lexical index ignores it.
     */
    readonly meaning?: boolean | undefined
  }

  /**
   * A message that matched a search.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SearchHit {
    readonly seq: number
    /** Higher is better. Scores compare within one search only. */
    readonly score: number
  }

  /**
   * Which messages await an embedding.
   *
   * @since 0.1.0
   * @category models
   */
  export interface PendingEmbeddingsQuery {
    /** The embedding model's name: vectors of different models are kept apart. */
    readonly model: string
    /** At most this many messages (at least 1). */
    readonly limit: number
  }

  /**
   * The vector of one message. A message with nothing to embed may be stored with an empty vector,
   * which marks it done and is never found.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Embedding {
    readonly seq: number
    /** Finite numbers. Stores keep it normalised to unit length. */
    readonly vector: ReadonlyArray<number>
    /**
     * The `createdAt` of the message the vector was made from, when known. The vector is kept only
     * for that message, never for another written at its seq after the conversation was deleted.
     *
     * @since 0.2.0
     */
    readonly createdAt?: DateTime.Utc | undefined
  }

  /**
   * A semantic search of one conversation's embedded messages.
   *
   * @since 0.1.0
   * @category models
   */
  export interface VectorQuery {
    /** The embedding model's name the vectors were stored under. */
    readonly model: string
    /** The query's vector, from the same model. */
    readonly vector: ReadonlyArray<number>
    /** Only messages with a seq below this one. */
    readonly before: number
    /** At most this many hits, from 1 to 100. A value outside is brought into that range. */
    readonly limit: number
  }
}
