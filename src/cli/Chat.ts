/**
 * `chat`: an interactive conversation with the configured model (OpenAI, or any compatible server by
 * base URL), memory on: each answer is generated over the memory's context, and the exchange is
 * stored, summarized in the background like any conversation.
 */
import { AiError, LanguageModel } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { Args, Command, Options } from "@effect/cli"
import { NodeHttpClient } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option, Stream } from "effect"
import { createInterface } from "node:readline"
import { withUserMessage } from "../domain/MemoryContext.js"
import type * as ChatMemoryConfig from "../layers/ChatMemoryConfig.js"
import * as ChatMemoryLive from "../layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../services/ChatMemoryService.js"
import { CliError } from "./Errors.js"
import * as Report from "./Report.js"
import * as Settings from "./Settings.js"

const defaultSystem =
  "You are a helpful, concise assistant. Use the known facts and the summary of the earlier conversation when they apply."

const prompt = Effect.sync(() => {
  if (process.stdin.isTTY) process.stdout.write("you> ")
})

/** The user's lines from stdin (a terminal or a pipe), until `exit` or the end of input. */
const userLines = Stream.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => createInterface({ input: process.stdin })),
      (lines) => Effect.sync(() => lines.close())
    ),
    (lines) =>
      Stream.fromAsyncIterable(lines, (cause) => new CliError({ reason: `reading stdin failed: ${String(cause)}` }))
        .pipe(
          Stream.map((line) => line.trim()),
          Stream.takeWhile((line) => line !== "exit" && line !== "/exit"),
          Stream.filter((line) => line.length > 0)
        )
  )
)

const exchange = (conversationId: string, line: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    // The new message is the query: older turns that match it are recalled into the context.
    const context = yield* memory.getContext(conversationId, { query: line })
    const response = yield* LanguageModel.generateText({ prompt: withUserMessage(context, line) })
    yield* memory.addMessages(conversationId, [
      { role: "user", content: line },
      { role: "assistant", content: response.text }
    ])
    yield* Console.log(`assistant> ${response.text}`)
    yield* Console.error(`  [memory: ${Report.contextLine(context)}]`)
  })

const converse = (conversationId: string, system: string, banner: string, strategy: ChatMemoryConfig.Strategy) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const known = yield* Effect.option(
      memory.stats(conversationId).pipe(Effect.catchTag("ConversationNotFoundError", () => Effect.fail(undefined)))
    )
    if (Option.isNone(known)) {
      // Recorded with the conversation: `context` and `inspect` read it with the strategy that wrote it.
      yield* memory.setSettings(conversationId, { ...(yield* memory.getSettings(conversationId)), strategy })
      yield* memory.addMessages(conversationId, [{ role: "system", content: system }])
    }
    yield* Console.error(banner)
    yield* prompt
    yield* userLines.pipe(
      Stream.runForEach((line) =>
        exchange(conversationId, line).pipe(
          // A failed model call ends nothing: the user may try again.
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

/** The `chat` command. */
export const command = Command.make(
  "chat",
  {
    conversationId: Args.text({ name: "conversationId" }).pipe(
      Args.withDescription("the conversation to continue, or to start"),
      Args.withDefault("chat")
    ),
    model: Options.text("model").pipe(
      Options.withDescription("the chat model (default: AGENT_MODEL, else gpt-4o-mini)"),
      Options.optional
    ),
    system: Options.text("system").pipe(
      Options.withDescription("the system prompt of a new conversation"),
      Options.withDefault(defaultSystem)
    ),
    ...Settings.flags
  },
  ({ conversationId, model, system, ...flags }) =>
    Effect.gen(function*() {
      const options = yield* Settings.resolve(flags)
      const summarizer = options.summarizer
      if (summarizer?._tag !== "openai") {
        return yield* new CliError({
          reason: "chat needs a model: set OPENAI_API_KEY, or OPENAI_BASE_URL for an OpenAI-compatible server " +
            "(e.g. http://localhost:11434/v1)"
        })
      }
      const chatModel = Option.isSome(model)
        ? model.value
        : yield* Settings.withFlags(flags)(Config.string("AGENT_MODEL").pipe(Config.withDefault("gpt-4o-mini")))
      const languageModel = OpenAiLanguageModel.layer({ model: chatModel }).pipe(
        Layer.provide(OpenAiClient.layer({ apiKey: summarizer.apiKey, apiUrl: summarizer.apiUrl })),
        Layer.provide(NodeHttpClient.layerUndici)
      )
      const banner = `chat "${conversationId}" with ${chatModel}; memory: ${Settings.describeLine(options)}\n` +
        "Type a message; exit or Ctrl-D to stop."
      yield* converse(conversationId, system, banner, Settings.describe(options).strategy).pipe(
        Effect.provide(Layer.merge(ChatMemoryLive.layer(options), languageModel))
      )
    })
).pipe(Command.withDescription("talk with the configured model, memory on (needs OPENAI_API_KEY or OPENAI_BASE_URL)"))
