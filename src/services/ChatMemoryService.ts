/**
 * The public face of the memory: add messages, read them back, clear a conversation, and get the
 * budgeted context for the next model call.
 *
 * @since 0.1.0
 */
import { Context, DateTime, Effect, Layer, PubSub, Queue, Schema, type Scope, Stream } from "effect"
import { ConversationId } from "../domain/ConversationId.js"
import { ConversationStats } from "../domain/ConversationStats.js"
import type { MemoryContext } from "../domain/MemoryContext.js"
import { ContextBuilt, type MemoryEvent, MessagesAdded } from "../domain/MemoryEvent.js"
import { type Message, MessageInput } from "../domain/Message.js"
import type { ConversationNotFoundError } from "../errors/ConversationNotFoundError.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import type { RepositoryError } from "../errors/RepositoryError.js"
import * as Metrics from "../strategies/internal/metrics.js"
import { decode } from "../errors/DataValidationError.js"
import { MemoryManagementStrategy } from "./MemoryManagementStrategy.js"
import { RepositoryService } from "./RepositoryService.js"
import { TokenCounter } from "./TokenCounter.js"

/**
 * The most messages one `addMessages` call may add.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxMessagesPerCall = 10_000

/**
 * The largest page `getMessages` returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const MaxPageSize = 10_000

/**
 * Conversation memory for an agent.
 *
 * Laws:
 * - Every input is validated first; bad input fails with `DataValidationError` naming the field,
 *   and nothing of that call is stored.
 * - `addMessages` stores all its messages or none, in order, with strictly increasing seqs; it
 *   never waits for, nor fails because of, background work of the strategy.
 * - `getMessages` returns messages oldest first: the newest `limit` ones before seq `before`.
 * - `clearMessages` stops the conversation's background work, then removes its messages, summary
 *   state and records together; afterwards the conversation is unknown.
 * - `getContext` fails only on store errors and unknown conversations.
 * - Methods on a conversation that was never written (or was cleared) fail with
 *   `ConversationNotFoundError`; `addMessages` creates it.
 *
 * @since 0.1.0
 * @category tags
 */
export class ChatMemoryService extends Context.Tag("effect-chat-memory/ChatMemoryService")<
  ChatMemoryService,
  ChatMemoryService.Service
>() {}

/**
 * @since 0.1.0
 */
export declare namespace ChatMemoryService {
  /**
   * @since 0.1.0
   * @category models
   */
  export interface Service {
    /** Stores messages at the end of the conversation, creating it if new. */
    readonly addMessages: (
      conversationId: string,
      messages: ReadonlyArray<typeof MessageInput.Encoded>
    ) => Effect.Effect<ReadonlyArray<Message>, DataValidationError | RepositoryError>
    /** Reads stored messages, oldest first. */
    readonly getMessages: (
      conversationId: string,
      options?: GetMessagesOptions
    ) => Effect.Effect<ReadonlyArray<Message>, DataValidationError | ConversationNotFoundError | RepositoryError>
    /** Deletes the conversation: messages, summary state and records. */
    readonly clearMessages: (
      conversationId: string
    ) => Effect.Effect<void, DataValidationError | ConversationNotFoundError | RepositoryError>
    /** The context for the next model call, as the configured strategy assembles it. */
    readonly getContext: (
      conversationId: string
    ) => Effect.Effect<MemoryContext, DataValidationError | ConversationNotFoundError | RepositoryError>
    /** Waits until the strategy's background work is done, for one conversation or for all. */
    readonly awaitIdle: (conversationId?: string) => Effect.Effect<void, DataValidationError>
    /** What the conversation's memory holds and costs now. */
    readonly stats: (
      conversationId: string
    ) => Effect.Effect<ConversationStats, DataValidationError | ConversationNotFoundError | RepositoryError>
    /**
     * The memory's events from the moment the stream starts: messages added, contexts built,
     * summaries applied, summarization failures, fallbacks. A slow consumer misses the oldest.
     */
    readonly events: Stream.Stream<MemoryEvent>
    /** Subscribes to the events at once; the subscription ends with the scope. */
    readonly subscribe: Effect.Effect<Queue.Dequeue<MemoryEvent>, never, Scope.Scope>
  }

  /**
   * @since 0.1.0
   * @category models
   */
  export interface GetMessagesOptions {
    /** At most this many messages (the newest of the range); 1 to `MaxPageSize`. */
    readonly limit?: number | undefined
    /** Only messages with a seq below this one. */
    readonly before?: number | undefined
  }
}

const AddMessagesRequest = Schema.Struct({
  conversationId: ConversationId,
  messages: Schema.Array(MessageInput).pipe(
    Schema.maxItems(MaxMessagesPerCall, { message: () => `must hold at most ${MaxMessagesPerCall} messages` })
  )
})

const GetMessagesRequest = Schema.Struct({
  conversationId: ConversationId,
  options: Schema.optional(Schema.Struct({
    limit: Schema.optional(Schema.Int.pipe(Schema.between(1, MaxPageSize))),
    before: Schema.optional(Schema.Int.pipe(Schema.positive()))
  }))
})

const ConversationRequest = Schema.Struct({ conversationId: ConversationId })

const StatsRequest = ConversationRequest

const AwaitIdleRequest = Schema.Struct({ conversationId: Schema.optional(ConversationId) })

