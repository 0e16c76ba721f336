/**
 * An agent loop with memory and recall: each user line is one `ChatTurn.generateText`, answered
 * over the memory's context for that line (facts, summary, recent turns, older turns that match
 * it), with the recall tools (`search_memory`, `read_turns`) to look further back; the exchange is
 * then stored.
 *
 * Run: `OPENAI_API_KEY=sk-… npx tsx examples/agent.ts` (or `OPENAI_BASE_URL=…/v1` for a compatible
 * server). The memory is configured from the environment as the CLI's is (`MEMORY_DATA_DIR` keeps
 * it between runs); `AGENT_MODEL` picks the model. Type `exit` or press Ctrl-D to stop.
 */
import { AiError } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option, Stream } from "effect"
import { createInterface } from "node:readline"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ChatTurn from "../src/layers/ChatTurn.js"
import * as RecallToolkit from "../src/layers/RecallToolkit.js"

const conversationId = "example-agent"

/** One exchange: the model answers over the context for `line`, calling the recall tools as it needs. */
const exchange = (line: string) =>
  Effect.gen(function*() {
    const { context, text } = yield* ChatTurn.generateText(conversationId, {
      prompt: line,
      toolkit: RecallToolkit.toolkit,
      // Their results only repeat what the memory already holds.
      unstoredTools: ["search_memory", "read_turns"]
    })
    const recalled = context.recalled.length
    yield* Console.log(`\nassistant> ${text}\n  [memory: ${context.tokenCount} tokens, ${recalled} turns recalled]`)
  })

/** The user's lines from stdin (a terminal or a pipe), until `exit` or the end of input. */
const userLines = Stream.unwrapScoped(Effect.map(
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
))

const system = "You are a concise, helpful assistant. When the user refers to something said earlier that is not in " +
  "view, look for it with search_memory (and read_turns) before answering."

const loop = Effect.gen(function*() {
  const memory = yield* ChatMemory.ChatMemoryService
  yield* memory.stats(conversationId).pipe(
    Effect.catchTag(
      "ConversationNotFoundError",
      () => memory.addMessages(conversationId, [{ role: "system", content: system }])
    )
  )
  yield* Console.log("Type a message (exit or Ctrl-D to stop).")
  yield* userLines.pipe(
    Stream.runForEach((line) =>
      // A failed model call ends nothing: the user may try again.
      exchange(line).pipe(
        Effect.catchIf(AiError.isAiError, (e) => Console.error(`(the model call failed: ${e.message})`))
      )
    ),
    Effect.orDie
  )
  yield* memory.awaitIdle(conversationId)
})

const main = Effect.gen(function*() {
  const apiKey = Option.getOrUndefined(yield* Config.option(Config.redacted("OPENAI_API_KEY")))
  const apiUrl = Option.getOrUndefined(yield* Config.option(Config.string("OPENAI_BASE_URL")))
  if (apiKey === undefined && apiUrl === undefined) {
    return yield* Console.log(
      "Set OPENAI_API_KEY (or OPENAI_BASE_URL for an OpenAI-compatible server such as Ollama) to run this example:\n" +
        "  OPENAI_API_KEY=sk-... npx tsx examples/agent.ts"
    )
  }
  // The agent's own model; the memory's summarizer is configured apart (`MEMORY_SUMMARIZER_MODEL`).
  const model = yield* Config.string("AGENT_MODEL").pipe(Config.withDefault("gpt-4o-mini"))
  const AgentModelLive = OpenAiLanguageModel.layer({ model }).pipe(
    Layer.provide(OpenAiClient.layer({ apiKey, apiUrl })),
    Layer.provide(NodeHttpClient.layerUndici)
  )
  yield* loop.pipe(
    // The tools act on this conversation only; their handlers are built once, over the same memory.
    Effect.provide(RecallToolkit.layer(conversationId)),
    Effect.provide(Layer.merge(ChatMemory.layerConfig, AgentModelLive))
  )
})

NodeRuntime.runMain(main)
