/**
 * The conversation log, the first of the storage ports: an append-only message log per
 * conversation with store-assigned seqs, its range reads and counters, the window a context is
 * assembled from, the whole turns recall reads, and the deletion of a whole conversation. Its siblings (`SummaryStore`,
 * `SettingsStore`, `MessageIndex`, `SummarizationLease`) keep the rest; a store provides all
 * of them (`Store.Ports`).
 *
 * @example
 * ```ts
 * import { DateTime, Effect } from "effect"
 * import { ConversationId, MemoryStore, RepositoryService } from "effect-chat-memory"
 *
 * // The store's log, used directly: append a counted, stamped message, then read the counters.
 * const program = Effect.gen(function*() {
 *   const repository = yield* RepositoryService.RepositoryService
 *   const id = ConversationId.make("c1")
 *   const createdAt = yield* DateTime.now
 *   yield* repository.appendMessages(id, [{ role: "user", content: "hello", metadata: {}, tokenCount: 2, createdAt }])
 *   return yield* repository.getConversation(id)
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(MemoryStore.layer))).then((info) => {
 *   assert.strictEqual(info.lastSeq, 1)
 *   assert.strictEqual(info.tokenCount, 2)
 * })
 * ```
 *
 * @since 0.1.0
 */
import type { DateTime, Effect } from "effect"
import { Context } from "effect"
import type { ConversationEntry } from "../domain/ConversationEntry.js"
import type { ConversationId } from "../domain/ConversationId.js"
import type { ConversationSettings } from "../domain/ConversationSettings.js"
import type { Message, NewMessage, Role } from "../domain/Message.js"
import type { SummaryState } from "../domain/SummaryState.js"
import type { UserFact } from "../domain/UserFact.js"
import type { UserId } from "../domain/UserId.js"
import type { ConversationNotFoundError } from "../errors/ConversationNotFoundError.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Stores the conversations' messages. Every implementation passes the repository contract suite.
 *
 * Laws:
 * - `appendMessages` is atomic: all messages are stored, with seqs `lastSeq + 1 … lastSeq + n` in
 *   the order given, or none is. Seqs are strictly increasing per conversation with no
 *   duplicates, also under concurrent writers. The first append creates the conversation; an
 *   empty append stores nothing and creates nothing.
 * - A conversation exists from its first append until `deleteConversation`; every other
 *   operation of this port on a conversation that does not exist fails with
 *   `ConversationNotFoundError`, except `readWindow` with `WindowQuery.userId` (below).
 * - `readWindow` returns the counters, the summary state, the conversation's stored settings
 *   (`SettingsStore`) and the leading system messages as of one snapshot, and `recent`: the
 *   newest messages after `after`, oldest first, with no gap.
 *   Either `reachedStart` is true and `recent` is every message of the range, or `recent` holds
 *   more than `tokenLimit` tokens (summary messages aside) and starts at a user message, where a
 *   turn may start. How much further back it reaches is the store's business.
 * - `readWindow` of a conversation that does not exist, with `WindowQuery.userId`, returns what a
 *   new conversation of that user starts from, in the same one read: the window of a conversation
 *   with no message (`info.lastSeq` 0, every count 0, `info.userId` the user named, `createdAt` and
 *   `updatedAt` the time of the read; the initial summary state; no system or recent message,
 *   `reachedStart`), the settings stored for its id, and `user` with the named user's facts and
 *   latest conversations. `info.lastSeq` is 0 for such a read only: a stored conversation holds a
 *   message. For a conversation that exists, `userId` changes nothing: its own user's sections
 *   (or none) come back, whoever the query names.
 * - `readTurns` reads, in one read (one statement on SQL stores), the turns that hold the messages
 *   `seqs` names, each turn once, ascending by seq. Here a turn is a user message and every message
 *   after it up to the next user message; the messages between the leading system messages and
 *   the first user message form one turn. A turn is cut at `before`, and never holds a `summary`
 *   message. A seq that names a leading system message, a `summary` message, a message at or past
 *   `before`, or nothing stored, holds no turn. With `limit`, only the turns of the first seqs
 *   given are read, at most `limit` of them.
 * - `deleteConversation` removes everything stored under the id, in every storage port, all or
 *   nothing: messages, summary state, summarization records, settings and embeddings. It fails
 *   with `ConversationNotFoundError` only when the id holds nothing: neither messages nor
 *   settings. An id that holds settings only is deleted like any other (its settings are
 *   cleared) and the call succeeds; a second call then fails.
 *
 * @since 0.1.0
 * @category tags
 */