/**
 * Builds the service over a repository, a strategy and a token counter.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  ChatMemoryService.Service,
  never,
  RepositoryService | MemoryManagementStrategy | TokenCounter | Scope.Scope
> = Effect.gen(function*() {
  const repository = yield* RepositoryService
  const strategy = yield* MemoryManagementStrategy
  const counter = yield* TokenCounter
  const pubsub = yield* Effect.acquireRelease(PubSub.sliding<MemoryEvent>(1024), PubSub.shutdown)
  const publish = (event: MemoryEvent) => PubSub.publish(pubsub, event)
  // The strategy's events reach subscribers through the service's own hub.
  const strategyEvents = yield* strategy.subscribe
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(strategyEvents), publish)))
  const decodeStats = decode(StatsRequest, "ChatMemoryService.stats", "")

  const decodeAdd = decode(AddMessagesRequest, "ChatMemoryService.addMessages", "")
  const decodeGet = decode(GetMessagesRequest, "ChatMemoryService.getMessages", "")
  const decodeClear = decode(ConversationRequest, "ChatMemoryService.clearMessages", "")
  const decodeContext = decode(ConversationRequest, "ChatMemoryService.getContext", "")
  const decodeIdle = decode(AwaitIdleRequest, "ChatMemoryService.awaitIdle", "")

  return ChatMemoryService.of({
    addMessages: Effect.fn("ChatMemoryService.addMessages")(function*(conversationId, messages) {
      const request = yield* decodeAdd({ conversationId, messages })
      yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
      if (request.messages.length === 0) return []
      const createdAt = yield* DateTime.now
      const prepared = yield* Effect.forEach(
        request.messages,
        (message) =>
          Effect.map(counter.countMessage(message), (tokenCount) => ({
            role: message.role,
            content: message.content,
            metadata: message.metadata ?? {},
            tokenCount,
            createdAt
          }))
      )
      const appended = yield* repository.appendMessages(request.conversationId, prepared)
      yield* publish(
        new MessagesAdded({
          conversationId: request.conversationId,
          count: appended.messages.length,
          lastSeq: appended.messages[appended.messages.length - 1]?.seq ?? 0
        })
      )
      yield* strategy.postAddMessagesHook({
        conversationId: request.conversationId,
        addedMessagesCount: appended.messages.length,
        totalMessagesCount: appended.messageCount
      })
      return appended.messages
    }),

    getMessages: Effect.fn("ChatMemoryService.getMessages")(function*(conversationId, options) {
      const request = yield* decodeGet(options === undefined ? { conversationId } : { conversationId, options })
      yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
      return yield* repository.listMessages(request.conversationId, {
        before: request.options?.before,
        limit: request.options?.limit,
        from: "newest"
      })
    }),

    clearMessages: Effect.fn("ChatMemoryService.clearMessages")(function*(conversationId) {
      const request = yield* decodeClear({ conversationId })
      yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
      yield* strategy.forget(request.conversationId)
      yield* repository.deleteConversation(request.conversationId)
      yield* Effect.logInfo("conversation cleared").pipe(Effect.annotateLogs("conversationId", request.conversationId))
    }),

    getContext: Effect.fn("ChatMemoryService.getContext")(function*(conversationId) {
      const request = yield* decodeContext({ conversationId })
      yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
      const context = yield* strategy.buildContext(request.conversationId)
      yield* Metrics.omittedTurns(Effect.succeed(context.turnsOmitted))
      yield* publish(
        new ContextBuilt({
          conversationId: context.conversationId,
          strategy: context.strategy,
          tokenCount: context.tokenCount,
          turnsShown: context.turnsShown,
          turnsOmitted: context.turnsOmitted,
          summaryTruncated: context.summaryTruncated
        })
      )
      return context
    }),

    awaitIdle: Effect.fn("ChatMemoryService.awaitIdle")(function*(conversationId) {
      const request = yield* decodeIdle(conversationId === undefined ? {} : { conversationId })
      yield* strategy.awaitIdle(request.conversationId)
    }),

    stats: Effect.fn("ChatMemoryService.stats")(function*(conversationId) {
      const { conversationId: id } = yield* decodeStats({ conversationId })
      yield* Effect.annotateCurrentSpan("conversationId", id)
      const info = yield* repository.getConversation(id)
      const state = yield* repository.getSummaryState(id)
      const records = yield* repository.listSummarizations(id)
      const context = yield* strategy.buildContext(id)
      const buffer = yield* repository.countMessages(id, { after: Math.max(state.cursor, info.systemPrefixSeq) })
      return new ConversationStats({
        conversationId: id,
        strategy: context.strategy,
        messagesStored: info.messageCount,
        tokensStored: info.tokenCount,
        contextTokens: context.tokenCount,
        compressionRatio: info.tokenCount / Math.max(1, context.tokenCount),
        summarizations: records.length,
        summarizerInputTokens: records.reduce((n, record) => n + record.inputTokens, 0),
        summarizerOutputTokens: records.reduce((n, record) => n + record.outputTokens, 0),
        summarizedUpTo: state.cursor,
        turnsShown: context.turnsShown,
        turnsOmitted: context.turnsOmitted,
        messagesOmitted: context.messagesOmitted,
        lagMessages: buffer.total - buffer.summary,
        lagTokens: buffer.tokenCount
      }, { disableValidation: true })
    }),

    events: Stream.fromPubSub(pubsub),
    subscribe: PubSub.subscribe(pubsub)
  })
})

/**
 * The service as a layer over the repository, strategy and token counter layers.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  ChatMemoryService,
  never,
  RepositoryService | MemoryManagementStrategy | TokenCounter
> = Layer.scoped(ChatMemoryService, make)
