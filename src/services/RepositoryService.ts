/**
 * The storage port: an append-only message log per conversation with store-assigned seqs, the
 * summary state changed only by compare-and-set, summarization records, and a per-conversation
 * summarization lock.
 *
 * @since 0.1.0
 */
import type { DateTime, Effect, Option } from "effect"
import { Context, Data } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { Fact } from "../domain/Fact.js"
import type { Message, NewMessage, Role } from "../domain/Message.js"
import type { SummarizationRecord, SummaryLayer, SummaryState } from "../domain/SummaryState.js"
import type { ConversationNotFoundError } from "../errors/ConversationNotFoundError.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Stores conversations. Every implementation passes the repository contract suite.
 *
 * Laws:
 * - `appendMessages` is atomic: all messages are stored, with seqs `lastSeq + 1 … lastSeq + n` in
 *   the order given, or none is. Seqs are strictly increasing per conversation with no
 *   duplicates, also under concurrent writers. The first append creates the conversation.
 * - A conversation exists from its first append until `deleteConversation`; every other
 *   operation on a conversation that does not exist fails with `ConversationNotFoundError`.
 * - `deleteConversation` removes the messages, summary state and records together.
 * - The summary state changes only through `commitSummary`, which applies when the expected
 *   cursor and version are current and is refused (`Stale`) otherwise; an applied commit moves
 *   the cursor forward, increments the version and writes its record in the same transaction.
 * - `withSummarizationLock` runs its effect only while no other holder of the same conversation's
 *   lock runs (in this process, and across processes for shared stores); it does not wait.
 *
 * @since 0.1.0
 * @category tags
 */
export class RepositoryService extends Context.Tag("effect-chat-memory/RepositoryService")<
  RepositoryService,
  RepositoryService.Service
>() {}

/**
 * @since 0.1.0
 */
export declare namespace RepositoryService {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Appends messages in one transaction and returns them with their seqs. */
    readonly appendMessages: (
      conversationId: ConversationId,
      messages: ReadonlyArray<NewMessage>
    ) => Effect.Effect<AppendResult, RepositoryError>
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
     * What a context is assembled from, in one read (two round trips at most on SQL stores): the
     * counters, the summary state, the leading system messages and the newest messages after
     * `after` (the cursor or the system prefix, whichever is later, or the system prefix alone),
     * at least `windowPageSize(info, tokenLimit)` of them when the range holds that many.
     */
    readonly readWindow: (
      conversationId: ConversationId,
      query: WindowQuery
    ) => Effect.Effect<WindowRead, ConversationNotFoundError | RepositoryError>
    /** Deletes the conversation: messages, summary state and records, all or nothing. */
    readonly deleteConversation: (
      conversationId: ConversationId
    ) => Effect.Effect<void, ConversationNotFoundError | RepositoryError>
    /** The summary state (the initial one, cursor 0 and version 0, before any summarization). */
    readonly getSummaryState: (
      conversationId: ConversationId
    ) => Effect.Effect<SummaryState, ConversationNotFoundError | RepositoryError>
    /** Compare-and-set of the summary state, with its record, in one transaction. */
    readonly commitSummary: (
      commit: SummaryCommit
    ) => Effect.Effect<CommitResult, ConversationNotFoundError | RepositoryError>
    /** The records of applied summarizations, oldest first. */
    readonly listSummarizations: (
      conversationId: ConversationId
    ) => Effect.Effect<ReadonlyArray<SummarizationRecord>, ConversationNotFoundError | RepositoryError>
    /**
     * Runs `effect` holding the conversation's summarization lock, or returns `None` at once when
     * another holder has it.
     */
    readonly withSummarizationLock: <A, E, R>(
      conversationId: ConversationId,
      effect: Effect.Effect<A, E, R>
    ) => Effect.Effect<Option.Option<A>, E | RepositoryError, R>
  }

  /**
   * The errors of the reading operations.
   *
   * @since 0.1.0
   * @category errors
   */
  export type Errors = ConversationNotFoundError | RepositoryError

  /**
   * @since 0.1.0
   * @category models
   */
  export interface AppendResult {
    readonly messages: ReadonlyArray<Message>
    /** Messages the conversation holds after the append. */
    readonly messageCount: number
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface ConversationInfo {
    readonly conversationId: ConversationId
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
    readonly createdAt: DateTime.Utc
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
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface WindowRead {
    readonly info: ConversationInfo
    readonly state: SummaryState
    /** The leading system messages. */
    readonly system: ReadonlyArray<Message>
    /** The seq the window starts after. */
    readonly after: number
    /** The newest messages with seq greater than `after`, oldest first. */
    readonly recent: ReadonlyArray<Message>
    /** Whether `recent` holds every message of the range. */
    readonly reachedStart: boolean
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export type PerRole = { readonly [R in Role]: number }

  /**
   * A summarization to apply. It applies only if the state is still at `expected`; then the
   * state becomes (`narrative`, `facts`, `cursor`) with `version = expected.version + 1`, the
   * record is written with that version, a `summary` message is appended when
   * `summaryMessage` is given (its `metadata.summaryMetadataId` is the version), and, when
   * `prune` is set, the messages covered by the new cursor are deleted except the leading
   * system messages and `summary` messages.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SummaryCommit {
    readonly conversationId: ConversationId
    readonly expected: { readonly cursor: number; readonly version: number }
    readonly narrative: string
    readonly facts: ReadonlyArray<Fact>
    /** The per-chunk summaries of the `layered` mode (none in other modes). */
    readonly layers?: ReadonlyArray<SummaryLayer> | undefined
    /** The new cursor: at least `expected.cursor`, at most the conversation's `lastSeq`. */
    readonly cursor: number
    readonly record: Omit<SummarizationRecord, "conversationId" | "version" | "createdAt">
    readonly summaryMessage?: { readonly content: string; readonly tokenCount: number } | undefined
    readonly prune?: boolean | undefined
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export type CommitResult = Data.TaggedEnum<{
    /** Applied: the new state and its record. */
    Committed: { readonly state: SummaryState; readonly record: SummarizationRecord }
    /** Refused: the state had moved on; nothing changed. */
    Stale: { readonly current: SummaryState }
  }>
}

/**
 * Constructors and matchers of `RepositoryService.CommitResult`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const CommitResult = Data.taggedEnum<RepositoryService.CommitResult>()

/**
 * How many of the newest messages a window read returns at least: enough to hold `tokenLimit`
 * tokens twice over at the conversation's mean message size, so one read nearly always suffices,
 * yet bounded by the budget, not by the length of the history.
 *
 * @since 0.1.0
 * @category constructors
 */
export const windowPageSize = (info: RepositoryService.ConversationInfo, tokenLimit: number): number => {
  const meanTokens = info.messageCount === 0 ? 1 : Math.max(1, info.tokenCount / info.messageCount)
  return Math.min(10_000, Math.max(32, Math.ceil((2 * Math.max(0, tokenLimit)) / meanTokens) + 16))
}
