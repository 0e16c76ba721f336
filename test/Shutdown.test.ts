/**
 * Closing the memory with summaries in flight: by default they are interrupted at once, and the
 * close says so in one Info line (how many, and that they resume on the next write, which they do);
 * with `shutdownDrain` the close waits for them up to that long first. On the test clock. An
 * extraction of user facts cut short resumes on the user's next write, from any conversation.
 */
import { assert, describe, it } from "@effect/vitest"
import { type Duration, Effect, Exit, Fiber, Layer, LogLevel, Option, Queue, Schema, Scope, TestClock } from "effect"
import { ConversationId } from "../src/domain/ConversationId.js"
import * as UserId from "../src/domain/UserId.js"
import type { SkillExecutionError } from "../src/errors/SkillExecutionError.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import type * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { atInfoOrAbove, recording } from "./fixtures/logs.js"

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(60, ".") },
  { role: "assistant" as const, content: `Answer ${i}: shipped to Lyon.`.padEnd(200, ".") }
]

/** A summarization is due after a few turns, and one fold covers what is due. */
const knobs = { kRawTurns: 2, tokenBudget: 1000, chunkSummarizeThreshold: 400, summaryTokenCap: 60, retries: 0 }

/**
 * The test memory over `store`, built in a scope the test closes; each summarize call says it
 * started on `started`, then runs `answer`.
 */
const openMemory = (
  store: Store.Store,
  started: Queue.Queue<string>,
  answer: Effect.Effect<string, SkillExecutionError>,
  shutdownDrain?: Duration.DurationInput
) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    const layer = ChatMemoryTest.layer({
      ...knobs,
      ...(shutdownDrain === undefined ? {} : { shutdownDrain }),
      store: Store.layerFrom(store),
      script: { summarize: (input) => Effect.zipRight(Queue.offer(started, input.conversationId), answer) }
    })
    const context = yield* Layer.buildWithScope(layer, scope)
    const memory = yield* Effect.provide(ChatMemoryService, context)
    return { memory, scope }
  })

/** Adds turns to `conversationId` until its summarization starts. */
const untilSummarizing = (
  memory: ChatMemoryService.Service,
  started: Queue.Queue<string>,
  conversationId: string
) =>
  Effect.gen(function*() {
    for (let i = 1; i <= 8; i++) yield* memory.addMessages(conversationId, turn(i))
    assert.strictEqual(yield* Queue.take(started), conversationId)
  })

