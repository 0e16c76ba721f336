/**
 * `chat`: an interactive conversation with the configured model, memory on. The model is OpenAI's,
 * or any compatible server's by base URL. Each answer is generated over the memory's context. The
 * exchange is stored and summarized in the background like any conversation.
 */
import * as OpenAiClient from "@effect/ai-openai/OpenAiClient"
import * as OpenAiLanguageModel from "@effect/ai-openai/OpenAiLanguageModel"
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Config, Console, Effect, Layer, Option, Stream } from "effect"
import type { StrategyName } from "../domain/ConversationSettings.js"
import { withUserMessage } from "../layers/ai/ContextPrompt.js"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import { CliError } from "./Errors.js"
import * as Report from "./Report.js"
import * as Settings from "./Settings.js"
import { Stdio } from "./Stdio.js"

/** The prompt, shown when a person types, not when the input is piped. */
const prompt = Effect.flatMap(Stdio, (stdio) => (stdio.stdinIsTerminal ? stdio.writeOut("you> ") : Effect.void))

/** The user's lines from stdin (a terminal or a pipe), until `exit` or the end of input. */
const userLines = Stream.unwrap(Effect.map(Stdio, (stdio) =>
  stdio.stdin.pipe(
    Stream.decodeText(),
    Stream.splitLines,
    Stream.map((line) => line.trim()),
    Stream.takeWhile((line) => line !== "exit" && line !== "/exit"),
    Stream.filter((line) => line.length > 0)
  )))

/** The conversation of `chat`, and its user, if any. */
interface Where {
  readonly conversationId: string
  readonly userId: string | undefined
}

const exchange = ({ conversationId, userId }: Where, line: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    // The new message is the query. Older turns that match it are recalled into the context.
    const context = yield* memory.getContext(conversationId, { query: line, userId })
    const response = yield* LanguageModel.generateText({ prompt: withUserMessage(context, line) })
    yield* memory.addMessages(conversationId, [
      { role: "user", content: line },
      { role: "assistant", content: response.text }
    ], { userId })
    yield* Console.log(`assistant> ${response.text}`)
    yield* Console.error(`  [memory: ${Report.contextLine(context)}]`)
  })

const converse = (where: Where, system: string, banner: string, strategy: StrategyName) =>
  Effect.gen(function*() {
    const { conversationId, userId } = where
    const memory = yield* ChatMemoryService
    const known = yield* Effect.option(
      memory.stats(conversationId).pipe(Effect.catchTag("ConversationNotFoundError", () => Effect.fail(undefined)))
    )
    if (Option.isNone(known)) {
      // Recorded, so `context` and `inspect` read the conversation with the strategy that wrote it.
      yield* memory.setSettings(
        conversationId,
        yield* Settings.withStrategy(yield* memory.getSettings(conversationId), strategy)
      )
      yield* memory.addMessages(conversationId, [{ role: "system", content: system }], { userId })
    }
    yield* Console.error(banner)
    yield* prompt
    yield* userLines.pipe(
      Stream.runForEach((line) =>
        exchange(where, line).pipe(
          // A failed model call ends nothing. The user may try again.
          Effect.catchIf(AiError.isAiError, (error) => Console.error(`(the model call failed: ${error.message})`)),
          Effect.zipRight(prompt)
        )
      )
    )
    yield* Console.error("waiting for background summarization…")
    yield* memory.awaitIdle(conversationId)
    const stats = yield* memory.stats(conversationId)
    yield* Console.error(
      `${stats.messagesStored} messages stored, ${stats.summarizations} summarizations, ` +
        `context ${stats.contextTokens} tokens, compression ${Report.ratio(stats.compressionRatio)}`
    )
  })

/** What `chat` was asked. */
export interface Input {
  readonly conversationId: string
  readonly model: Option.Option<string>
  readonly system: string
  readonly user: Option.Option<string>
  readonly flags: Settings.Flags
}

/** `chat`: a conversation with the configured model over stdin and stdout, memory on. */
export const chat = ({ conversationId, flags, model, system, user }: Input) =>
  Effect.gen(function*() {
    const options = yield* Settings.resolve(flags)
    const summarizer = options.summarizer
    if (summarizer?._tag !== "openai") {
      return yield* new CliError({
        reason: `chat needs a model: set ${Settings.variables.openAiApiKey.name}, or ` +
          `${Settings.variables.openAiBaseUrl.name} for an OpenAI-compatible server (e.g. http://localhost:11434/v1)`
      })
    }
    const chatModel = Option.isSome(model)
      ? model.value
      : yield* Settings.withFlags(flags)(Config.string("AGENT_MODEL").pipe(Config.withDefault("gpt-4o-mini")))
    const languageModel = OpenAiLanguageModel.layer({ model: chatModel }).pipe(
      Layer.provide(OpenAiClient.layer({ apiKey: summarizer.apiKey, apiUrl: summarizer.apiUrl })),
      Layer.provide(NodeHttpClient.layerUndici)
    )
    const userId = Option.getOrUndefined(user)
    const of = userId === undefined ? "" : ` of user "${userId}"`
    const banner = `chat "${conversationId}"${of} with ${chatModel}; memory: ${Settings.describeLine(options)}\n` +
      "Type a message; exit or Ctrl-D to stop."
    yield* converse({ conversationId, userId }, system, banner, Settings.describe(options).strategy).pipe(
      Effect.provide(Layer.merge(ChatMemoryLive.layer(options), languageModel))
    )
  })
