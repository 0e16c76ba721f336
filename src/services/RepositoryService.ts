/**
 * The storage port: an append-only message log per conversation with store-assigned seqs, the
 * summary state changed only by compare-and-set, summarization records, per-conversation settings
 * and a per-conversation summarization lock.
 *
 * @since 0.1.0
 */
import type { DateTime, Effect, Option } from "effect"
import { Context, Data } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import type { ConversationSettings } from "../domain/ConversationSettings.js"
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
 *   operation on a conversation that does not exist fails with `ConversationNotFoundError`, except
 *   the settings operations and the lock.
 * - Settings are kept per conversation id beside the log: `getSettings` returns the stored
 *   overrides, or the empty settings when none are stored (also for an id without messages);
 *   `setSettings` replaces the whole set (an absent field is cleared, the empty settings store
 *   none) and returns what is stored. It may be called before the first append and does not
 *   create the conversation; appends and commits never change settings. Settings of one id are
 *   never visible from another.
 * - `deleteConversation` removes everything stored under the id, all or nothing: messages,
 *   summary state, records and settings. It fails with `ConversationNotFoundError` only when the id
 *   holds nothing: neither messages nor settings. An id that holds settings only is deleted like
 *   any other (its settings are cleared) and the call succeeds; a second call then fails.
 * - The summary state changes only through `commitSummary`, which applies when the expected
 *   cursor and version are current and is refused (`Stale`) otherwise; an applied commit moves
 *   the cursor forward, increments the version and writes its record in the same transaction.
 * - `withSummarizationLock` runs its effect only while no other holder of the same conversation's
 *   lock runs (in this process, and across processes for shared stores); it does not wait.
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
 *   models, other conversations, pruned or deleted messages never appear. `deleteConversation`
 *   and a pruning commit delete the vectors of what they delete. None of them fails on an unknown
 *   conversation: there is nothing pending and nothing found.
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
     * `after` (the cursor or the system prefix, whichever is later, or the system prefix alone):
     * a suffix of that range, as long as the store likes. Readers page further back when it holds
     * too little, so the length is a matter of cost: the in-memory store reads the messages that
     * hold more than `tokenLimit` tokens (summary messages aside) back to a user message; the SQL
     * stores read `windowPageSize(info, tokenLimit)` of them, to save a second round trip.
     */
    readonly readWindow: (
      conversationId: ConversationId,
      query: WindowQuery
    ) => Effect.Effect<WindowRead, ConversationNotFoundError | RepositoryError>
    /**
     * Deletes the conversation: messages, summary state, records and settings, all or nothing.
     * Fails with `ConversationNotFoundError` only when the id holds neither messages nor settings.
     */
    readonly deleteConversation: (
      conversationId: ConversationId
    ) => Effect.Effect<void, ConversationNotFoundError | RepositoryError>
    /** The conversation's overrides of the memory's defaults: the empty settings when none are stored. */
    readonly getSettings: (
      conversationId: ConversationId
    ) => Effect.Effect<ConversationSettings, RepositoryError>
    /**
     * Replaces the conversation's overrides (an absent field is cleared) and returns what is
     * stored. Allowed before the conversation's first message; it does not create the conversation.
     */
    readonly setSettings: (
      conversationId: ConversationId,
      settings: ConversationSettings
    ) => Effect.Effect<ConversationSettings, RepositoryError>
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

  /**
   * @since 0.1.0
   * @category models
   */
  export type PerRole = { readonly [R in Role]: number }

  /**
   * A summarization to apply. It applies only if the state is still at `expected`; then the
   * state becomes (`narrative`, `facts`, `cursor`) with `version = expected.version + 1`, the
   * record is written with that version, a `summary` message is appended when
   * `summaryMessage` is given (its `metadata.summaryMetadataId` is the version, and the record's
   * `summaryMessageSeq` its seq; null without one), and, when
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
    readonly record: Omit<SummarizationRecord, "conversationId" | "version" | "createdAt" | "summaryMessageSeq">
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
 * How many of the newest messages a store that pays a round trip per read takes in one window
 * read: enough to hold `tokenLimit` tokens twice over at the conversation's mean message size, so
 * one read nearly always suffices, yet bounded by the budget, not by the length of the history.
 * The SQL stores compute it in the statement and send only what holds the limit.
 *
 * @since 0.1.0
 * @category constructors
 */
export const windowPageSize = (info: RepositoryService.ConversationInfo, tokenLimit: number): number => {
  const meanTokens = info.messageCount === 0 ? 1 : Math.max(1, info.tokenCount / info.messageCount)
  return Math.min(10_000, Math.max(32, Math.ceil((2 * Math.max(0, tokenLimit)) / meanTokens) + 16))
}
