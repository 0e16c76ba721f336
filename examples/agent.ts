/**
 * A small agent loop with memory: each user line is answered by the agent's model over the
 * memory's context (facts, narrative, recent turns), and the exchange is stored; a cheap
 * summarizer model folds older turns in the background.
 *
 * Run: `OPENAI_API_KEY=sk-… npx tsx examples/agent.ts` (or `OPENAI_BASE_URL=http://localhost:11434/v1`
 * for a compatible local server). `AGENT_MODEL` picks the agent's model, `MEMORY_SUMMARIZER_MODEL`
 * the summarizer's. Type `exit` or press Ctrl-D to stop.
 */
import { AiError, LanguageModel } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option, Stream } from "effect"
import { createInterface } from "node:readline"
import { withUserMessage } from "../src/domain/MemoryContext.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ChatMemoryConfig from "../src/layers/ChatMemoryConfig.js"
import * as OpenAiSkill from "../src/layers/skills/OpenAiSkill.js"
import * as MemoryRepository from "../src/layers/store/MemoryRepository.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"

const conversationId = "example-agent"

/** The memory: hierarchical strategy, OpenAI summarizer from the environment, in-memory store. */
const MemoryLive = ChatMemory.layer.pipe(
  Layer.provideMerge(
    HierarchicalStrategy.layer({ kRawTurns: 3, promptTokenBudget: 3000, chunkSummarizeThreshold: 2000 })
  ),
  Layer.provideMerge(OpenAiSkill.layerConfig(ChatMemoryConfig.openAi)),
  Layer.provideMerge(MemoryRepository.layer),
  Layer.provideMerge(ApproximateTokenCounter.layer)
)

/** The agent's own model, separate from the summarizer. */
const AgentModelLive = Layer.unwrapEffect(
  Effect.map(
    Config.string("AGENT_MODEL").pipe(Config.withDefault("gpt-4o-mini")),
    (model) => OpenAiLanguageModel.layer({ model })
  )
).pipe(
  Layer.provide(OpenAiClient.layerConfig({
    apiKey: Config.option(Config.redacted("OPENAI_API_KEY")).pipe(Config.map(Option.getOrUndefined)),
    apiUrl: Config.option(Config.string("OPENAI_BASE_URL")).pipe(Config.map(Option.getOrUndefined))
  })),
  Layer.provide(NodeHttpClient.layerUndici)
)

/** One exchange: context + user line → answer; both stored afterwards. */
const exchange = (line: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    const context = yield* memory.getContext(conversationId)
    const response = yield* LanguageModel.generateText({ prompt: withUserMessage(context, line) })
    yield* memory.addMessages(conversationId, [
      { role: "user", content: line },
      { role: "assistant", content: response.text }
    ])
    yield* Console.log(`\nassistant> ${response.text}`)
    yield* Console.log(
      `  [memory: ${context.tokenCount}/${context.tokenBudget ?? "∞"} tokens, ${context.facts.length} facts, ` +
        `${context.turnsShown} turns shown, summary up to seq ${context.summarizedUpTo}]`
    )
  })

/** The user's lines from stdin (a terminal or a pipe), until `exit` or the end of input. */
const userLines = Stream.unwrapScoped(
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => createInterface({ input: process.stdin })),
      (lines) => Effect.sync(() => lines.close())
    ),
    (lines) =>
      Stream.fromAsyncIterable(lines, (cause) => cause).pipe(
        Stream.map((line) => line.trim()),
        Stream.takeWhile((line) => line !== "exit"),
        Stream.filter((line) => line.length > 0)
      )
  )
)

const loop = Effect.gen(function*() {
  const memory = yield* ChatMemoryService
  yield* memory.addMessages(conversationId, [
    { role: "system", content: "You are a concise, helpful assistant. Use the known facts when they apply." }
  ])
  yield* Console.log("Type a message (exit or Ctrl-D to stop).")
  yield* userLines.pipe(
    Stream.runForEach((line) =>
      Console.log(`\nyou> ${line}`).pipe(
        Effect.zipRight(exchange(line)),
        // A failed model call ends nothing: the user may try again.
        Effect.catchIf(AiError.isAiError, (error) => Console.error(`(the model call failed: ${error.message})`))
      )
    ),
    Effect.orDie
  )
  yield* Console.log("waiting for background summarization…")
  yield* memory.awaitIdle()
  const stats = yield* memory.stats(conversationId)
  yield* Console.log(
    `${stats.messagesStored} messages, ${stats.summarizations} summarizations, compression ${
      stats.compressionRatio.toFixed(2)
    }x`
  )
})

const main = Effect.gen(function*() {
  const apiKey = yield* Config.option(Config.redacted("OPENAI_API_KEY"))
  const baseUrl = yield* Config.option(Config.string("OPENAI_BASE_URL"))
  if (Option.isNone(apiKey) && Option.isNone(baseUrl)) {
    return yield* Console.log(
      "Set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama) to run this example."
    )
  }
  yield* loop.pipe(Effect.provide(Layer.merge(MemoryLive, AgentModelLive)))
})

NodeRuntime.runMain(main)
