/**
 * One turn of an agent with memory, over `@effect/ai`. The turn reads the conversation's context,
 * with the user's message as the recall query. It calls the model with the app's toolkit until it
 * answers, then stores the exchange as it came. Storing starts the background work: a due
 * summarization runs after the turn, off its path.
 *
 * ```ts
 * const AgentToolkit = Toolkit.merge(MyToolkit, RecallToolkit.toolkit)
 * const turn = yield* ChatTurn.generateText("conversation-42", { system, prompt: line, toolkit: AgentToolkit })
 * console.log(turn.text)
 * ```
 *
 * The `system` prompt is stored once, as the conversation's leading system message. A turn with a
 * different `system` makes it the current one (`ChatMemoryService.setSystemPrompt`) from that turn
 * on; earlier turns stay as they were told. The recall tools (`RecallToolkit`) merged into the
 * toolkit are bound to the turn's conversation, so the app provides handlers for its own tools only.
 *
 * It has the shape of `LanguageModel.generateText`: the same `toolkit`, `toolChoice` and
 * `concurrency`, and the model's `AiError`s as they are. It does not follow `Chat`, which keeps its
 * whole history as one value. The memory keeps every message apart and gives the model a budgeted
 * view, rebuilt for each turn.
 *
 * @since 0.1.0
 */
import type { AiError, Response, Tool, Toolkit } from "@effect/ai"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import { Effect, Schema, Stream } from "effect"
import type { Concurrency } from "effect/Types"
import { MaxContentLength } from "../domain/internal/messageLimits.js"
import { StorableString } from "../domain/internal/storable.js"
import type { MemoryContext } from "../domain/MemoryContext.js"
import type { Message } from "../domain/Message.js"
import { type DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/internal/decode.js"
import type { RepositoryError } from "../errors/RepositoryError.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import { type PromptOptions, withUserMessage } from "./ai/ContextPrompt.js"
import { refusingPrompt } from "./internal/promptInput.js"
import * as RecallToolkit from "./RecallToolkit.js"

/**
 * The model calls of a turn by default.
 */
const defaultMaxSteps = 4

/**
 * The most model calls one turn may make.
 */
const MaxSteps = 100

/**
 * The options of a turn.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<Tools extends Record<string, Tool.Any>, E, R> {
  /** The user's message: the recall query, sent to the model after the context, then stored. */
  readonly prompt: string
  /**
   * The conversation's system prompt. A conversation without messages stores it with the turn, as
   * its leading system message. Otherwise a different one becomes the current system prompt
   * (`ChatMemoryService.setSystemPrompt`) for this turn and every later context. Left out, the
   * stored one is used.
   */
  readonly system?: string | undefined
  /**
   * The tools the model may call, with their handlers, or an effect giving them (as a `Toolkit` is).
   * Merged-in recall tools are bound to this conversation, so their handlers need not be in context.
   */
  readonly toolkit?: Toolkit.WithHandler<Tools> | Effect.Effect<Toolkit.WithHandler<Tools>, E, R> | undefined
  /** As for `LanguageModel.generateText`; the last step is always `"none"`. */
  readonly toolChoice?: LanguageModel.ToolChoice<ToolName<Tools>> | undefined
  /** How many tool calls of one step run at once. */
  readonly concurrency?: Concurrency | undefined
  /**
   * Model calls in the turn, from 1 to `MaxSteps` (`defaultMaxSteps` by default). The model is
   * called again while it calls tools. The last call may not call any, so the turn ends in an
   * answer.
   */
  readonly maxSteps?: number | undefined
  /** The context's budget for this turn (see `ChatMemoryService.getContext`). */
  readonly tokenBudget?: number | undefined
  /**
   * The user the conversation belongs to. The context then shows the user's facts and recalls the
   * user's other conversations, and the recall tools search them. The turn is stored as the user's.
   * Another user's conversation fails the turn before any model call, with a `DataValidationError`
   * naming `options.userId`.
   */
  readonly userId?: string | undefined
  /** The prompt role of the facts and summary messages (see `ContextPrompt.PromptOptions`). */
  readonly recordRole?: PromptOptions["recordRole"]
  /**
   * Tools whose calls and results are not stored: those whose results repeat what the memory holds
   * (`RecallToolkit`'s `search_memory` and `read_turns`). Stored, they would be recalled again and
   * again.
   */
  readonly unstoredTools?: ReadonlyArray<ToolName<Tools>> | undefined
}

