/**
 * Faults on cue in the test memory: an app tests its own handling of a failing store, summarizer or
 * embedding model with `ChatMemory.TestFaults`, no double written by hand.
 */
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import { assert, describe, it } from "@effect/vitest"
import { type Context, Effect, Layer, Metric, TestClock } from "effect"
import { expectTypeOf } from "vitest"
import { recalledText } from "../src/domain/internal/recall.js"
import type { MemoryEvent } from "../src/domain/MemoryEvent.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as Metrics from "../src/strategies/internal/metrics.js"
import { conceptVectors } from "./fixtures/conceptVectors.js"

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

/** Where a failure came from: its tag and, for the store's, the operation. */
const failed = (error: { readonly _tag: string }) =>
  "operation" in error && typeof error.operation === "string" ? `${error._tag} ${error.operation}` : error._tag

/** An app's embedding model: words that mean the same thing share a dimension. */
const { vectorOf } = conceptVectors([["car", "automobile", "vehicle"], ["broke", "stalled", "breakdown"]])
const Embeddings = Layer.effect(
  EmbeddingModel.EmbeddingModel,
  EmbeddingModel.make({
    embedMany: (texts) => Effect.succeed(texts.map((text, index) => ({ index, embeddings: vectorOf(text) })))
  })
)

/** The events of `tag` in what `events` received so far. */
const received = <Tag extends MemoryEvent["_tag"]>(events: ReadonlyArray<MemoryEvent>, tag: Tag) =>
  events.filter((event): event is Extract<MemoryEvent, { readonly _tag: Tag }> => event._tag === tag)

/** The test memory with a fold due every few turns, and no retry of a failed one. */
const Folding = ChatMemory.layerTest({ kRawTurns: 2, tokenBudget: 1000, chunkSummarizeThreshold: 400, retries: 0 })

/**
 * Twelve exchanges on `conversationId` under the fault set: every message is kept, nothing is
 * summarized. Returns the error of the first `SummarizationFailed` event.
 */
