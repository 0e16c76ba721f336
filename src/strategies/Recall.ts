/**
 * Recall: older turns of a conversation brought back for the current question, verbatim and
 * whole, with where and when they were said. A context asked with a query holds them
 * (`MemoryContext.recalled`). `ChatMemoryService.searchMemory` and the recall toolkit search them.
 *
 * The search is the store's `MessageIndex`: lexical by default, offline. `layerHybrid` fuses the
 * lexical ranking with the nearest messages by meaning. A background job computes their vectors
 * after each write.
 *
 * @example
 * ```ts
 * import { OpenAiClient, OpenAiEmbeddingModel } from "@effect/ai-openai"
 * import { FetchHttpClient } from "@effect/platform"
 * import { Config, Layer } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 *
 * const Embeddings = OpenAiEmbeddingModel.model("text-embedding-3-small", { mode: "batched" }).pipe(
 *   Layer.provide(OpenAiClient.layerConfig({ apiKey: Config.redacted("OPENAI_API_KEY") })),
 *   Layer.provide(FetchHttpClient.layer)
 * )
 *
 * // The store's index, made hybrid (`layerHybrid` over the model); the strategy asks it for
 * // recall by meaning.
 * export const MemoryLive = ChatMemory.layerLive({
 *   strategy: "summarization",
 *   recall: "hybrid",
 *   embeddings: { _tag: "embedding-model", layer: Embeddings },
 *   embeddingModel: "text-embedding-3-small"
 * })
 *
 * // The test memory, the same way.
 * export const TestMemory = ChatMemory.layerTest({ strategy: "summarization", recall: "hybrid", embeddings: Embeddings })
 * ```
 *
 * @since 0.2.0
 */
import { EmbeddingModel } from "@effect/ai"
import { Context, Duration, Effect, Layer, PubSub, type Queue, Schema, type Scope } from "effect"
import type { ConversationId } from "../domain/ConversationId.js"
import { PositiveDuration } from "../domain/internal/duration.js"
import type { MemoryEvent } from "../domain/MemoryEvent.js"
import * as Recalled from "../domain/RecalledTurn.js"
import type { UserId } from "../domain/UserId.js"
import { type DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/internal/decode.js"
import type { RepositoryError } from "../errors/RepositoryError.js"
import { MessageIndex } from "../services/MessageIndex.js"
import type { RepositoryService } from "../services/RepositoryService.js"
import { UserStore } from "../services/UserStore.js"
import { defaultUserScanLimit, makeHybrid } from "./internal/recall/hybrid.js"
import * as Search from "./internal/recall/search.js"
import { makeJobs } from "./internal/summarizer/jobs.js"

/**
 * One recalled turn: a user message and everything that answered it, as stored. It carries its
 * seq range, its time and the score that chose it.
 *
 * @since 0.2.0
 * @category models
 */
export const RecalledTurn = Recalled.RecalledTurn

/**
 * One recalled turn, as the `RecalledTurn` schema decodes it.
 *
 * @since 0.2.0
 * @category models
 */
export type RecalledTurn = Recalled.RecalledTurn

/**
 * Where `searchTurns` searches: one conversation, or every conversation of a user. The
 * conversation `conversationId`, when given, is searched only below `before`.
 */
type Scope =
  | { readonly index: MessageIndex.Service; readonly conversationId: ConversationId }
  | { readonly users: UserStore.Service; readonly userId: UserId; readonly conversationId?: ConversationId | undefined }

/**
 * The turns that end before `before` and best match `query`, best first, at most `limit`. Each
 * message found is widened to its whole turn, tool calls with their results. A turn of another
 * conversation is labelled with its id. An unknown conversation or user has none.
 *
 * @since 0.2.0
 * @category utils
 */
export const searchTurns = (
  repository: RepositoryService.Service,
  scope: Scope,
  query: {
    readonly query: string
    readonly before: number
    readonly limit: number
    /** `false`: by words only, even on a hybrid index. */
    readonly meaning?: boolean | undefined
  }
): Effect.Effect<ReadonlyArray<RecalledTurn>, RepositoryError> =>
  "index" in scope
    ? Search.searchTurns(
      repository,
      Search.conversationSource(repository, scope.index, scope.conversationId, query),
      scope.conversationId,
      query
    )
    : Search.searchTurns(
      repository,
      Search.userSource(scope.users, scope.userId, scope.conversationId, query),
      scope.conversationId,
      query
    )

/**
 * The background job of hybrid recall: it embeds the messages written since its last run. The
 * memory starts it after each write, waits for it in `awaitIdle`, and stops it before a
 * conversation is cleared. It forwards its events (`EmbeddingFailed`). `layerHybrid` provides it.
 *
 * @since 0.2.0
 * @category tags
 */
export class EmbeddingJobs extends Context.Tag("effect-chat-memory/Recall/EmbeddingJobs")<
  EmbeddingJobs,
  {
    /** Starts the conversation's job, or asks the running one to run once more. Never waits. */
    readonly afterWrite: (conversationId: ConversationId) => Effect.Effect<void>
    /** Waits until no job of the conversation, or of any without one, runs or is due. */
    readonly awaitIdle: (conversationId?: ConversationId) => Effect.Effect<void>
    /** Interrupts the job of a conversation about to be cleared. */
    readonly forget: (conversationId: ConversationId) => Effect.Effect<void>
    /** Subscribes to the job's events. */
    readonly subscribe: Effect.Effect<Queue.Dequeue<MemoryEvent>, never, Scope.Scope>
  }
>() {}

/**
 * The options of `layerHybrid`.
 *
 * @since 0.2.0
 * @category models
 */
export interface HybridOptions {
  /**
   * The name the vectors are stored under, the embedding model's. Vectors of different models are
   * never compared. Change it when the model changes, and the messages are embedded again.
   */
  readonly model?: string | undefined
  /**
   * The longest a context waits for the search by meaning: the query's vector and the store's
   * scan. Past it, or on failure, the context gets the lexical hits.
   */
  readonly queryTimeout?: Duration.DurationInput | undefined
  /**
   * The longest one background call, a batch of up to 64 messages, may take. Past it, its
   * messages stay pending. After a failed batch the job rests as long, doubling with each failure
   * in a row, up to 10 minutes.
   */
  readonly batchTimeout?: Duration.DurationInput | undefined
  /** How many conversations are embedded at once; the others wait for a turn. */
  readonly concurrency?: number | undefined
  /**
   * The most messages of a user a search by meaning across the user's conversations compares: the
   * newest, from the conversations said last. Older ones are found by their words. The scan reads
   * every vector it compares, so this bounds its time as a conversation of that length would.
   *
   * @since 0.3.0
   */
  readonly userScanLimit?: number | undefined
}

/**
 * The defaults of `HybridOptions`.
 */
const hybridDefaults = {
  model: "text-embedding-3-small",
  queryTimeout: Duration.seconds(2),
  batchTimeout: Duration.seconds(30),
  concurrency: 16,
  userScanLimit: defaultUserScanLimit
} as const

const HybridOptionsSchema = Schema.Struct({
  model: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(255)),
  queryTimeout: PositiveDuration,
  batchTimeout: PositiveDuration,
  concurrency: Schema.Int.pipe(Schema.between(1, 1000)),
  userScanLimit: Schema.Int.pipe(Schema.between(1, 1_000_000))
})

