/**
 * The recall toolkit: `search_memory` and `read_turns`, the `@effect/ai` tools with which an agent
 * searches and reads the past of its own conversation, bound to that conversation when the
 * handlers are built.
 *
 * They merge with the app's tools in one expression, and the app builds handlers for its own tools
 * only: `ChatTurn` binds the recall tools to the turn's conversation itself, and `bind` does the
 * same for `@effect/ai`'s `Chat` or a plain `LanguageModel` call.
 *
 * ```ts
 * const AgentToolkit = Toolkit.merge(WeatherToolkit, RecallToolkit.toolkit)
 * // with ChatTurn: nothing more
 * yield* ChatTurn.generateText("c1", { prompt, toolkit: AgentToolkit })
 * // with Chat (or LanguageModel.generateText)
 * yield* chat.generateText({ prompt, toolkit: RecallToolkit.bind(AgentToolkit, "c1") })
 * ```
 *
 * @since 0.1.0
 */
import type * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import { DateTime, Effect, type Layer } from "effect"
import { ConversationId } from "../domain/ConversationId.js"
import type { Message } from "../domain/Message.js"
import type { RecalledTurn } from "../domain/RecalledTurn.js"
import { type DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/internal/decode.js"
import type { RepositoryError } from "../errors/RepositoryError.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import {
  DefaultSearchLimit,
  MaxReadMessages,
  MaxSearchTextLength,
  type MessageView,
  type ReadParameters,
  ReadTurns,
  SearchMemory,
  type SearchParameters,
  type ToolFailure,
  type TurnView
} from "./internal/recallTools.js"

/**
 * The toolkit for `LanguageModel.generateText({ prompt, toolkit })`: a failed call is returned to
 * the model as the tool's result (`{ error }`), so that it can try again, and never fails the
 * generation. Bad parameters fail it with `AiError.MalformedOutput`, as for any toolkit.
 *
 * @example
 * ```ts
 * import { Tool, Toolkit } from "@effect/ai"
 * import { Effect, Schema } from "effect"
 * import { ChatTurn, RecallToolkit } from "effect-chat-memory"
 *
 * const GetWeather = Tool.make("get_weather", {
 *   parameters: { city: Schema.String },
 *   success: Schema.String
 * })
 * const MyToolkit = Toolkit.make(GetWeather)
 *
 * // The app's tools and the recall tools in one toolkit; the app handles its own tools only.
 * export const AgentToolkit = Toolkit.merge(MyToolkit, RecallToolkit.toolkit)
 * export const MyToolkitLive = MyToolkit.toLayer({ get_weather: ({ city }) => Effect.succeed(`Sunny in ${city}`) })
 *
 * // ChatTurn binds the recall tools to the turn's conversation (and user).
 * export const turn = ChatTurn.generateText("c1", { prompt: "What did I say about Lisbon?", toolkit: AgentToolkit })
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const toolkit = Toolkit.make(SearchMemory, ReadTurns)

/**
 * What the tools may reach besides their conversation: with `userId`, `search_memory` searches every
 * conversation of that user, each turn of another conversation labelled with it. The scope is the
 * app's, set when the handlers are built: no parameter of a tool names a user or a conversation.
 */
interface Scope {
  readonly userId?: string | undefined
}

/**
 * The tools of the toolkit, by name.
 */
type Tools = Toolkit.Tools<typeof toolkit>

/**
 * The handlers `layer` provides.
 */
type Handlers = Tool.HandlersFor<Tools>

const callsText = (message: Message): string =>
  [
    message.content,
    ...(message.metadata.toolCalls ?? []).map((call) => `[calls ${call.name} ${JSON.stringify(call.params)}]`)
  ]
    .filter((part) => part.length > 0).join(" ")

const messageView = (message: Message, maxLength: number, whole: string): MessageView => {
  const full = callsText(message)
  const text = full.length <= maxLength
    ? full
    : `${full.slice(0, maxLength)} […${full.length - maxLength} more characters: ${whole}]`
  const tool = message.role === "tool" ? message.metadata.toolName : undefined
  return tool === undefined
    ? { seq: message.seq, role: message.role, text }
    : { seq: message.seq, role: message.role, tool, text }
}

const turnView = (turn: RecalledTurn): TurnView => ({
  ...(turn.conversationId === undefined ? {} : { conversation: turn.conversationId }),
  fromSeq: turn.fromSeq,
  toSeq: turn.toSeq,
  time: DateTime.formatIso(turn.createdAt),
  score: turn.score,
  messages: turn.messages.map((message) =>
    messageView(message, MaxSearchTextLength, `read_turns ${message.seq}-${message.seq} shows it whole`)
  )
})