const foldFailure = (conversationId: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemory.ChatMemoryService
    const events = yield* memory.subscribe
    for (let i = 0; i < 12; i++) yield* memory.addMessages(conversationId, turn(i))
    yield* memory.awaitIdle(conversationId)
    const [first] = received([...yield* events.takeAll], "SummarizationFailed")
    assert.lengthOf(yield* memory.getMessages(conversationId), 24)
    assert.strictEqual((yield* memory.stats(conversationId)).summarizedUpTo, 0)
    return first?.error
  })

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

  it("failStore names the store's operations: a misspelt one does not compile (checked by the typecheck)", () => {
    type Operation = NonNullable<
      NonNullable<Parameters<Context.Tag.Service<typeof ChatMemory.TestFaults>["failStore"]>[0]>["operations"]
    >[number]
    expectTypeOf<"readWindow" | "getFacts" | "commitSummary" | "withLease">().toMatchTypeOf<Operation>()
    expectTypeOf<"readwindow">().not.toMatchTypeOf<Operation>()
    expectTypeOf<string>().not.toMatchTypeOf<Operation>()
  })

  it.effect("a failing summarizer: the messages are kept, the failure is an event with the skill's error", () =>
    Effect.gen(function*() {
      yield* (yield* ChatMemory.TestFaults).failSummarizer
      assert.strictEqual(yield* foldFailure("c3"), "SkillExecutionError")
    }).pipe(Effect.scoped, Effect.provide(Folding)))

  it.effect("a failing summarizer: what is known about a user waits, counted, and is learned after heal", () =>
    Effect.gen(function*() {
      const faults = yield* ChatMemory.TestFaults
      const memory = yield* ChatMemory.ChatMemoryService
      const users = yield* ChatMemory.UserMemoryService
      const failures = Effect.map(Metric.value(Metrics.userFactsFailures), (state) => state.count)
      const before = yield* failures
      yield* faults.failSummarizer
      yield* memory.addMessages("u5-chat", turn(1), { userId: "u5" })
      yield* memory.awaitIdle()
      assert.strictEqual((yield* failures) - before, 1)
      assert.isEmpty(yield* users.getFacts("u5"))
      // The turns stayed pending: the next write reads them with its own.
      yield* faults.heal
      yield* memory.addMessages("u5-chat", turn(2), { userId: "u5" })
      yield* memory.awaitIdle()
      const read = yield* ScriptedSkill.ScriptedSkill
      const extractions = (yield* read.calls).filter((call) => call.skill === "extractFacts")
      assert.include(JSON.stringify(extractions.at(-1)?.input.turns), "ORD-1001")
    }).pipe(Effect.provide(ChatMemory.layerTest())))

  it.effect("turns a failure left unread are learned on the user's next write, in any of the user's conversations", () =>
    Effect.gen(function*() {
      const faults = yield* ChatMemory.TestFaults
      const memory = yield* ChatMemory.ChatMemoryService
      yield* faults.failSummarizer
      yield* memory.addMessages("u6-monday", turn(1), { userId: "u6" })
      yield* memory.awaitIdle()
      yield* faults.heal
      // Monday is not written again. A user's conversations are looked over at most every 10
      // minutes: the user's first write after that, on Tuesday, has Monday's turns read too.
      yield* memory.addMessages("u6-tuesday", turn(2), { userId: "u6" })
      yield* memory.awaitIdle()
      const calls = (yield* (yield* ScriptedSkill.ScriptedSkill).calls).length
      yield* TestClock.adjust("11 minutes")
      yield* memory.addMessages("u6-tuesday", turn(3), { userId: "u6" })
      yield* memory.awaitIdle()
      const read = yield* ScriptedSkill.ScriptedSkill
      const later = (yield* read.calls).slice(calls)
      const monday = later.flatMap((call) =>
        call.skill === "extractFacts" && call.input.conversationId === "u6-monday" ? [call.input] : []
      )
      assert.lengthOf(monday, 1)
      assert.include(JSON.stringify(monday[0]?.turns), "ORD-1001")
      assert.strictEqual((yield* memory.stats("u6-monday")).messagesStored, 2)
    }).pipe(Effect.provide(ChatMemory.layerTest())))

  it.effect("failStore fails every port of the store: settings, the user's facts, the summary's commit", () =>
    Effect.gen(function*() {
      const faults = yield* ChatMemory.TestFaults
      const memory = yield* ChatMemory.ChatMemoryService
      const users = yield* ChatMemory.UserMemoryService
      yield* faults.failStore()
      assert.deepStrictEqual(
        [
          failed(yield* Effect.flip(memory.getSettings("c4"))),
          failed(yield* Effect.flip(memory.setSettings("c4", { tokenBudget: 900 }))),
          failed(yield* Effect.flip(users.getFacts("u4"))),
          failed(yield* Effect.flip(memory.searchMemory("c4", "order")))
        ],
        [
          "RepositoryError getSettings",
          "RepositoryError updateSettings",
          "RepositoryError getFacts",
          "RepositoryError searchMessages"
        ]
      )
      // Only the summary's commit: the messages are stored, the summarization fails on the store.
      yield* faults.failStore({ operations: ["commitSummary"] })
      assert.strictEqual(yield* foldFailure("c4"), "RepositoryError")
    }).pipe(Effect.scoped, Effect.provide(Folding)))

  it.effect("a failing embedding model: writes succeed, recall is by words, EmbeddingFailed says so; heal embeds", () =>
    Effect.gen(function*() {
      const faults = yield* ChatMemory.TestFaults
      const memory = yield* ChatMemory.ChatMemoryService
      const events = yield* memory.subscribe
      yield* faults.failEmbeddings
      yield* memory.addMessages("c5", [
        { role: "user", content: "My automobile stalled near junction 14." },
        { role: "assistant", content: "Sorry to hear that; a tow truck is on its way." }
      ])
      yield* memory.awaitIdle("c5")
      // No word of the question is in the answer's turn: found by meaning only.
      const byMeaning = "Where did the car break?"
      assert.notInclude(recalledText(yield* memory.searchMemory("c5", byMeaning)), "junction 14")
      assert.include(recalledText(yield* memory.searchMemory("c5", "junction")), "junction 14")
      const failures = received([...yield* events.takeAll], "EmbeddingFailed")
      assert.deepStrictEqual(
        failures.map((event) => [event.stage, event.reason, event.detail]),
        [
          ["index", "failed", "UnknownError: ChatMemoryTest.embedMany: a fault set by the test"],
          ["query", "failed", "UnknownError: ChatMemoryTest.embed: a fault set by the test"]
        ]
      )
      // Healed, and past the model's rest after a failure (the batch timeout, 30 seconds by
      // default), the next write embeds what is pending, and the question finds its answer.
      yield* faults.heal
      yield* TestClock.adjust("30 seconds")
      yield* memory.addMessages("c5", [{ role: "user", content: "Thanks." }])
      yield* memory.awaitIdle("c5")
      assert.include(recalledText((yield* memory.searchMemory("c5", byMeaning)).slice(0, 1)), "junction 14")
    }).pipe(
      Effect.scoped,
      Effect.provide(ChatMemory.layerTest({ recall: "hybrid", embeddings: Embeddings }))
    ))
})
