/**
 * The `ChatMemoryService` behind `ChatMemory`. It validates input at the edge, then calls the store
 * and the strategy. The strategy decides what follows a write and what a context holds.
 */
import {
  DateTime,
  Effect,
  Layer,
  Metric,
  MetricBoundaries,
  Option,
  PubSub,
  Queue,
  Schema,
  type Scope,
  Stream
} from "effect"
import { ConversationSettings } from "../../domain/ConversationSettings.js"
import { ConversationStats } from "../../domain/ConversationStats.js"
import { createdAtProblem } from "../../domain/internal/messageLimits.js"
import { MaxContentLength } from "../../domain/internal/messageLimits.js"
import { ContextBuilt, type MemoryEvent, MemoryRecalled, MessagesAdded } from "../../domain/MemoryEvent.js"
import { type NewMessage } from "../../domain/Message.js"
import { type UserId } from "../../domain/UserId.js"
import { DataValidationError } from "../../errors/DataValidationError.js"
import { decode } from "../../errors/internal/decode.js"
import { ChatMemoryService } from "../../services/ChatMemoryService.js"
import { MemoryManagementStrategy } from "../../services/MemoryManagementStrategy.js"
import { MessageIndex } from "../../services/MessageIndex.js"
import { RepositoryService } from "../../services/RepositoryService.js"
import { SettingsStore } from "../../services/SettingsStore.js"
import { SummaryStore } from "../../services/SummaryStore.js"
import { TokenCounter } from "../../services/TokenCounter.js"
import { type UserMemoryService } from "../../services/UserMemoryService.js"
import { UserStore } from "../../services/UserStore.js"
import { EmbeddingJobs, searchTurns } from "../../strategies/Recall.js"
import { anotherUser, ownedBy } from "./ownership.js"
import { makePrefixTracker } from "./prefixTracker.js"
import {
  decodeAdd,
  decodeAddOptions,
  decodeClear,
  decodeContext,
  decodeGet,
  decodeGetSettings,
  decodeIdle,
  decodeSearch,
  decodeSetSettings,
  decodeStats,
  decodeSystemPrompt,
  isConversationId
} from "./requests.js"
import * as Users from "./users.js"

/** Turns a context left out that no summary covers. */
const omittedTurns = Metric.histogram(
  "chat_memory_context_omitted_turns",
  MetricBoundaries.exponential({ start: 1, factor: 2, count: 12 }),
  "Turns neither shown nor covered by the summary, per context built"
)

/** Contexts whose prompt prefix differs from the conversation's last context. */
const prefixChanges = Metric.counter("chat_memory_context_prefix_changes_total", {
  description:
    "Contexts whose prompt prefix changed from the previous context of the conversation (a prefix-cache miss)",
  incremental: true
})

/**
 * The options of the service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * The longest message content `addMessages` accepts, in UTF-16 code units. It ranges from 1 to
   * `Message.MaxContentLength` (4 Mi, the default). A longer message fails the call with a
   * `DataValidationError` naming `messages[i].content`, and nothing of it is stored.
   */
  readonly maxMessageLength?: number | undefined
}

/**
 * The values `Options.maxMessageLength` may take.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MaxMessageLength = Schema.Int.pipe(Schema.between(1, MaxContentLength)).annotations({
  description: `an integer from 1 to ${MaxContentLength}`
})

const OptionsSchema = Schema.Struct({ maxMessageLength: Schema.optional(MaxMessageLength) })

/**
 * The storage ports the service uses: the log, summary state (for `stats`), settings, index (for
 * `searchMemory`) and users. A store provides them all (`Store.Ports`).
 */
type Ports = RepositoryService | SummaryStore | SettingsStore | MessageIndex | UserStore