/** The names of the tools of a toolkit. */
type ToolName<Tools extends Record<string, Tool.Any>> = { [Name in keyof Tools]: Tools[Name]["name"] }[keyof Tools]

/**
 * What a turn did.
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn<Tools extends Record<string, Tool.Any>> {
  /** The answer: the text of the last model response. */
  readonly text: string
  /** The last model response. */
  readonly response: LanguageModel.GenerateTextResponse<Tools>
  /** Every model response of the turn, in order, tool calls and results included. */
  readonly steps: ReadonlyArray<LanguageModel.GenerateTextResponse<Tools>>
  /** The memory's context the model was given. */
  readonly context: MemoryContext
  /** The messages stored: the system prompt when this turn stored it, the user's, then the exchange. */
  readonly messages: ReadonlyArray<Message>
}

/**
 * The last part of `streamText`'s stream, once the exchange is stored. It holds what `generateText`
 * returns, with each model call's streamed parts.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnEnd<Tools extends Record<string, Tool.Any>> {
  readonly type: "turn-end"
  /** The answer: the text of the last model call. */
  readonly text: string
  /** The parts of every model call of the turn, one array per call, in order. */
  readonly steps: ReadonlyArray<ReadonlyArray<Response.StreamPart<Tools>>>
  /** The memory's context the model was given. */
  readonly context: MemoryContext
  /** The messages stored: the system prompt when this turn stored it, the user's, then the exchange. */
  readonly messages: ReadonlyArray<Message>
}

const Content = StorableString.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  Schema.maxLength(MaxContentLength, { message: () => `must be at most ${MaxContentLength} characters` })
)

// Unlike `LanguageModel.generateText`, a turn takes a string, not a Prompt: the memory brings the history.
const TurnOptions = Schema.Struct({
  prompt: refusingPrompt(
    Content,
    "must be the user's message as a string, not an @effect/ai Prompt: pass the text of its last user " +
      "message (the memory brings the history)"
  ),
  system: Schema.optional(
    refusingPrompt(Content, "must be a string, not an @effect/ai Prompt: pass the text of its system message")
  ),
  maxSteps: Schema.optional(
    Schema.Int.pipe(Schema.between(1, MaxSteps, { message: () => `must be an integer from 1 to ${MaxSteps}` }))
  )
})

const decodeOptions = (
  operation: string,
  options: { readonly prompt: string; readonly system?: string | undefined; readonly maxSteps?: number | undefined }
) =>
  decode(TurnOptions, operation, "options")({
    prompt: options.prompt,
    ...(options.system === undefined ? {} : { system: options.system }),
    ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps })
  })

/** The toolkit of the options, its effect run with the recall tools bound to the conversation. */
const toolkitOf = <Tools extends Record<string, Tool.Any>, E, R>(
  conversationId: string,
  options: Options<Tools, E, R>
) =>
  options.toolkit === undefined
    ? Effect.succeed(undefined)
    : RecallToolkit.bind(options.toolkit, conversationId, { userId: options.userId })

/**
 * The system message this turn stores, in a conversation without messages, and the turn's context.
 * A `system` that differs from the current system prompt replaces it
 * (`ChatMemoryService.setSystemPrompt`), and the context is read again.
 */
const systemFor = (
  conversationId: string,
  context: MemoryContext,
  system: string | undefined,
  reread: Effect.Effect<MemoryContext, DataValidationError | RepositoryError, ChatMemoryService>
) =>
  Effect.gen(function*() {
    const unchanged = { leading: [], context }
    if (system === undefined) return unchanged
    if (context.system[0]?.content === system) return unchanged
    const memory = yield* ChatMemoryService
    const stored = context.system.length > 0 || context.recent.length > 0 || (yield* memory.getMessages(
      conversationId,
      { limit: 1 }
    ).pipe(
      Effect.map((messages) => messages.length > 0),
      Effect.catchTag("ConversationNotFoundError", () => Effect.succeed(false))
    ))
    if (!stored) return { leading: [{ role: "system" as const, content: system }], context }
    yield* memory.setSystemPrompt(conversationId, system)
    return { leading: [], context: yield* reread }
  })

/** The first prompt of the turn: the system message to store (if any), the context, the user's message. */
const firstPrompt = (
  context: MemoryContext,
  prompt: string,
  system: ReadonlyArray<{ readonly role: "system"; readonly content: string }>,
  recordRole: PromptOptions["recordRole"]
): Prompt.Prompt => {
  const turn = withUserMessage(context, prompt, { recordRole })
  return system.length === 0 ? turn : Prompt.merge(Prompt.make(system), turn)
}

