/**
 * Faults on cue in the test memory: an app tests its own handling of a failing store or summarizer
 * with `ChatMemory.TestFaults`, no double written by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as ChatMemory from "../src/layers/ChatMemory.js"

/** An app's turn: stores the line, answers from the context, says sorry when the store fails. */
const appTurn = (conversationId: string, line: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemory.ChatMemoryService
    yield* memory.addMessages(conversationId, [{ role: "user", content: line }])
    const context = yield* memory.getContext(conversationId, { query: line })
    return `answered with ${context.recent.length} messages in view`
  }).pipe(Effect.catchTag("RepositoryError", (error) => Effect.succeed(`sorry, try again (${error.operation})`)))

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(80, ".") },
  { role: "assistant" as const, content: `Answer ${i}: shipped to Lyon.`.padEnd(240, ".") }
]

describe("ChatMemory.TestFaults", () => {
  it.effect("an app's handling of a failing store, in three lines of setup", () =>
    Effect.gen(function*() {
      const faults = yield* ChatMemory.TestFaults
      yield* faults.failStore()
      assert.strictEqual(yield* appTurn("c1", "hello"), "sorry, try again (appendMessages)")
      // Nothing was stored by the failed call.
      yield* faults.heal
      const memory = yield* ChatMemory.ChatMemoryService
      assert.strictEqual((yield* Effect.flip(memory.getMessages("c1")))._tag, "ConversationNotFoundError")
      assert.strictEqual(yield* appTurn("c1", "hello"), "answered with 1 messages in view")
    }).pipe(Effect.provide(ChatMemory.layerTest())))

  it.effect("a fault on some operations only: the write succeeds, the context read fails", () =>
    Effect.gen(function*() {
      yield* (yield* ChatMemory.TestFaults).failStore({ operations: ["readWindow"] })
      assert.strictEqual(yield* appTurn("c2", "hello"), "sorry, try again (readWindow)")
      const memory = yield* ChatMemory.ChatMemoryService
      assert.deepStrictEqual((yield* memory.getMessages("c2")).map((m) => m.content), ["hello"])
    }).pipe(Effect.provide(ChatMemory.layerTest())))

  it.effect("a failing summarizer: the messages are kept, the failure is an event with the skill's error", () =>
    Effect.gen(function*() {
      yield* (yield* ChatMemory.TestFaults).failSummarizer
      const memory = yield* ChatMemory.ChatMemoryService
      const events = yield* memory.subscribe
      for (let i = 0; i < 12; i++) yield* memory.addMessages("c3", turn(i))
      yield* memory.awaitIdle("c3")
      const failed = yield* Stream.fromQueue(events).pipe(
        Stream.filter((event) => event._tag === "SummarizationFailed"),
        Stream.take(1),
        Stream.runCollect
      )
      const first = [...failed][0]
      assert.strictEqual(first?._tag === "SummarizationFailed" ? first.error : undefined, "SkillExecutionError")
      assert.lengthOf(yield* memory.getMessages("c3"), 24)
      assert.strictEqual((yield* memory.stats("c3")).summarizedUpTo, 0)
    }).pipe(
      Effect.scoped,
      Effect.provide(
        ChatMemory.layerTest({ kRawTurns: 2, tokenBudget: 1000, chunkSummarizeThreshold: 400, retries: 0 })
      )
    ))
})
