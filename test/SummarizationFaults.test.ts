import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, Layer, Queue, Ref, Scope, TestClock } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { omissionText } from "../src/domain/internal/contextText.js"
import type { MemoryEvent } from "../src/domain/MemoryEvent.js"
import { SkillExecutionError } from "../src/errors/SkillExecutionError.js"
import { toPromptMessages } from "../src/layers/ai/ContextPrompt.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import type { SummarizationOptions } from "../src/strategies/internal/options.js"
import { makeJobs } from "../src/strategies/internal/summarizer/jobs.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { summarizingMemory } from "./fixtures/layers.js"

const options = {
  kRawTurns: 2,
  tokenBudget: 200,
  chunkSummarizeThreshold: 300,
  summaryTokenCap: 60,
  retries: 0
} as const

const c = ConversationId.make("c")
const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}.`.padEnd(100, ".") }
]
const unavailable = new SkillExecutionError({ skillId: "scripted", reason: "Unavailable", retryable: true })

/** The memory without its store, so that a test can keep the store across layer lifetimes. */
const memoryOver = (opts: Partial<SummarizationOptions>, script: ScriptedSkill.ScriptedSkill.Script) =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(SummarizationStrategy.layer(opts)),
    Layer.provideMerge(ScriptedSkill.layer(script)),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

const drain = (events: Queue.Dequeue<MemoryEvent>) => Effect.map(Queue.takeAll(events), (chunk) => [...chunk])

/** Takes events until one with `tag` arrives (strategy events reach subscribers asynchronously). */
const waitFor = (events: Queue.Dequeue<MemoryEvent>, tag: MemoryEvent["_tag"]) =>
  Effect.gen(function*() {
    const seen: Array<MemoryEvent> = []
    while (seen.at(-1)?._tag !== tag) seen.push(yield* Queue.take(events))
    return seen
  })

describe("SummarizationStrategy under faults", () => {
  it.scoped("a skill failing 30 % of the time loses nothing and never moves the cursor back", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const events = yield* memory.subscribe
      let cursor = 0
      let version = 0
      for (let i = 1; i <= 60; i++) {
        yield* memory.addMessages("c", turn(i))
        if (i % 3 === 0) yield* memory.awaitIdle("c")
        const context = yield* memory.getContext("c")
        assert.isAtMost(context.tokenCount, options.tokenBudget)
        const state = yield* repository.getSummaryState(c)
        assert.isAtLeast(state.cursor, cursor)
        assert.isAtLeast(state.version, version)
        cursor = state.cursor
        version = state.version
        assert.strictEqual((yield* memory.getMessages("c")).length, 2 * i)
      }
      yield* memory.awaitIdle()
      yield* waitFor(events, "SummarizationFailed")
      const tags = (yield* drain(events)).map((event) => event._tag)
      assert.include(tags, "Summarized")
      const records = yield* repository.listSummarizations(c)
      // Applied runs cover disjoint, increasing ranges: no message was folded twice.
      records.forEach((record, i) => assert.isAbove(record.fromSeq, records[i - 1]?.toSeq ?? 0))
    }).pipe(Effect.provide(summarizingMemory(options, {
      summarize: (_, n) => (n * 7919) % 10 < 3 ? Effect.fail(unavailable) : Effect.succeed(`summary ${n}`)
    }))))

  it.scoped("a skill that never answers times out, is retried with backoff, then fails with the state unchanged", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const skill = yield* ScriptedSkill.ScriptedSkill
      const events = yield* memory.subscribe
      for (let i = 1; i <= 8; i++) yield* memory.addMessages("c", turn(i))
      const idle = yield* Effect.fork(memory.awaitIdle("c"))
      yield* TestClock.adjust("1 minute")
      yield* Fiber.join(idle)
      assert.strictEqual((yield* skill.calls).length, 3)
      const failed = (yield* waitFor(events, "SummarizationFailed")).at(-1)
      assert.include(failed?._tag === "SummarizationFailed" ? failed.detail : "", "Timeout")
      const state = yield* repository.getSummaryState(c)
      assert.deepStrictEqual([state.cursor, state.version, state.narrative], [0, 0, ""])
      const context = yield* memory.getContext("c")
      assert.isNull(context.summary)
      assert.isAbove(context.turnsOmitted, 0)
      // The gap is announced to the model, inside the budget: never a silent one.
      assert.isTrue(context.omissionAnnounced)
      assert.isAtMost(context.tokenCount, 200)
      const texts = toPromptMessages(context).map((message) =>
        typeof message.content === "string"
          ? message.content
          : message.content.map((part) => (part.type === "text" ? part.text : "")).join("")
      )
      assert.include(texts, omissionText(context.turnsOmitted))
      assert.strictEqual((yield* memory.getMessages("c")).length, 16)
    }).pipe(Effect.provide(summarizingMemory(
      { ...options, retries: 2, skillTimeout: 1000, retryBaseDelay: 100 },
      { summarize: () => Effect.never }
    ))))

  it.scoped("closing the layer mid-job interrupts the job; the store keeps everything and a new layer resumes", () =>
    Effect.gen(function*() {
      const store = yield* Store.get
      const started = yield* Deferred.make<undefined>()
      const interrupted = yield* Deferred.make<undefined>()
      const scope = yield* Scope.make()
      const first = yield* Layer.buildWithScope(
        memoryOver(options, {
          summarize: () =>
            Deferred.succeed(started, undefined).pipe(
              Effect.zipRight(Effect.never),
              Effect.onInterrupt(() => Deferred.succeed(interrupted, undefined))
            )
        }),
        scope
      )
      yield* Effect.gen(function*() {
        const service = yield* ChatMemoryService
        for (let i = 1; i <= 8; i++) yield* service.addMessages("c", turn(i))
      }).pipe(Effect.provide(first))
      yield* Deferred.await(started)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* Deferred.isDone(interrupted))
      const state = yield* store.summaries.getSummaryState(c)
      assert.deepStrictEqual([state.cursor, state.version], [0, 0])
      assert.strictEqual((yield* store.repository.listMessages(c, {})).length, 16)
      // A new layer on the same store picks the conversation up at the next write.
      yield* Effect.gen(function*() {
        const service = yield* ChatMemoryService
        yield* service.addMessages("c", turn(9))
        yield* service.awaitIdle("c")
      }).pipe(Effect.provide(memoryOver(options, {})))
      assert.isAbove((yield* store.summaries.getSummaryState(c)).cursor, 0)
    }).pipe(Effect.provide(MemoryStore.layer)))

  it.scoped("two jobs for one conversation never run at once; a burst of 50 adds runs one job and one re-check", () =>
    Effect.gen(function*() {
      const gate = yield* Deferred.make<undefined>()
      const runs = yield* Ref.make(0)
      const running = yield* Ref.make(0)
      const maxRunning = yield* Ref.make(0)
      const jobs = yield* makeJobs(() =>
        Effect.gen(function*() {
          yield* Ref.update(runs, (n) => n + 1)
          const now = yield* Ref.updateAndGet(running, (n) => n + 1)
          yield* Ref.update(maxRunning, (n) => Math.max(n, now))
          yield* Deferred.await(gate)
          yield* Ref.update(running, (n) => n - 1)
        })
      )
      yield* Effect.all(Array.from({ length: 50 }, () => jobs.trigger(c)), { concurrency: "unbounded" })
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      yield* jobs.awaitIdle(c)
      // The burst is absorbed by the first run, or by it and one re-check.
      assert.oneOf(yield* Ref.get(runs), [1, 2])
      assert.strictEqual(yield* Ref.get(maxRunning), 1)
      assert.isFalse(yield* jobs.isRunning(c))
    }))

  it.scoped("concurrent adds on one conversation never run two summarizations at once", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* Effect.all(
        Array.from({ length: 50 }, (_, i) => memory.addMessages("c", turn(i + 1))),
        { concurrency: "unbounded" }
      )
      yield* memory.awaitIdle()
      const store = yield* Store.get
      assert.strictEqual((yield* store.repository.listMessages(c, {})).length, 100)
      assert.isAbove((yield* store.summaries.getSummaryState(c)).cursor, 0)
    }).pipe(Effect.provide(Layer.unwrapEffect(Effect.gen(function*() {
      const active = yield* Ref.make(0)
      return summarizingMemory(options, {
        summarize: (_, n) =>
          Effect.acquireUseRelease(
            Ref.updateAndGet(active, (k) => k + 1),
            (k) => k > 1 ? Effect.dieMessage("two summarizations at once") : Effect.as(Effect.yieldNow(), `s${n}`),
            () => Ref.update(active, (k) => k - 1)
          )
      })
    })))))

  it.scoped("lazyFallback window serves the window at once and says so; sync summarizes first", () =>
    Effect.gen(function*() {
      const all = Array.from({ length: 12 }, (_, i) => turn(i + 1)).flat()
      const window = yield* Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const events = yield* memory.subscribe
        yield* memory.addMessages("c", all)
        const context = yield* memory.getContext("c")
        const fallback = yield* waitFor(events, "FallbackUsed")
        return { context, fallback: fallback.at(-1) }
      }).pipe(Effect.provide(summarizingMemory(options, {})))
      assert.isNull(window.context.summary)
      assert.isAbove(window.context.turnsOmitted, 0)
      assert.strictEqual(window.fallback?._tag === "FallbackUsed" ? window.fallback.reason : "", "summary-behind")
      const sync = yield* Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        yield* memory.addMessages("c", all)
        return yield* memory.getContext("c")
      }).pipe(Effect.provide(summarizingMemory({ ...options, lazyFallback: "sync" }, {})))
      assert.isNotNull(sync.summary)
      assert.isAbove(sync.summarizedUpTo, 0)
      assert.isAtMost(sync.tokenCount, options.tokenBudget)
    }))

  it.scoped("awaitIdle waits for retries and re-checks: once it returns, nothing for that conversation runs or is scheduled", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const skill = yield* ScriptedSkill.ScriptedSkill
      const events = yield* memory.subscribe
      const summarizing = (event: MemoryEvent) => event._tag === "Summarized" || event._tag === "SummarizationFailed"
      for (let round = 0; round < 3; round++) {
        // Writes that arrive while a job runs (and fails, and backs off) ask for a re-check.
        for (let i = 1; i <= 6; i++) yield* memory.addMessages("c", turn(round * 6 + i))
        const idle = yield* Effect.fork(memory.awaitIdle("c"))
        yield* memory.addMessages("c", turn(round * 6 + 7))
        while ((yield* Fiber.poll(idle))._tag === "None") yield* TestClock.adjust("50 millis")
        yield* Fiber.join(idle)
        const calls = (yield* skill.calls).length
        const state = yield* repository.getSummaryState(c)
        // Let the events of finished work reach the subscriber, then watch for more.
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        yield* drain(events)
        yield* TestClock.adjust("1 hour")
        for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
        const late = (yield* drain(events)).filter(summarizing)
        assert.deepStrictEqual(late, [], `round ${round}: a summarization event after awaitIdle returned`)
        assert.strictEqual((yield* skill.calls).length, calls, `round ${round}: a skill call after awaitIdle returned`)
        assert.strictEqual((yield* repository.getSummaryState(c)).version, state.version)
      }
      // The failures were retried, and some runs succeeded in the end.
      assert.isAbove((yield* repository.getSummaryState(c)).version, 0)
    }).pipe(Effect.provide(summarizingMemory(
      { ...options, retries: 3, retryBaseDelay: 100, skillTimeout: 1000 },
      // Fails twice out of three calls: every run needs its retries (with backoff) to succeed.
      { summarize: (_, n) => n % 3 === 0 ? Effect.succeed(`summary ${n}`) : Effect.fail(unavailable) }
    ))))
})
