/**
 * The message index port: a lexical search of one conversation's messages, and the vectors of its
 * messages under embedding models with a search by similarity (for hybrid recall).
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { Context } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { Message } from "../domain/Message.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Finds the messages of the log (`RepositoryService`) by their words or by their meaning. Every
 * implementation passes the search and embedding contract suites.
 *
 * Laws:
 * - `searchMessages` answers from the searched conversation only, whatever the words. It finds
 *   messages of the roles user, assistant and tool, and system messages after the leading system
 *   prefix; never a `summary` message nor a leading system message, never a pruned one, and only
 *   seqs below `query.before`. A message is found by its content and, for an assistant message,
 *   by the params of its tool calls (`metadata.toolCalls`). Matching is lexical and
 *   case-insensitive, on whole words: an identifier (`ORD-2024-88417`), an amount (`$1,240.00`,
 *   `€ 3.450,00`), a date (`2026-04-18`, `April 18`) or an email address is found by a query
 *   that names it, alone or inside a longer question. Ranking is an OR over the query's words,
 *   weighted like BM25: a word that few of the conversation's messages hold (an identifier)
 *   counts far more than a common one. A query of stop words or punctuation only has no hits;
 *   any query text is safe (quotes, operators, very long text). An unknown or deleted
 *   conversation has no hits: an empty answer, not an error.
 * - Embeddings (for hybrid recall) are kept per conversation and per embedding model name, one
 *   vector per message. `pendingEmbeddings` lists, oldest first, the messages `searchMessages`
 *   could find (same roles, never pruned) that come after the newest message embedded under the
 *   model; `storeEmbeddings` keeps vectors of messages that still exist (a vector for a gone
 *   message, or of an unknown conversation, is dropped) and replaces one stored for the same
 *   message. `searchEmbeddings` ranks one conversation's embedded messages below `query.before`
 *   by cosine similarity to the query vector (score in [-1, 1], best first); vectors of other
 *   models, other conversations, pruned or deleted messages never appear, nor vectors of another
 *   length than the query's (a model changed under the same name compares nothing), nor empty ones.
 *   A vector holding a number that is not finite is stored empty: never found.
 *   `RepositoryService.deleteConversation` and a pruning `SummaryStore.commitSummary` delete
 *   the vectors of what they delete. None of them fails on an unknown conversation: there is
 *   nothing pending and nothing found.
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
    /** The messages still to embed under `query.model`, oldest first (see the laws). */
    readonly pendingEmbeddings: (
      conversationId: ConversationId,
      query: PendingEmbeddingsQuery
    ) => Effect.Effect<ReadonlyArray<Message>, RepositoryError>
    /** Stores the vectors of messages under an embedding model (see the laws). */
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
    /** At most this many hits (1 to 100; a value outside is brought into that range). */
    readonly limit: number
    /**
     * `false`: by words only. An index that also searches by meaning (`Recall.layerHybrid`) does
     * unless told not to; a lexical index ignores it.
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
    /** Higher is better; comparable within one search only. */
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
    /** Finite numbers; stores keep it normalised to unit length. */
    readonly vector: ReadonlyArray<number>
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
    /** At most this many hits (1 to 100; a value outside is brought into that range). */
    readonly limit: number
  }
}
