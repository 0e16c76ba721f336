/**
 * The user port: what a store keeps of a user across conversations (the facts known about the
 * user), and the reads and writes that span a user's conversations: list them, search them, read
 * their turns, erase the user.
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
 *   with `userId`), or to none. Every operation here sees the conversations of the user it names
 *   and nothing of another user's, nor of a conversation without a user: ids are compared exactly
 *   as given (no case folding, no Unicode normalisation, no trimming).
 * - `mergeFacts` applies each fact whose key holds nothing, or an older statement: later by
 *   `saidAt`; at the same time, the one merged last. A `null` value removes the fact but is kept,
 *   so that an older statement does not bring it back. Merges of one user from several fibers or
 *   processes lose no update: the result is the same in whatever order they apply. With `cursor`,
 *   the facts apply only if the conversation's facts cursor is still at `cursor.expected`, and the
 *   cursor moves to `cursor.next` in the same transaction; otherwise nothing applies (`Stale`).
 * - `getFacts` returns the facts not removed, the latest said first.
 * - `listConversations` returns the user's conversations, the one whose latest message was said
 *   last first (ties: by id), paged by `before` (only those whose latest message was said before it).
 * - `searchMessages` ranks the messages of the user's conversations as `MessageIndex.searchMessages`
 *   ranks one conversation's (the same roles, never a summary or leading system message), over all
 *   of them at once; `readTurns` reads the whole turns that hold the hits, as
 *   `RepositoryService.readTurns` does in one conversation.
 * - `erase` removes every conversation of the user (messages, summary state, records, settings,
 *   vectors) and every fact about the user, all or nothing, and says what it removed. Afterwards
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
    /** Refused: the conversation's cursor had moved on (or the conversation is gone); nothing changed. */
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
     * The conversation the search is made for: only its messages below `before` are searched (the
     * others are shown); every other conversation of the user is searched whole.
     */
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
    /** Higher is better; comparable within one search only. */
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