describe("closing the memory", () => {
  it.effect("interrupts the summaries in flight at once, says how many at Info; they resume on the next write", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.make
        const started = yield* Queue.unbounded<string>()
        const { memory, scope } = yield* openMemory(store, started, Effect.never)
        yield* untilSummarizing(memory, started, "a")
        yield* untilSummarizing(memory, started, "b")
        yield* Scope.close(scope, Exit.void)
        assert.deepStrictEqual(atInfoOrAbove(entries), [{
          level: LogLevel.Info,
          message: "closing the memory interrupted 2 background summarizations; they resume on each " +
            "conversation's next write"
        }])
        // The next process over the same store: the conversation's next write resumes its summary.
        const after = yield* openMemory(store, started, Effect.succeed("Orders ORD-1001 to ORD-1006 ship to Lyon."))
        assert.strictEqual((yield* store.summaries.getSummaryState(ConversationId.make("a"))).narrative, "")
        yield* after.memory.addMessages("a", turn(9))
        yield* after.memory.awaitIdle("a")
        const state = yield* store.summaries.getSummaryState(ConversationId.make("a"))
        assert.strictEqual(state.narrative, "Orders ORD-1001 to ORD-1006 ship to Lyon.")
        yield* Scope.close(after.scope, Exit.void)
        assert.strictEqual(atInfoOrAbove(entries).length, 1)
      })
    ))

  it.effect("with nothing in flight, logs nothing at Info", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const started = yield* Queue.unbounded<string>()
        const { memory, scope } = yield* openMemory(yield* MemoryStore.make, started, Effect.succeed("summary"))
        yield* untilSummarizing(memory, started, "a")
        yield* memory.awaitIdle()
        yield* Scope.close(scope, Exit.void)
        assert.deepStrictEqual(atInfoOrAbove(entries), [])
      })
    ))

  it.effect("a job still looking for work due (its read of the window in flight) is interrupted unsaid", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.make
        const reads = yield* Queue.unbounded<string>()
        // The summarizer's read of the window never answers: its job is still looking.
        const hanging: Store.Store = {
          ...store,
          repository: {
            ...store.repository,
            readWindow: (conversationId) => Effect.zipRight(Queue.offer(reads, conversationId), Effect.never)
          }
        }
        const started = yield* Queue.unbounded<string>()
        const { memory, scope } = yield* openMemory(hanging, started, Effect.succeed("summary"))
        yield* memory.addMessages("a", turn(1))
        assert.strictEqual(yield* Queue.take(reads), "a")
        yield* Scope.close(scope, Exit.void)
        assert.deepStrictEqual(atInfoOrAbove(entries), [])
        assert.isTrue(yield* Queue.isEmpty(started), "no summary was started")
      })
    ))

  it.effect("an extraction of user facts interrupted resumes in the next process on the user's next write, anywhere", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.make
        const extracting = yield* Queue.unbounded<string>()
        const open = (extractFacts: NonNullable<ScriptedSkill.ScriptedSkill.Script["extractFacts"]>) =>
          Effect.gen(function*() {
            const scope = yield* Scope.make()
            const layer = ChatMemoryTest.layer({ ...knobs, store: Store.layerFrom(store), script: { extractFacts } })
            const memory = yield* Effect.provide(ChatMemoryService, yield* Layer.buildWithScope(layer, scope))
            return { memory, scope }
          })
        const first = yield* open((input) =>
          Effect.zipRight(Queue.offer(extracting, input.conversationId), Effect.never)
        )
        yield* first.memory.addMessages("monday", turn(1), { userId: "ana" })
        assert.strictEqual(yield* Queue.take(extracting), "monday")
        yield* Scope.close(first.scope, Exit.void)
        assert.deepStrictEqual(atInfoOrAbove(entries), [{
          level: LogLevel.Info,
          message: "closing the memory interrupted 1 extraction of user facts; it resumes on its user's next write"
        }])
        // The next process: Monday is not written again, the user's first write on Tuesday has its
        // turns read.
        const second = yield* open((input) =>
          Effect.zipRight(
            Queue.offer(extracting, input.conversationId),
            Effect.succeed({
              facts: input.conversationId === "monday"
                ? [{ key: "order", value: "ORD-1001", category: "ENTITY" as const }]
                : [],
              narrative: ""
            })
          )
        )
        yield* second.memory.addMessages("tuesday", turn(2), { userId: "ana" })
        yield* second.memory.awaitIdle()
        const facts = yield* store.users.getFacts(Schema.decodeSync(UserId.UserId)("ana"))
        assert.deepStrictEqual(facts.map((fact) => [fact.value, fact.source?.conversationId]), [["ORD-1001", "monday"]])
        yield* Scope.close(second.scope, Exit.void)
      })
    ))

  it.effect("shutdownDrain: waits for a summary in flight that ends within it, which is applied", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.make
        const started = yield* Queue.unbounded<string>()
        const answer = Effect.as(Effect.sleep("5 seconds"), "Orders ORD-1001 to ORD-1006 ship to Lyon.")
        const { memory, scope } = yield* openMemory(store, started, answer, "10 seconds")
        yield* untilSummarizing(memory, started, "a")
        const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
        yield* TestClock.adjust("4 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(closing)), "the close waits for the summary")
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(closing)
        const state = yield* store.summaries.getSummaryState(ConversationId.make("a"))
        assert.strictEqual(state.narrative, "Orders ORD-1001 to ORD-1006 ship to Lyon.")
        assert.deepStrictEqual(atInfoOrAbove(entries), [])
      })
    ))

  it.effect("shutdownDrain: a summary longer than it is interrupted when it ends, and said so", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.make
        const started = yield* Queue.unbounded<string>()
        const answer = Effect.as(Effect.sleep("1 minute"), "too late")
        const { memory, scope } = yield* openMemory(store, started, answer, "10 seconds")
        yield* untilSummarizing(memory, started, "a")
        const closing = yield* Effect.fork(Scope.close(scope, Exit.void))
        yield* TestClock.adjust("9 seconds")
        assert.isTrue(Option.isNone(yield* Fiber.poll(closing)), "the close waits for the drain")
        assert.deepStrictEqual(atInfoOrAbove(entries), [])
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(closing)
        assert.deepStrictEqual(atInfoOrAbove(entries), [{
          level: LogLevel.Info,
          message: "closing the memory interrupted 1 background summarization; it resumes on the conversation's " +
            "next write"
        }])
        assert.strictEqual((yield* store.summaries.getSummaryState(ConversationId.make("a"))).narrative, "")
      })
    ))

  it.effect("shutdownDrain below zero fails the construction, naming it", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(Layer.build(ChatMemoryTest.layer({ shutdownDrain: -1 })))
      assert.strictEqual(
        error.message,
        "SummarizationStrategy.make: invalid options.shutdownDrain: must be a duration of zero or more"
      )
    }).pipe(Effect.scoped))
})

describe("a look over a user's conversations for turns left unread", () => {
  it.effect("a look at a user's conversations cut short by a clear does not end another job that waits on it", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.make
        const looks = yield* Queue.unbounded<string>()
        let first = true
        // The first look for conversations with turns unread never answers.
        const hanging: Store.Store = {
          ...store,
          users: {
            ...store.users,
            listConversations: (userId, query) => {
              if (query.factsPending !== true || !first) return store.users.listConversations(userId, query)
              first = false
              return Effect.zipRight(Queue.offer(looks, userId), Effect.never)
            }
          }
        }
        const extracted = yield* Queue.unbounded<string>()
        const layer = ChatMemoryTest.layer({
          ...knobs,
          store: Store.layerFrom(hanging),
          script: {
            extractFacts: (input) =>
              Effect.as(Queue.offer(extracted, input.conversationId), { facts: [], narrative: "" })
          }
        })
        const scope = yield* Scope.make()
        const memory = yield* Effect.provide(ChatMemoryService, yield* Layer.buildWithScope(layer, scope))
        yield* memory.addMessages("a", turn(1), { userId: "ana" })
        assert.strictEqual(yield* Queue.take(looks), "ana")
        // B's job waits on A's look; clearing A interrupts A's job, and its look with it.
        yield* memory.addMessages("b", turn(2), { userId: "ana" })
        for (let i = 0; i < 10; i++) yield* Effect.yieldNow()
        yield* memory.clearMessages("a")
        yield* memory.awaitIdle()
        assert.deepStrictEqual([...yield* Queue.takeAll(extracted)], ["b"])
        assert.deepStrictEqual(entries.filter((entry) => entry.message.includes("interrupted from within")), [])
        yield* Scope.close(scope, Exit.void)
      })
    ))
})