/**
 * What a turn starts from: its decoded options, the context for its prompt (read again after a
 * system prompt change), the system message to store with it, its first prompt and its toolkit.
 */
const begin = <Tools extends Record<string, Tool.Any>, E, R>(
  operation: string,
  conversationId: string,
  options: Options<Tools, E, R>
) =>
  Effect.gen(function*() {
    const { maxSteps = defaultMaxSteps, prompt, system } = yield* decodeOptions(operation, options)
    const memory = yield* ChatMemoryService
    const readContext = memory.getContext(conversationId, {
      query: prompt,
      tokenBudget: options.tokenBudget,
      userId: options.userId
    })
    const { context, leading } = yield* systemFor(conversationId, yield* readContext, system, readContext)
    const toolkit = yield* toolkitOf(conversationId, options)
    const first = firstPrompt(context, prompt, leading, options.recordRole)
    return { context, first, leading, maxSteps, memory, prompt, toolkit }
  })

/** What of a turn's parts `addMessages` gets: all but the calls and results of `unstoredTools`. */
const storedParts = <Tools extends Record<string, Tool.Any>, Part extends { readonly type: string }>(
  options: Options<Tools, unknown, unknown>,
  parts: ReadonlyArray<Part>
): ReadonlyArray<Part> => {
  const unstored: ReadonlySet<string> = new Set(options.unstoredTools ?? [])
  return unstored.size === 0 ?
    parts :
    parts.filter((part) =>
      !((part.type === "tool-call" || part.type === "tool-result") && "name" in part && typeof part.name === "string" &&
        unstored.has(part.name))
    )
}

/** The turn's errors: the model's and its tools', the toolkit's, the memory's. */
type TurnError<Tools extends Record<string, Tool.Any>, E> =
  | AiError.AiError
  | Tool.HandlerError<Tools[keyof Tools]>
  | E
  | DataValidationError
  | RepositoryError

/** What a turn needs: the model, the memory, and what its tools need. */
type TurnContext<Tools extends Record<string, Tool.Any>, R> =
  | LanguageModel.LanguageModel
  | ChatMemoryService
  | Tool.Requirements<Tools[keyof Tools]>
  | Exclude<R, Tool.HandlersFor<Toolkit.Tools<typeof RecallToolkit.toolkit>>>