/**
 * Builds the service over a store, a strategy and a token counter. Every input is decoded here.
 * The strategy's events reach subscribers through the service's own hub. Invalid options fail with
 * a `DataValidationError` naming the option.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): Effect.Effect<
  ChatMemoryService.Service,
  DataValidationError,
  Ports | MemoryManagementStrategy | TokenCounter | Scope.Scope
> =>
  Effect.gen(function*() {
    const { maxMessageLength = MaxContentLength } = yield* decode(OptionsSchema, "ChatMemory.make", "options")(options)
    const repository = yield* RepositoryService
    const summaries = yield* SummaryStore
    const settingsRepository = yield* SettingsStore
    const messageIndex = yield* MessageIndex
    const users = yield* UserStore
    const strategy = yield* MemoryManagementStrategy
    const counter = yield* TokenCounter
    const pubsub = yield* Effect.acquireRelease(PubSub.sliding<MemoryEvent>(1024), PubSub.shutdown)
    // Events are built only while someone listens. Most apps never subscribe, and a turn should not
    // pay for two event objects nobody reads.
    let subscribers = 0
    const subscribe = Effect.acquireRelease(
      Effect.sync(() => (subscribers += 1)),
      () => Effect.sync(() => (subscribers -= 1))
    ).pipe(Effect.zipRight(PubSub.subscribe(pubsub)))
    const publish = (event: MemoryEvent) => PubSub.publish(pubsub, event)
    const publishLazily = (event: () => MemoryEvent) =>
      Effect.suspend(() => (subscribers > 0 ? PubSub.publish(pubsub, event()) : Effect.void))
    // Hybrid recall's background job, if the index has one. It also runs after each write.
    const embedding = Option.getOrUndefined(yield* Effect.serviceOption(EmbeddingJobs))
    // The strategy's and the embedding job's events reach subscribers through the service's hub.
    const forward = (events: Queue.Dequeue<MemoryEvent>) =>
      Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(events), publish)))
    yield* forward(yield* strategy.subscribe)
    if (embedding !== undefined) yield* forward(yield* embedding.subscribe)
    const prefixes = makePrefixTracker()

    const owned = ownedBy(repository)

    /**
     * One context's settings from the call: budget, query, user. The stored settings come with the
     * strategy's window read (`RepositoryService.WindowRead.settings`), so they cost no extra read.
     * The strategy lays the call's settings over them.
     */
    const contextSettings = (
      call: {
        readonly tokenBudget?: number | undefined
        readonly query?: string | undefined
        readonly userId?: UserId | undefined
      } | undefined
    ): MemoryManagementStrategy.ContextSettings => ({
      tokenBudget: call?.tokenBudget,
      query: call?.query,
      userId: call?.userId
    })

    return ChatMemoryService.of({
      addMessages: Effect.fn("ChatMemoryService.addMessages")(function*(conversationId, messages, options) {
        const request = yield* decodeAdd({ conversationId, messages })
        const userId = options === undefined ? undefined : (yield* decodeAddOptions({ options })).options.userId
        const tooLong = request.messages.find(({ message }) => message.content.length > maxMessageLength)
        if (tooLong !== undefined) {
          return yield* new DataValidationError({
            operation: "ChatMemoryService.addMessages",
            path: `messages[${tooLong.source}].content`,
            reason: `must be at most ${maxMessageLength} characters (maxMessageLength)`
          })
        }
        yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
        if (request.messages.length === 0) {
          // Nothing to store, but a call naming another user is refused as a write would be.
          yield* owned("ChatMemoryService.addMessages", request.conversationId, userId)
          return []
        }
        // The write's time, given to every message without one.
        const now = yield* DateTime.now
        for (const { message, source } of request.messages) {
          const late = message.createdAt === undefined ? undefined : createdAtProblem(message.createdAt, now)
          if (late !== undefined) {
            return yield* new DataValidationError({
              operation: "ChatMemoryService.addMessages",
              path: `messages[${source}].createdAt`,
              reason: late
            })
          }
        }
        const prepared: Array<NewMessage> = []
        for (const { message } of request.messages) {
          prepared.push({
            role: message.role,
            content: message.content,
            metadata: message.metadata ?? {},
            tokenCount: yield* counter.countMessage(message),
            createdAt: message.createdAt ?? now
          })
        }
        const appended = yield* repository.appendMessages(request.conversationId, prepared, { userId }).pipe(
          Effect.catchTag("DataValidationError", (refused) =>
            Effect.fail(anotherUser("ChatMemoryService.addMessages", refused.reason)))
        )
        yield* publishLazily(() =>
          new MessagesAdded({
            conversationId: request.conversationId,
            count: appended.messages.length,
            lastSeq: appended.messages[appended.messages.length - 1]?.seq ?? 0
          })
        )
        yield* strategy.postAddMessagesHook({
          conversationId: request.conversationId,
          userId: appended.userId,
          addedMessagesCount: appended.messages.length,
          totalMessagesCount: appended.messageCount
        })
        if (embedding !== undefined) {
          yield* embedding.afterWrite(request.conversationId)
        }
        return appended.messages
      }),

      getMessages: Effect.fn("ChatMemoryService.getMessages")(function*(conversationId, options) {
        const request = yield* decodeGet(options === undefined ? { conversationId } : { conversationId, options })
        yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
        yield* owned("ChatMemoryService.getMessages", request.conversationId, request.options?.userId)
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
        if (embedding !== undefined) {
          yield* embedding.forget(request.conversationId)
        }
        yield* repository.deleteConversation(request.conversationId)
        yield* prefixes.forget(request.conversationId)
        yield* Effect.logDebug("conversation cleared").pipe(
          Effect.annotateLogs("conversationId", request.conversationId)
        )
      }),

      getContext: Effect.fn("ChatMemoryService.getContext")(function*(conversationId, options) {
        // The common call, a valid id without options, needs no decoding.
        const request = options === undefined && isConversationId(conversationId)
          ? { conversationId, options: undefined }
          : yield* decodeContext(options === undefined ? { conversationId } : { conversationId, options })
        yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
        const settings = contextSettings(request.options)
        const context = yield* strategy.buildContext(request.conversationId, settings)
        const named = request.options?.userId
        if (named !== undefined && context.userId !== null && context.userId !== named) {
          // Refused after building: the conversation's user comes with the window read, in one round trip.
          return yield* anotherUser("ChatMemoryService.getContext")
        }
        yield* omittedTurns(Effect.succeed(context.turnsOmitted))
        if (context.turnsOmitted > 0) {
          // Logged here, once per context, since a strategy may assemble one twice around a fold it
          // waited for. A sliding window omits turns on nearly every read, so the line is built only
          // when debug logs are on.
          yield* Effect.whenLogLevel(
            Effect.logDebug("context omits turns").pipe(
              Effect.annotateLogs({
                conversationId: context.conversationId,
                turnsOmitted: context.turnsOmitted,
                omissionAnnounced: context.omissionAnnounced,
                messagesOmitted: context.messagesOmitted,
                turnsShown: context.turnsShown
              })
            ),
            "Debug"
          )
        }
        const prefixChanged = yield* prefixes.record(context.conversationId, context.prefixVersion)
        if (prefixChanged) {
          yield* prefixChanges(Effect.succeed(1))
        }
        yield* publishLazily(() =>
          new ContextBuilt({
            conversationId: context.conversationId,
            strategy: context.strategy,
            tokenCount: context.tokenCount,
            turnsShown: context.turnsShown,
            turnsOmitted: context.turnsOmitted,
            summaryTruncated: context.summaryTruncated,
            omissionAnnounced: context.omissionAnnounced,
            turnsRecalled: context.recalled.length,
            recalledTokens: context.recalledTokens,
            factsIncluded: context.facts.length,
            summaryIncluded: context.summary !== null,
            summarizedUpTo: context.summarizedUpTo
          })
        )
        if (context.recalled.length > 0) {
          yield* publishLazily(() =>
            new MemoryRecalled({
              conversationId: context.conversationId,
              turns: context.recalled.map((turn) => ({ fromSeq: turn.fromSeq, toSeq: turn.toSeq, score: turn.score })),
              tokenCount: context.recalledTokens
            })
          )
        }
        return context
      }),

      setSettings: Effect.fn("ChatMemoryService.setSettings")(function*(conversationId, settings) {
        const request = yield* decodeSetSettings({ conversationId, settings })
        yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
        // The overrides are replaced; the records (`strategy`, `systemPrompts`) stay unless given.
        return yield* settingsRepository.updateSettings(request.conversationId, (current) =>
          new ConversationSettings({
            ...(current.strategy === undefined ? {} : { strategy: current.strategy }),
            ...(current.systemPrompts === undefined ? {} : { systemPrompts: current.systemPrompts }),
            ...request.settings
          }, { disableValidation: true }))
      }),

      searchMemory: Effect.fn("ChatMemoryService.searchMemory")(function*(conversationId, query, options) {
        const request = yield* decodeSearch(
          options === undefined ? { conversationId, query } : { conversationId, query, options }
        )
        yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
        const search = {
          query: request.query,
          before: request.options?.before ?? Number.MAX_SAFE_INTEGER,
          limit: request.options?.limit ?? 5
        }
        const userId = request.options?.userId
        yield* owned("ChatMemoryService.searchMemory", request.conversationId, userId)
        return yield* searchTurns(
          repository,
          userId === undefined
            ? { index: messageIndex, conversationId: request.conversationId }
            : { users, userId, conversationId: request.conversationId },
          search
        )
      }),

      setSystemPrompt: Effect.fn("ChatMemoryService.setSystemPrompt")(function*(conversationId, text) {
        const request = yield* decodeSystemPrompt({ conversationId, text })
        yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
        const prompt = {
          text: request.text,
          since: yield* DateTime.now,
          tokenCount: yield* counter.countMessage({ content: request.text, metadata: {} })
        }
        // One update: a concurrent call, here or in another process, loses neither prompt nor override.
        return yield* settingsRepository.updateSettings(request.conversationId, (current) => {
          const prompts = current.systemPrompts ?? []
          return prompts.at(-1)?.text === request.text
            ? current
            : new ConversationSettings({ ...current, systemPrompts: [...prompts, prompt] }, { disableValidation: true })
        })
      }),

      getSettings: Effect.fn("ChatMemoryService.getSettings")(function*(conversationId) {
        const request = yield* decodeGetSettings({ conversationId })
        yield* Effect.annotateCurrentSpan("conversationId", request.conversationId)
        return yield* settingsRepository.getSettings(request.conversationId)
      }),

      awaitIdle: Effect.fn("ChatMemoryService.awaitIdle")(function*(conversationId) {
        const request = yield* decodeIdle(conversationId === undefined ? {} : { conversationId })
        yield* strategy.awaitIdle(request.conversationId)
        if (embedding !== undefined) {
          yield* embedding.awaitIdle(request.conversationId)
        }
      }),

      stats: Effect.fn("ChatMemoryService.stats")(function*(conversationId) {
        const { conversationId: id } = yield* decodeStats({ conversationId })
        yield* Effect.annotateCurrentSpan("conversationId", id)
        const info = yield* repository.getConversation(id)
        const state = yield* summaries.getSummaryState(id)
        const records = yield* summaries.listSummarizations(id)
        const context = yield* strategy.buildContext(id, contextSettings(undefined))
        const buffer = yield* repository.countMessages(id, { after: Math.max(state.cursor, info.systemPrefixSeq) })
        const track = yield* prefixes.get(id)
        return new ConversationStats({
          conversationId: id,
          strategy: context.strategy,
          messagesStored: info.messageCount,
          tokensStored: info.tokenCount,
          contextTokens: context.tokenCount,
          compressionRatio: info.tokenCount / Math.max(1, context.tokenCount),
          summarizations: records.length,
          summarizerInputTokens: records.reduce((n, record) =>
            n + record.inputTokens, 0),
          summarizerOutputTokens: records.reduce((n, record) => n + record.outputTokens, 0),
          summariesTruncated: records.filter((record) => record.summaryTruncated).length,
          summarizedUpTo: state.cursor,
          turnsShown: context.turnsShown,
          turnsOmitted: context.turnsOmitted,
          messagesOmitted: context.messagesOmitted,
          lagMessages: buffer.total - buffer.summary,
          lagTokens: buffer.tokenCount,
          contextsBuilt: track?.contexts ?? 0,
          prefixChanges: track?.changes ?? 0
        }, { disableValidation: true })
      }),

      events: Stream.unwrapScoped(Effect.map(subscribe, (queue) => Stream.fromQueue(queue))),
      subscribe
    })
  })

/**
 * The service as a layer over the store, strategy and token counter layers.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  ChatMemoryService | UserMemoryService,
  never,
  Ports | MemoryManagementStrategy | TokenCounter
> // The default options are valid: `make()` cannot fail with a DataValidationError.
 = Layer.merge(Layer.scoped(ChatMemoryService, Effect.orDie(make())), Users.layer)

/**
 * The service as a layer, with options. Invalid options fail its construction.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options: Options): Layer.Layer<
  ChatMemoryService | UserMemoryService,
  DataValidationError,
  Ports | MemoryManagementStrategy | TokenCounter
> => Layer.merge(Layer.scoped(ChatMemoryService, make(options)), Users.layer)