/** The store failed: the model learns that much, the host's logs the rest. */
const storeFailed = (operation: string) => (error: RepositoryError) =>
  Effect.logWarning(`RecallToolkit.${operation}: the store failed`, error).pipe(
    Effect.zipRight(Effect.fail<ToolFailure>({ error: "The memory store failed; try again later." }))
  )

const invalid = (error: DataValidationError) => Effect.fail<ToolFailure>({ error: error.message })

const decodeConversationId = decode(ConversationId, "RecallToolkit.handlers", "conversationId")

/**
 * The handlers of both tools for one conversation, fixed here: no tool parameter names a
 * conversation, so an agent reaches no other one. An invalid id fails with `DataValidationError`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const handlers = (conversationId: string, scope: Scope = {}) =>
  Effect.gen(function*() {
    const id = yield* decodeConversationId(conversationId)
    const memory = yield* ChatMemoryService
    const userId = scope.userId

    const searchMemory = Effect.fn("RecallToolkit.searchMemory")(
      function*({ limit, query }: typeof SearchParameters.Type) {
        yield* Effect.annotateCurrentSpan("conversationId", id)
        const turns = yield* memory.searchMemory(id, query, { limit: limit ?? DefaultSearchLimit, userId }).pipe(
          Effect.catchTags({ DataValidationError: invalid, RepositoryError: storeFailed("searchMemory") })
        )
        return { turns: turns.map(turnView) }
      }
    )

    const readTurns = Effect.fn("RecallToolkit.readTurns")(function*({ fromSeq, toSeq }: typeof ReadParameters.Type) {
      yield* Effect.annotateCurrentSpan("conversationId", id)
      if (toSeq < fromSeq) {
        return yield* Effect.fail<ToolFailure>({ error: `toSeq (${toSeq}) must not be below fromSeq (${fromSeq})` })
      }
      const count = toSeq - fromSeq + 1
      if (count > MaxReadMessages) {
        return yield* Effect.fail<ToolFailure>({
          error: `at most ${MaxReadMessages} messages per call: seq ${fromSeq}-${toSeq} spans ${count}`
        })
      }
      const page = yield* memory.getMessages(id, { before: toSeq + 1, limit: count }).pipe(
        Effect.catchTags({
          ConversationNotFoundError: () => Effect.succeed([]),
          DataValidationError: invalid,
          RepositoryError: storeFailed("readTurns")
        })
      )
      // Seqs may have gaps (pruned messages): the page can reach below the range.
      const messages = page.filter((message) => message.seq >= fromSeq)
      if (messages.length === 0) {
        return yield* Effect.fail<ToolFailure>({ error: `no stored messages from seq ${fromSeq} to seq ${toSeq}` })
      }
      return { messages: messages.map((message) => messageView(message, Number.POSITIVE_INFINITY, "")) }
    })

    return toolkit.of({ search_memory: searchMemory, read_turns: readTurns })
  })

/**
 * The handlers of both tools for one conversation, as a layer over `ChatMemoryService`: provide
 * it next to `toolkit`. Build it per conversation.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  conversationId: string,
  scope: Scope = {}
): Layer.Layer<Handlers, DataValidationError, ChatMemoryService> => toolkit.toLayer(handlers(conversationId, scope))

/**
 * A toolkit, the recall tools' handlers bound to one conversation: `toolkit` is any toolkit that
 * holds `search_memory` and `read_turns` (e.g. `Toolkit.merge(AppToolkit, RecallToolkit.toolkit)`),
 * as `LanguageModel.generateText` takes it; the result no longer needs the recall handlers, only
 * the memory and the handlers of the other tools. Use it with `Chat` or `LanguageModel` directly
 * (`ChatTurn` does it for its turn). A toolkit already built (`Toolkit.WithHandler`) is returned as
 * it is; an invalid id fails with `DataValidationError`.
 *
 * @since 0.1.0
 * @category utils
 */
export const bind = <Tools extends Record<string, Tool.Any>, E = never, R = never>(
  toolkit: Toolkit.WithHandler<Tools> | Effect.Effect<Toolkit.WithHandler<Tools>, E, R>,
  conversationId: string,
  scope: Scope = {}
): Effect.Effect<Toolkit.WithHandler<Tools>, E | DataValidationError, Exclude<R, Handlers> | ChatMemoryService> =>
  Effect.isEffect(toolkit) ? Effect.provide(toolkit, layer(conversationId, scope)) : Effect.succeed(toolkit)
