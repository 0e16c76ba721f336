/**
 * Entry point of `npm start`: replays a conversation transcript through the memory turn by turn,
 * as an agent would, then prints the context the model would get next and what it cost.
 */
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Clock, Console, Effect, Layer } from "effect"
import { relative } from "node:path"
import { fileURLToPath } from "node:url"
import * as MemoryContext from "../domain/MemoryContext.js"
import * as ApproximateTokenCounter from "../layers/ApproximateTokenCounter.js"
import * as MemoryRepository from "../layers/MemoryRepository.js"
import * as ChatMemoryService from "../services/ChatMemoryService.js"
import * as SlidingWindowStrategy from "../strategies/SlidingWindowStrategy.js"
import * as Transcript from "./Transcript.js"

const defaultTranscript = fileURLToPath(new URL("../../examples/conversation.jsonl", import.meta.url))
const conversationId = "replay"

const MemoryLive = ChatMemoryService.layer.pipe(
  Layer.provideMerge(SlidingWindowStrategy.layer(SlidingWindowStrategy.defaults)),
  Layer.provideMerge(MemoryRepository.layer),
  Layer.provideMerge(ApproximateTokenCounter.layer)
)

const render = (context: MemoryContext.MemoryContext): string =>
  MemoryContext.toPromptMessages(context).map((message) => {
    const text = typeof message.content === "string"
      ? message.content
      : message.content.map((part) =>
        part.type === "text"
          ? part.text
          : part.type === "tool-call"
          ? `[tool call ${part.name} ${JSON.stringify(part.params)}]`
          : part.type === "tool-result"
          ? `[tool result ${JSON.stringify(part.result)}]`
          : `[${part.type}]`
      ).join(" ")
    return `${message.role.padEnd(9)}| ${text.replaceAll("\n", "\n         | ")}`
  }).join("\n")

const table = (rows: ReadonlyArray<readonly [string, string | number]>): string => {
  const width = Math.max(...rows.map(([label]) => label.length))
  return rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`).join("\n")
}

const replay = (path: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService.ChatMemoryService
    const messages = yield* Transcript.read(path)
    const started = yield* Clock.currentTimeMillis
    let largestContext = 0
    for (const turn of Transcript.turnsOf(messages)) {
      yield* memory.addMessages(conversationId, turn)
      yield* memory.awaitIdle(conversationId)
      const context = yield* memory.getContext(conversationId)
      largestContext = Math.max(largestContext, context.tokenCount)
    }
    const context = yield* memory.getContext(conversationId)
    const stored = yield* memory.getMessages(conversationId)
    const elapsed = (yield* Clock.currentTimeMillis) - started
    const storedTokens = stored.reduce((n, m) => n + m.tokenCount, 0)
    yield* Console.log(`Context for the next model call (${context.strategy}):\n`)
    yield* Console.log(render(context))
    yield* Console.log("\nStats:")
    yield* Console.log(table([
      ["transcript", relative(process.cwd(), path) || path],
      ["messages stored", stored.length],
      ["tokens stored", storedTokens],
      ["context tokens", `${context.tokenCount} of ${context.tokenBudget ?? "unbounded"}`],
      ["largest context at any turn", largestContext],
      ["compression ratio", `${(storedTokens / Math.max(1, context.tokenCount)).toFixed(1)}x`],
      ["turns shown", context.turnsShown],
      ["turns omitted", context.turnsOmitted],
      ["time", `${elapsed} ms`]
    ]))
  })

const main = replay(process.argv[2] ?? defaultTranscript).pipe(
  Effect.provide(Layer.merge(MemoryLive, NodeContext.layer)),
  Effect.tapError((error) => Console.error(`error: ${error.message}`))
)

NodeRuntime.runMain(main, { disableErrorReporting: true })