/**
 * Runs one turn: the context for `options.prompt` with recall, the model with the toolkit until it
 * answers (at most `maxSteps` calls), then one `addMessages` of the user's message and the
 * exchange. Storing starts any background summarization.
 *
 * A failed turn stores nothing, so the user may simply try again. Bad options fail before any model
 * call, with a `DataValidationError` naming `options.prompt`, `options.system` or
 * `options.maxSteps`. Turns of one conversation should not run at once: each would be answered
 * without the other.
 *
 * @example
 * ```ts
 * import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Config, Console, Effect, Layer } from "effect"
 * import { ChatMemory, ChatTurn } from "effect-chat-memory"
 *
 * const Model = OpenAiLanguageModel.layer({ model: "gpt-4o-mini" }).pipe(
 *   Layer.provide(OpenAiClient.layerConfig({ apiKey: Config.redacted("OPENAI_API_KEY") })),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 *
 * // One turn: the context for the line, the model, then the exchange stored.
 * const program = ChatTurn.generateText("conversation-42", {
 *   system: "You are a helpful assistant.",
 *   prompt: "Where is my order A-1001?"
 * }).pipe(Effect.flatMap((turn) => Console.log(turn.text)))
 *
 * // Run it with `NodeRuntime.runMain` (it needs OPENAI_API_KEY).
 * export const main = program.pipe(Effect.provide(Layer.merge(ChatMemory.layerConfig(), Model)))
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const generateText = <Tools extends Record<string, Tool.Any> = {}, E = never, R = never>(
  conversationId: string,
  options: Options<Tools, E, R>
): Effect.Effect<Turn<Tools>, TurnError<Tools, E>, TurnContext<Tools, R>> =>
  Effect.gen(function*() {
    const { context, first, leading, maxSteps, memory, prompt, toolkit } = yield* begin(
      "ChatTurn.generateText",
      conversationId,
      options
    )
    let current = first
    const steps: Array<LanguageModel.GenerateTextResponse<Tools>> = []
    for (let step = 1; step <= maxSteps; step++) {
      const response = toolkit === undefined
        // Without tools, the response's parts fit any toolkit's.
        ? new LanguageModel.GenerateTextResponse<Tools>(
          (yield* LanguageModel.generateText({ prompt: current })).content
        )
        : yield* LanguageModel.generateText({
          prompt: current,
          toolkit,
          toolChoice: step === maxSteps ? "none" : options.toolChoice,
          concurrency: options.concurrency
        })
      steps.push(response)
      if (response.toolCalls.length === 0) break
      current = Prompt.merge(current, Prompt.fromResponseParts(response.content))
    }

    const messages = yield* memory.addMessages(conversationId, [
      ...leading,
      { role: "user", content: prompt },
      ...storedParts(options, steps.flatMap((response) => response.content))
    ], { userId: options.userId })
    const response = steps[steps.length - 1]
    // The loop runs at least once (`maxSteps` >= 1).
    if (response === undefined) return yield* Effect.dieMessage("ChatTurn.generateText: no model call was made")
    return { text: response.text, response, steps, context, messages }
  }).pipe(Effect.withSpan("ChatTurn.generateText", { attributes: { conversationId } }))

/**
 * `generateText` as a stream, to show the answer as it comes. It emits every model call's parts as
 * `LanguageModel.streamText` gives them, each call starting with a `response-metadata` part. After
 * the last call, the exchange is stored in one `addMessages`. A last `TurnEnd` part (`type:
 * "turn-end"`) carries the answer, the context and the stored messages. The stream fails if storing
 * fails. A stream that fails or is interrupted before its end stores nothing.
 *
 * @example
 * ```ts
 * import { Console, Effect, Stream } from "effect"
 * import { ChatTurn } from "effect-chat-memory"
 *
 * // The answer as it streams; the exchange is stored when the stream ends.
 * export const streamed = ChatTurn.streamText("conversation-42", { userId: "ana", prompt: "Summarize our plan." }).pipe(
 *   Stream.filter((part) => part.type === "text-delta"),
 *   Stream.runForEach((part) => Console.log(part.delta))
 * )
 *
 * export const run = Effect.asVoid(streamed)
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const streamText = <Tools extends Record<string, Tool.Any> = {}, E = never, R = never>(
  conversationId: string,
  options: Options<Tools, E, R>
): Stream.Stream<Response.StreamPart<Tools> | TurnEnd<Tools>, TurnError<Tools, E>, TurnContext<Tools, R>> =>
  Stream.unwrap(Effect.gen(function*() {
    const { context, first, leading, maxSteps, memory, prompt, toolkit } = yield* begin(
      "ChatTurn.streamText",
      conversationId,
      options
    )
    // This turn's parts in order, for `addMessages` at the end, and where each model call starts.
    const parts: Array<Response.StreamPart<Tools>> = []
    const starts: Array<number> = []

    const step = (current: Prompt.Prompt, n: number): Stream.Stream<
      Response.StreamPart<Tools>,
      TurnError<Tools, E>,
      TurnContext<Tools, R>
    > => {
      const from = parts.length
      starts.push(from)
      const model: Stream.Stream<Response.StreamPart<Tools>, TurnError<Tools, E>, TurnContext<Tools, R>> =
        toolkit === undefined
          ? LanguageModel.streamText({ prompt: current })
          : LanguageModel.streamText({
            prompt: current,
            toolkit,
            toolChoice: n === maxSteps ? "none" : options.toolChoice,
            concurrency: options.concurrency
          })
      return model.pipe(
        Stream.tap((part) => Effect.sync(() => parts.push(part))),
        Stream.concat(Stream.suspend(() => {
          const answered = parts.slice(from)
          return n < maxSteps && answered.some((part) => part.type === "tool-call")
            ? step(Prompt.merge(current, Prompt.fromResponseParts(answered)), n + 1)
            : Stream.empty
        }))
      )
    }

    const end = Effect.suspend(() =>
      Effect.map(
        memory.addMessages(conversationId, [
          ...leading,
          { role: "user", content: prompt },
          ...storedParts(options, parts)
        ], { userId: options.userId }),
        (messages): TurnEnd<Tools> => {
          const steps = starts.map((from, i) => parts.slice(from, starts[i + 1] ?? parts.length))
          const last = steps[steps.length - 1] ?? []
          const text = last.flatMap((part) => part.type === "text-delta" ? [part.delta] : []).join("")
          return { type: "turn-end", text, steps, context, messages }
        }
      )
    )

    return Stream.concat(step(first, 1), Stream.fromEffect(end))
  })).pipe(Stream.withSpan("ChatTurn.streamText", { attributes: { conversationId } }))
