/**
 * The conversation log, the first of the storage ports. It is an append-only message log per
 * conversation with store-assigned seqs, with range reads, counters, the window a context is built
 * from, the turns recall reads, and deletion. `SummaryStore`, `SettingsStore`, `MessageIndex` and
 * `SummarizationLease` keep the rest. A store provides all of them (`Store.Ports`).
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
 *   the order given, or none is. Seqs strictly increase per conversation, with no duplicates,
 *   even under concurrent writers. The first append creates the conversation. An empty append
 *   stores and creates nothing.
 * - A conversation exists from its first append until `deleteConversation`. Any other operation
 *   on a conversation that does not exist fails with `ConversationNotFoundError`. The exception is
 *   `readWindow` with `WindowQuery.userId` (below).
 * - `readWindow` returns, as of one snapshot, the counters, the summary state, the stored settings
 *   (`SettingsStore`), the leading system messages and `recent`. `recent` is the newest messages
 *   after `after`, oldest first, with no gap. Either `reachedStart` is true and `recent` is the
 *   whole range, or `recent` starts at a user message and holds more than `tokenLimit` tokens,
 *   summary messages aside. How much further back it reaches is the store's business.
 * - `readWindow` with `WindowQuery.userId`, on a conversation that does not exist, returns in one
 *   read what a new conversation of that user starts from:
 *   - The window of an empty conversation. `info.lastSeq` and every count are 0, `info.userId` is
 *     the user named, and `createdAt` and `updatedAt` are the time of the read. The summary state
 *     is the initial one, there is no system or recent message, and `reachedStart` is true.
 *   - The settings stored for its id.
 *   - `user`, with the named user's facts and latest conversations.
 *
 *   Only such a read has `info.lastSeq` 0, since a stored conversation holds a message. For a
 *   conversation that exists, `userId` changes nothing: its own user's sections (or none) come
 *   back.
 * - `readTurns` reads the turns that hold the messages `seqs` names, in one read (one statement on
 *   SQL stores). Each turn comes once, ascending by seq. A turn here is a user message and every
 *   message up to the next user message. The messages between the leading system messages and
 *   the first user message form one turn. A turn is cut at `before` and never holds a `summary`
 *   message. A seq holds no turn when it names a leading system message, a `summary` message, a
 *   message at or past `before`, or nothing stored. With `limit`, only the turns of the first
 *   seqs given are read, at most `limit` of them.
 * - `deleteConversation` removes everything stored under the id in every storage port, all or
 *   nothing: messages, summary state, summarization records, settings and embeddings. It fails
 *   with `ConversationNotFoundError` only when the id holds neither messages nor settings. An id
 *   with settings only is deleted like any other and the call succeeds. A second call then fails.
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
     * conversation is the user's, bound by its first write that names a user. If it belongs to
     * another user, the append fails with `DataValidationError` at path `userId`, storing nothing.
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
     * What a context is built from, in one read: the counters, the summary state, the settings,
     * the leading system messages and the newest messages after `after`. There are enough of them
     * to hold `tokenLimit` tokens back to a user message, or all of them (`reachedStart`). See the
     * laws.
     */
    readonly readWindow: (
      conversationId: ConversationId,
      query: WindowQuery
    ) => Effect.Effect<WindowRead, ConversationNotFoundError | RepositoryError>
    /**
     * The whole turns that hold the given messages, in one read. Recall widens its hits to turns
     * with it. Each turn is its messages in seq order (the laws say what a turn is).
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
     * The role of the first message after the leading system messages, null while there is none.
     * The first turn may open with an assistant greeting instead of a user message.
     */
    readonly firstTurnRole: Role | null
    /**
     * The store's number for this life of the conversation, given by the append that creates it and
     * never given again. Deleted and written again, the conversation has another: the
     * compare-and-sets that take it (`SummaryStore.SummaryCommit.expected`,
     * `UserStore.FactsCursor`) refuse work read from an earlier life. 0 for a conversation not
     * stored yet.
     */
    readonly incarnation: number
    /** When the conversation started: its first message's `createdAt`. */
    readonly createdAt: DateTime.Utc
    /** When it was last written to. */
    readonly updatedAt: DateTime.Utc
  }

  /**
   * A range of seqs, both bounds exclusive. With `limit`, the `limit` oldest (`from: "oldest"`,
   * the default) or newest (`from: "newest"`) messages of the range. Always returned oldest first.
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
   * Which turns `readTurns` reads: those holding the messages `seqs` names. The seqs are in the
   * caller's order of preference, best search hit first, so `limit` keeps the turns of the first.
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
   * Where the window starts, and the tokens the caller means to fill from it. `"cursor"` starts
   * after both the summary cursor and the leading system messages. `"system-prefix"` starts after
   * the leading system messages.
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
     * The user the caller names. A conversation not stored yet then reads as a new conversation of
     * that user (see the laws), instead of failing with `ConversationNotFoundError`.
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
