/**
 * A streamed, tool-calling agent with memory: each user line is one `ChatTurn.streamText`, answered
 * over the memory's context for that line (facts, summary, recent turns, older turns that match
 * it), with the app's own tool (`get_order`) and the recall tools (`search_memory`, `read_turns`)
 * to look further back; the answer is printed as it streams, and the exchange is stored.
 *
 * Run: `OPENAI_API_KEY=sk-… npx tsx examples/agent.ts` (or `OPENAI_BASE_URL=…/v1` for a compatible
 * server). The memory is configured from the environment (`MEMORY_STORE`, `MEMORY_DATA_DIR` to
 * keep it between runs, …); `AGENT_MODEL` picks the model. Type `exit` or press Ctrl-D to stop.
 */
import { AiError, Tool, Toolkit } from "@effect/ai"
import { OpenAiClient, OpenAiLanguageModel } from "@effect/ai-openai"
import { NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Config, Console, Effect, Layer, Option, Schema, Stream } from "effect"
import { ChatMemory, ChatTurn, RecallToolkit } from "effect-chat-memory"
import { createInterface } from "node:readline"

/** The app's own tool: an order's status, from a table standing in for the app's database. */
const GetOrder = Tool.make("get_order", {
  description: "The status of an order, by its id (e.g. ORD-7).",
  parameters: { orderId: Schema.String },
  success: Schema.Struct({ orderId: Schema.String, status: Schema.String })
})

const AppToolkit = Toolkit.make(GetOrder)

const orders: Readonly<Record<string, string>> = { "ORD-7": "shipped, arriving Thursday", "ORD-8": "being packed" }

const AppToolkitLive = AppToolkit.toLayer({
  get_order: ({ orderId }) => Effect.succeed({ orderId, status: orders[orderId] ?? "unknown order" })
})

// The app's tools and the recall tools: each turn binds the recall tools to its conversation.
const AgentToolkit = Toolkit.merge(AppToolkit, RecallToolkit.toolkit)

const conversationId = "example-agent"

const system = "You are a concise, helpful assistant. When the user refers to something said earlier that is not in " +
  "view, look for it with search_memory (and read_turns) before answering."

// Their results only repeat what the memory already holds: not stored.
const unstoredTools = ["search_memory", "read_turns"] as const

/** One exchange: the answer printed as it streams, then what the memory gave and kept. */
const exchange = (line: string) =>
  ChatTurn.streamText(conversationId, { system, prompt: line, toolkit: AgentToolkit, unstoredTools }).pipe(
    Stream.runForEach((part) =>
      part.type === "text-delta"
        ? Effect.sync(() => process.stdout.write(part.delta))
        : part.type === "turn-end"
        ? Console.log(`\n  [memory: ${part.context.tokenCount} tokens, ${part.messages.length} messages stored]`)
        : Effect.void
    )
  )

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

const loop = Effect.gen(function*() {
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
  // The summaries due are written before the memory closes.
  yield* (yield* ChatMemory.ChatMemoryService).awaitIdle(conversationId)
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
  yield* loop.pipe(Effect.provide(Layer.mergeAll(ChatMemory.layerConfig(), AgentModelLive, AppToolkitLive)))
})

NodeRuntime.runMain(main)
