/**
 * The summary state port: a conversation's running summary (narrative, facts, layers, cursor),
 * changed only by compare-and-set, and a record of each summarization applied.
 *
 * @since 0.1.0
 */
import type { Effect } from "effect"
import { Context, Data } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { Fact } from "../domain/Fact.js"
import type { SummarizationRecord, SummaryLayer, SummaryState } from "../domain/SummaryState.js"
import type { ConversationNotFoundError } from "../errors/ConversationNotFoundError.js"
import type { RepositoryError } from "../errors/RepositoryError.js"

/**
 * Stores the summary state of the conversations of the log (`RepositoryService`). Every
 * implementation passes the summary contract suite.
 *
 * Laws:
 * - A conversation's summary state exists while its log does. From its first append it is the
 *   initial one: cursor 0, version 0, no narrative, no facts. After `deleteConversation` there is
 *   none.
 * - Every operation on a conversation that does not exist fails with `ConversationNotFoundError`.
 *   A commit never creates one.
 * - The summary state changes only through `commitSummary`. It applies when the expected cursor,
 *   version and, when given, incarnation are current, and is refused (`Stale`) otherwise. So a
 *   summarization read before the conversation was deleted never lands in the conversation written
 *   again under its id.
 * - An applied commit, in one transaction, moves the cursor forward, increments the version and
 *   writes its record. Its summary message and prune go in the same transaction. Pruned messages
 *   leave the log, the message index and the embeddings.
 *
 * @since 0.1.0
 * @category tags
 */
export class SummaryStore extends Context.Tag("effect-chat-memory/SummaryStore")<
  SummaryStore,
  SummaryStore.Service
>() {}

/**
 * The shape of the service (`Service`) and the types it takes and gives.
 *
 * @since 0.1.0
 * @category models
 */
export declare namespace SummaryStore {
  /**
   * The summary state's operations; their laws are on the tag.
   *
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** The summary state. Before any summarization it is the initial one, cursor 0 and version 0. */
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
  }

  /**
   * A summarization to apply, only if the state is still at `expected`. Then:
   *
   * - The state becomes (`narrative`, `facts`, `cursor`), with `version = expected.version + 1`.
   * - The record is written with that version.
   * - With `summaryMessage`, a `summary` message is appended. Its `metadata.summaryMetadataId` is
   *   the version, and the record's `summaryMessageSeq` is its seq (null without one).
   * - With `prune`, the messages covered by the new cursor are deleted. Leading system messages
   *   and `summary` messages stay.
   *
   * @since 0.1.0
   * @category models
   */
  export interface SummaryCommit {
    readonly conversationId: ConversationId
    readonly expected: {
      readonly cursor: number
      readonly version: number
      /** The conversation's life the summarization read (`ConversationInfo.incarnation`), when known. */
      readonly incarnation?: number | undefined
    }
    readonly narrative: string
    readonly facts: ReadonlyArray<Fact>
    /** The per-chunk summaries of the `layered` mode (none in other modes). */
    readonly layers?: ReadonlyArray<SummaryLayer> | undefined
    /** The new cursor: at least `expected.cursor`, at most the conversation's `lastSeq`. */
    readonly cursor: number
    readonly record: Omit<SummarizationRecord, "conversationId" | "version" | "createdAt" | "summaryMessageSeq">
    readonly summaryMessage?: { readonly content: string; readonly tokenCount: number } | undefined
    readonly prune?: boolean | undefined
  }

  /**
   * What a compare-and-set of the summary state did.
   *
   * @since 0.1.0
   * @category models
   */
  export type CommitResult = Data.TaggedEnum<{
    /** Applied: the new state and its record. */
    Committed: { readonly state: SummaryState; readonly record: SummarizationRecord }
    /** Refused: the state had moved on, and nothing changed. */
    Stale: { readonly current: SummaryState }
  }>
}

/**
 * Constructors and matchers of `SummaryStore.CommitResult`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const CommitResult = Data.taggedEnum<SummaryStore.CommitResult>()
