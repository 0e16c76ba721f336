/**
 * The user port: the facts a store keeps about a user across conversations, and the operations
 * that span a user's conversations. They list, search and read them, and erase the user.
 *
 * @since 0.2.0
 */
import type { DateTime, Effect } from "effect"
import { Context, Data } from "effect"
import type { ConversationEntry } from "../domain/ConversationEntry.js"
import type { ConversationId } from "../domain/ConversationId.js"
import type { Message } from "../domain/Message.js"
import type { UserErasure } from "../domain/UserErasure.js"
import type { UserFact } from "../domain/UserFact.js"
import type { UserId } from "../domain/UserId.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Stores what spans a user's conversations. Every implementation passes the user contract suite.
 *
 * Laws:
 * - A conversation belongs to the user its first write names (`RepositoryService.appendMessages`
 *   with `userId`), or to none.
 * - Every operation sees the conversations of the user it names, and nothing of another user's or
 *   of a conversation without a user. Ids are compared exactly as given: no case folding, no
 *   Unicode normalisation, no trimming.
 * - `mergeFacts` applies each fact whose key holds nothing or an older statement. Later means by
 *   `saidAt`, and at equal times, merged last. A `null` value removes the fact but is kept, so an
 *   older statement cannot bring it back.
 * - Concurrent merges of one user, from fibers or processes, lose no update. The result is the
 *   same in any order.
 * - With `cursor`, the facts apply only if the conversation's facts cursor is still at
 *   `cursor.expected`, in the life `cursor.incarnation` when given. The cursor then moves to
 *   `cursor.next` in the same transaction. Otherwise nothing applies (`Stale`).
 * - `getFacts` returns the facts not removed, the latest said first.
 * - `listConversations` returns the user's conversations, latest message first, ties by id. It
 *   pages by `after`, keeping those listed after the given one, ties included. `before` keeps
 *   those whose latest message was said before it.
 * - `searchMessages` ranks the messages of all the user's conversations at once, as
 *   `MessageIndex.searchMessages` ranks one conversation's. It never finds a summary or leading
 *   system message.
 * - `searchEmbeddings` ranks the vectors of the user's conversations at once, as
 *   `MessageIndex.searchEmbeddings` ranks one conversation's: stored under `model`, of the query's
 *   length, by cosine similarity. It compares the vectors of the newest `scanLimit` seqs, taken
 *   from the conversations said last (each conversation's newest seqs first). Ties go to the
 *   conversation said last, then to the newer message.
 * - `readTurns` reads the whole turns that hold the hits, as `RepositoryService.readTurns` does in
 *   one conversation.
 * - `erase` removes, all or nothing, every fact about the user and every conversation of the user:
 *   messages, summary state, records, settings, vectors. It says what it removed. Afterwards
 *   nothing of the user is stored.
 *
 * @since 0.2.0
 * @category tags
 */
export class UserStore extends Context.Tag("effect-chat-memory/UserStore")<UserStore, UserStore.Service>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.2.0
 * @category models
 */
export declare namespace UserStore {
  /**
   * The user port's operations; their laws are on the tag.
   *
   * @since 0.2.0
   * @category models
   */
  export interface Service {
    /** The facts about the user not removed, the latest said first. */
    readonly getFacts: (userId: UserId) => Effect.Effect<ReadonlyArray<UserFact>, RepositoryError>
    /** Merges facts about the user, each key by the time it was said (see the laws). */
    readonly mergeFacts: (
      userId: UserId,
      facts: ReadonlyArray<UserFact>,
      cursor?: FactsCursor | undefined
    ) => Effect.Effect<MergeResult, RepositoryError>
    /** The user's conversations, the latest said first. */
    readonly listConversations: (
      userId: UserId,
      query: ListQuery
    ) => Effect.Effect<ReadonlyArray<ConversationEntry>, RepositoryError>
    /** The messages of the user's conversations that best match `query.text`, best first. */
    readonly searchMessages: (
      userId: UserId,
      query: SearchQuery
    ) => Effect.Effect<ReadonlyArray<SearchHit>, RepositoryError>
    /**
     * The embedded messages of the user's conversations closest to `query.vector`, best first.
     *
     * @since 0.3.0
     */
    readonly searchEmbeddings: (
      userId: UserId,
      query: VectorQuery
    ) => Effect.Effect<ReadonlyArray<SearchHit>, RepositoryError>
    /** The whole turns that hold the given messages, in one read. */
    readonly readTurns: (
      userId: UserId,
      query: TurnsQuery
    ) => Effect.Effect<ReadonlyArray<ConversationTurn>, RepositoryError>
    /** Removes everything of the user, all or nothing. */
    readonly erase: (userId: UserId) => Effect.Effect<UserErasure, RepositoryError>
  }

  /**
   * Where a conversation's facts extraction stands: the seq up to which its messages were read.
   *
   * @since 0.2.0
   * @category models
   */
  export interface FactsCursor {
    readonly conversationId: ConversationId
    readonly expected: number
    readonly next: number
    /** The conversation's life the facts were read from (`ConversationInfo.incarnation`), when known. */
    readonly incarnation?: number | undefined
  }

  /**
   * What a merge of facts about the user did.
   *
   * @since 0.2.0
   * @category models
   */
  export type MergeResult = Data.TaggedEnum<{
    /** Applied: the facts whose key took the new statement. */
    Merged: { readonly applied: ReadonlyArray<UserFact> }
    /** Refused: the conversation's cursor had moved on, or the conversation is gone. Nothing changed. */
    Stale: {}
  }>

  /**
   * What `listConversations` reads: a page of a user's conversations.
   *
   * @since 0.2.0
   * @category models
   */
  export interface ListQuery {
    /** At most this many (1 to 1000). */
    readonly limit: number
    /** Only conversations whose latest message was said before this time. */
    readonly before?: DateTime.Utc | undefined
    /** The next page: only the conversations listed after this one (ties of time go by id). */
    readonly after?: { readonly lastSaidAt: DateTime.Utc; readonly conversationId: ConversationId } | undefined
    /**
     * Only the conversations with messages past their facts cursor: turns not read yet to learn what
     * is known about the user (`ConversationInfo.factsCursor` below `lastSeq`).
     *
     * @since 0.3.0
     */
    readonly factsPending?: boolean | undefined
  }

  /**
   * What `searchMessages` looks for across a user's conversations.
   *
   * @since 0.2.0
   * @category models
   */
  export interface SearchQuery {
    readonly text: string
    /** At most this many hits (1 to 100). */
    readonly limit: number
    /**
     * The conversation the search is made for. Only its messages below `before` are searched, since
     * the others are shown. Every other conversation of the user is searched whole.
     */
    readonly current?: { readonly conversationId: ConversationId; readonly before: number } | undefined
    /**
     * `false` searches by words only. A user port that also searches by meaning
     * (`Recall.layerHybrid`) does so unless told not to. A store's own port ignores it.
     *
     * @since 0.3.0
     */
    readonly meaning?: boolean | undefined
  }

  /**
   * A semantic search of a user's embedded messages, as `MessageIndex.VectorQuery` of one
   * conversation.
   *
   * @since 0.3.0
   * @category models
   */
  export interface VectorQuery {
    /** The embedding model's name the vectors were stored under. */
    readonly model: string
    /** The query's vector, from the same model. */
    readonly vector: ReadonlyArray<number>
    /** At most this many hits, from 1 to 100. A value outside is brought into that range. */
    readonly limit: number
    /**
     * The most seqs whose vectors are compared: the newest of the conversations said last, taking
     * each one's newest seqs first. It bounds the scan, which reads every vector it compares.
     */
    readonly scanLimit: number
    /** The conversation the search is made for: only its messages below `before` are searched. */
    readonly current?: { readonly conversationId: ConversationId; readonly before: number } | undefined
  }

  /**
   * A message that matched a user-wide search.
   *
   * @since 0.2.0
   * @category models
   */
  export interface SearchHit {
    readonly conversationId: ConversationId
    readonly seq: number
    /** Higher is better. Scores compare within one search only. */
    readonly score: number
  }

  /**
   * Which turns to read: those holding the messages named, best first, at most `limit`.
   *
   * @since 0.2.0
   * @category models
   */
  export interface TurnsQuery {
    readonly hits: ReadonlyArray<{ readonly conversationId: ConversationId; readonly seq: number }>
    readonly limit: number
  }

  /**
   * A whole turn of one of the user's conversations.
   *
   * @since 0.2.0
   * @category models
   */
  export interface ConversationTurn {
    readonly conversationId: ConversationId
    readonly messages: ReadonlyArray<Message>
  }
}

/**
 * Constructors and matchers of `UserStore.MergeResult`.
 *
 * @since 0.2.0
 * @category constructors
 */
export const MergeResult = Data.taggedEnum<UserStore.MergeResult>()
