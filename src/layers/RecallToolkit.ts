/**
 * The recall toolkit: `search_memory` and `read_turns`, the `@effect/ai` tools with which an agent
 * searches and reads its own conversation's past. Building the handlers binds them to that
 * conversation.
 *
 * They merge with the app's tools, and the app builds handlers for its own tools only. `ChatTurn`
 * binds the recall tools to the turn's conversation. `bind` does so for `Chat` or a plain
 * `LanguageModel` call.
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
 * The toolkit for `LanguageModel.generateText({ prompt, toolkit })`. A failed call returns `{ error }`
 * to the model as the tool's result, so it can try again; it never fails the generation. Bad
 * parameters fail with `AiError.MalformedOutput`, as for any toolkit.
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
 * What the tools may reach besides their conversation. With `userId`, `search_memory` searches all
 * that user's conversations and labels turns from the others. The app sets the scope when building
 * the handlers; no tool parameter names a user or a conversation.
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

/** The store failed: the model learns only that, the host's logs get the rest. */
const storeFailed = (operation: string) => (error: RepositoryError) =>
  Effect.logWarning(`RecallToolkit.${operation}: the store failed`, error).pipe(
    Effect.zipRight(Effect.fail<ToolFailure>({ error: "The memory store failed; try again later." }))
  )

const invalid = (error: DataValidationError) => Effect.fail<ToolFailure>({ error: error.message })

const decodeConversationId = decode(ConversationId, "RecallToolkit.handlers", "conversationId")

/**
 * Both tools' handlers for one conversation. No tool parameter names a conversation, so an agent
 * reaches no other. An invalid id fails with `DataValidationError`.
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
      const page = yield* memory.getMessages(id, { before: toSeq + 1, limit: count, userId }).pipe(
        Effect.catchTags({
          ConversationNotFoundError: () => Effect.succeed([]),
          DataValidationError: invalid,
          RepositoryError: storeFailed("readTurns")
        })
      )
      // Pruned messages leave gaps in seqs, so the page can reach below the range.
      const messages = page.filter((message) => message.seq >= fromSeq)
      if (messages.length === 0) {
        return yield* Effect.fail<ToolFailure>({ error: `no stored messages from seq ${fromSeq} to seq ${toSeq}` })
      }
      return { messages: messages.map((message) => messageView(message, Number.POSITIVE_INFINITY, "")) }
    })

    return toolkit.of({ search_memory: searchMemory, read_turns: readTurns })
  })

/**
 * Both tools' handlers for one conversation, as a layer over `ChatMemoryService`. Provide it next
 * to `toolkit`, one per conversation.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  conversationId: string,
  scope: Scope = {}
): Layer.Layer<Handlers, DataValidationError, ChatMemoryService> => toolkit.toLayer(handlers(conversationId, scope))

/**
 * Binds the recall tools' handlers in `toolkit` to one conversation, for `Chat` or `LanguageModel`
 * used directly. `toolkit` is any toolkit holding `search_memory` and `read_turns`. The result
 * needs the memory and the other tools' handlers, not the recall handlers. A toolkit already built
 * (`Toolkit.WithHandler`) is returned as it is. Otherwise an invalid id fails with
 * `DataValidationError`.
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
