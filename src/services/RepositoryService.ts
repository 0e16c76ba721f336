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
import type { SummarizationRecord, SummaryState } from "../domain/SummaryState.js"
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
    /** How many messages of each role a seq range holds. */
    readonly countMessages: (
      conversationId: ConversationId,
      query: CountQuery
    ) => Effect.Effect<RoleCounts, ConversationNotFoundError | RepositoryError>
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
   * Message counts of a range: in all (`total`) and per role.
   *
   * @since 0.1.0
   * @category models
   */
  export type RoleCounts = { readonly total: number } & PerRole

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