export class RepositoryService extends Context.Tag("effect-chat-memory/RepositoryService")<
  RepositoryService,
  RepositoryService.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace RepositoryService {
  /**
   * The log's operations; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /**
     * Appends messages in one transaction and returns them with their seqs. With `userId`, the
     * conversation is the user's: bound by its first write that names a user, and refused
     * (`DataValidationError`, path `userId`, nothing stored) when it belongs to another.
     */
    readonly appendMessages: (
      conversationId: ConversationId,
      messages: ReadonlyArray<NewMessage>,
      options?: AppendOptions | undefined
    ) => Effect.Effect<AppendResult, DataValidationError | RepositoryError>
    /** Counters of a conversation, maintained on every write. */
    readonly getConversation: (
      conversationId: ConversationId
    ) => Effect.Effect<ConversationInfo, ConversationNotFoundError | RepositoryError>
    /** Messages in a seq range, in ascending seq order (see `MessageQuery`). */
    readonly listMessages: (
      conversationId: ConversationId,
      query: MessageQuery
    ) => Effect.Effect<ReadonlyArray<Message>, ConversationNotFoundError | RepositoryError>
    /** How many messages (in all and per role) and tokens a seq range holds. */
    readonly countMessages: (
      conversationId: ConversationId,
      query: CountQuery
    ) => Effect.Effect<RangeCounts, ConversationNotFoundError | RepositoryError>
    /**
     * What a context is assembled from, in one read: the counters, the summary state, the
     * conversation's settings, the leading system messages and the newest messages after `after`
     * (the cursor or the system prefix, whichever is later, or the system prefix alone), enough of
     * them to hold `tokenLimit` tokens back to a user message, or all of them (`reachedStart`). See
     * the laws.
     */
    readonly readWindow: (
      conversationId: ConversationId,
      query: WindowQuery
    ) => Effect.Effect<WindowRead, ConversationNotFoundError | RepositoryError>
    /**
     * The whole turns that hold the given messages, in one read: recall widens its hits to their
     * turns with it. Each turn is its messages in seq order (see the laws for what a turn is here).
     */
    readonly readTurns: (
      conversationId: ConversationId,
      query: TurnsQuery
    ) => Effect.Effect<ReadonlyArray<ReadonlyArray<Message>>, ConversationNotFoundError | RepositoryError>
    /**
     * Deletes the conversation in every storage port: messages, summary state, records, settings
     * and embeddings, all or nothing. Fails with `ConversationNotFoundError` only when the id holds
     * neither messages nor settings.
     */
    readonly deleteConversation: (
      conversationId: ConversationId
    ) => Effect.Effect<void, ConversationNotFoundError | RepositoryError>
  }

  /**
   * The errors of the reading operations (of this port and of `SummaryStore`).
   *
   * @since 0.1.0
   * @category errors
   */
  export type Errors = ConversationNotFoundError | RepositoryError

  /**
   * The options of `appendMessages`.
   *
   * @since 0.2.0
   * @category models
   */
  export interface AppendOptions {
    /** The user the conversation belongs to. */
    readonly userId?: UserId | undefined
  }

  /**
   * What `appendMessages` stored.
   *
   * @since 0.1.0
   * @category models
   */
  export interface AppendResult {
    readonly messages: ReadonlyArray<Message>
    /** The user the conversation belongs to after the append, or null. */
    readonly userId: UserId | null
    /** Messages the conversation holds after the append. */
    readonly messageCount: number
  }

  /**
   * The counters of a conversation (`getConversation`).
   *
   * @since 0.1.0
   * @category models
   */
  export interface ConversationInfo {
    readonly conversationId: ConversationId
    /** The user the conversation belongs to, or null. */
    readonly userId: UserId | null
    /** The seq up to which the facts about its user were read from it (0 for none). */
    readonly factsCursor: number
    /** The highest seq assigned so far (0 for none). */
    readonly lastSeq: number
    /** Messages stored now (pruned messages are not counted). */
    readonly messageCount: number
    /** Messages stored now, per role. */
    readonly roleCounts: PerRole
    /** The sum of the stored messages' token counts. */
    readonly tokenCount: number
    /**
     * The seq of the last of the conversation's leading system messages (0 when it does not start
     * with one). While it equals `lastSeq`, every message so far is a system message.
     */
    readonly systemPrefixSeq: number
    /**
     * The role of the first message after the leading system messages (null while there is
     * none): the first turn may open with an assistant greeting instead of a user message.
     */
    readonly firstTurnRole: Role | null
    /** When the conversation started: its first message's `createdAt`. */
    readonly createdAt: DateTime.Utc
    /** When it was last written to. */
    readonly updatedAt: DateTime.Utc
  }

  /**
   * A range of seqs, both bounds exclusive. With `limit`, the `limit` oldest (`from: "oldest"`,
   * the default) or newest (`from: "newest"`) messages of the range; always returned oldest first.
   *
   * @since 0.1.0
   * @category models
   */
  export interface MessageQuery {
    readonly after?: number | undefined
    readonly before?: number | undefined
    readonly limit?: number | undefined
    readonly from?: "oldest" | "newest" | undefined
  }

  /**
   * Which turns `readTurns` reads: those holding the messages `seqs` names, in the caller's order
   * of preference (the best search hit first), so that `limit` keeps the turns of the first ones.
   *
   * @since 0.1.0
   * @category models
   */
  export interface TurnsQuery {
    readonly seqs: ReadonlyArray<number>
    /** Only messages with a seq below this one: a turn that reaches it is cut there. */
    readonly before?: number | undefined
    /** At most this many turns, those of the first seqs given. */
    readonly limit?: number | undefined
  }

  /**
   * What `countMessages` counts.
   *
   * @since 0.1.0
   * @category models
   */
  export interface CountQuery {
    readonly after?: number | undefined
    readonly before?: number | undefined
  }

  /**
   * Message counts of a range: in all (`total`) and per role, and the tokens they hold.
   *
   * @since 0.1.0
   * @category models
   */
  export type RangeCounts = { readonly total: number; readonly tokenCount: number } & PerRole

  /**
   * Where the window starts (`"cursor"`: after both the summary cursor and the leading system
   * messages; `"system-prefix"`: after the leading system messages) and the tokens the caller
   * means to fill from it.
   *
   * @since 0.1.0
   * @category models
   */
  export interface WindowQuery {
    readonly after: "cursor" | "system-prefix"
    readonly tokenLimit: number
    /** With a user: how many of the user's other conversations the read lists (`WindowRead.user`). */
    readonly digest?: number | undefined
    /**
     * The user the caller names: a conversation not stored yet reads as a new conversation of that
     * user (see the laws), instead of failing with `ConversationNotFoundError`.
     */
    readonly userId?: UserId | undefined
  }

  /**
   * What `readWindow` returns: everything one context is assembled from.
   *
   * @since 0.1.0
   * @category models
   */
  export interface WindowRead {
    readonly info: ConversationInfo
    readonly state: SummaryState
    /** The conversation's stored settings (`SettingsStore.getSettings`), empty for none. */
    readonly settings: ConversationSettings
    /** The leading system messages. */
    readonly system: ReadonlyArray<Message>
    /** The seq the window starts after. */
    readonly after: number
    /** The newest messages with seq greater than `after`, oldest first. */
    readonly recent: ReadonlyArray<Message>
    /** Whether `recent` holds every message of the range. */
    readonly reachedStart: boolean
    /** With a user: what is known about the user and the user's latest other conversations. */
    readonly user: UserSections | null
  }

  /**
   * What a context shows of its user beside the conversation.
   *
   * @since 0.2.0
   * @category models
   */
  export interface UserSections {
    readonly userId: UserId
    /** The facts about the user not removed, the latest said first (`UserStore.getFacts`). */
    readonly facts: ReadonlyArray<UserFact>
    /** The user's other conversations, the latest said first (`WindowQuery.digest` of them). */
    readonly digest: ReadonlyArray<ConversationEntry>
  }

  /**
   * A count per role.
   *
   * @since 0.1.0
   * @category models
   */
  export type PerRole = { readonly [R in Role]: number }
}