const decodeOptions = decode(HybridOptionsSchema, "Recall.layerHybrid", "options")

/**
 * The store's `MessageIndex` and `UserStore` made hybrid. A search, of one conversation or of a
 * user's conversations, fuses the lexical ranking with the messages nearest the query by meaning
 * (reciprocal rank fusion), unless it asks for words only (`meaning: false`). It provides
 * `EmbeddingJobs`, which computes the vectors with the `EmbeddingModel` in context. An embedding
 * model that fails or hangs fails neither a write nor a context: the context gets the lexical hits.
 * Invalid options fail the layer with a `DataValidationError` naming the option.
 *
 * @since 0.2.0
 * @category layers
 */
export const layerHybrid = (
  options: HybridOptions = {}
): Layer.Layer<
  MessageIndex | UserStore | EmbeddingJobs,
  DataValidationError,
  MessageIndex | UserStore | EmbeddingModel.EmbeddingModel
> =>
  Layer.scopedContext(Effect.gen(function*() {
    const settings = yield* decodeOptions({
      model: options.model ?? hybridDefaults.model,
      queryTimeout: options.queryTimeout ?? hybridDefaults.queryTimeout,
      batchTimeout: options.batchTimeout ?? hybridDefaults.batchTimeout,
      concurrency: options.concurrency ?? hybridDefaults.concurrency,
      userScanLimit: options.userScanLimit ?? hybridDefaults.userScanLimit
    })
    const lexical = yield* MessageIndex
    const users = yield* UserStore
    const embedder = yield* EmbeddingModel.EmbeddingModel
    const pubsub = yield* Effect.acquireRelease(PubSub.sliding<MemoryEvent>(1024), PubSub.shutdown)
    const hybrid = yield* makeHybrid({ index: lexical, users }, embedder, {
      ...settings,
      publish: (event) => Effect.asVoid(PubSub.publish(pubsub, event))
    })
    const jobs = yield* makeJobs(hybrid.embed, { concurrency: settings.concurrency })
    const index = MessageIndex.of({
      ...lexical,
      searchMessages: (conversationId, query) =>
        query.meaning === false ? lexical.searchMessages(conversationId, query) : hybrid.search(conversationId, query)
    })
    const userStore = UserStore.of({
      ...users,
      searchMessages: (userId, query) =>
        query.meaning === false ? users.searchMessages(userId, query) : hybrid.searchUser(userId, query)
    })
    return Context.make(MessageIndex, index).pipe(
      Context.add(UserStore, userStore),
      Context.add(EmbeddingJobs, {
        afterWrite: jobs.trigger,
        awaitIdle: jobs.awaitIdle,
        forget: jobs.cancel,
        subscribe: PubSub.subscribe(pubsub)
      })
    )
  }))
