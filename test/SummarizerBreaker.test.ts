/**
 * The summarizer's breaker: a skill that keeps failing is left alone after `breakerFailures`
 * failed summarizations in a row, nothing is lost meanwhile, and after the cool-down one call is
 * let through, whose success closes the breaker and wakes the conversations held back meanwhile.
 * Learning what is known about a user calls the skill through the same breaker.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Queue, TestClock } from "effect"
import type { MemoryEvent } from "../src/domain/MemoryEvent.js"
import { SkillExecutionError } from "../src/errors/SkillExecutionError.js"
import { defaultSummary } from "../src/layers/skills/internal/scripted.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { UserMemoryService } from "../src/services/UserMemoryService.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { summarizingMemory } from "./fixtures/layers.js"

const options = {
  kRawTurns: 2,
  tokenBudget: 200,
  chunkSummarizeThreshold: 300,
  summaryTokenCap: 60,
  retries: 0,
  breakerFailures: 3,
  breakerCooldown: 30_000
} as const

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}.`.padEnd(100, ".") }
]

const refused = new SkillExecutionError({
  skillId: "scripted/summarize@1",
  reason: "Unavailable",
  retryable: true,
  detail: "Transport error on POST /v1/responses"
})

/** The tags of the events received so far. */
const drain = (events: Queue.Dequeue<MemoryEvent>) => Effect.map(Queue.takeAll(events), (chunk) => [...chunk])

/** Takes events until one with `tag` arrives (strategy events reach subscribers asynchronously). */
const waitFor = (events: Queue.Dequeue<MemoryEvent>, tag: MemoryEvent["_tag"]) =>
  Effect.gen(function*() {
    const seen: Array<MemoryEvent> = []
    while (seen.at(-1)?._tag !== tag) seen.push(yield* Queue.take(events))
    return seen
  })

/** Adds turn `i` and waits for the background summarization it triggers. */
const write = (i: number, conversationId = "c") =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    yield* memory.addMessages(conversationId, turn(i))
    yield* memory.awaitIdle(conversationId)
  })

/**
 * Writes turns `from + 1, …` to a conversation until the skill has had `calls` summarize calls
 * (at most 40 turns: failing beats hanging); returns the last turn written.
 */
const writeUntilCalls = (calls: number, from = 0, conversationId = "c") =>
  Effect.gen(function*() {
    let i = from
    while ((yield* summarizeCalls) < calls) {
      if (i - from >= 40) return assert.fail(`fewer than ${calls} summarize calls after 40 turns`)
      yield* write(++i, conversationId)
    }
    return i
  })

const summarizeCalls = Effect.map(
  Effect.flatMap(ScriptedSkill.ScriptedSkill, (skill) => skill.calls),
  (calls) => calls.filter((call) => call.skill === "summarize").length
)

describe("the summarizer's breaker", () => {
  it.scoped("opens after N failed summarizations in a row: the skill is left alone, nothing is lost", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      // The first turns are not due; from the first due one, three failures open the breaker.
      let i = yield* writeUntilCalls(3)
      const seen = yield* waitFor(events, "SummarizerUnavailable")
      const opened = seen.at(-1)
      // The run that opened it is reported failed too (right after).
      seen.push(...(yield* waitFor(events, "SummarizationFailed")))
      assert.strictEqual(seen.filter((event) => event._tag === "SummarizationFailed").length, 3)
      assert.strictEqual(yield* summarizeCalls, 3)
      if (opened?._tag !== "SummarizerUnavailable") return assert.fail("no SummarizerUnavailable")
      assert.strictEqual(opened.failures, 3)
      assert.strictEqual(opened.skillId, "scripted/summarize@1")
      assert.strictEqual(opened.retryInMillis, 30_000)
      assert.include(opened.detail, "Transport error")

      // Turns go on without calling the skill (and without a warning per turn).
      const opening = i
      for (; i < opening + 15; i++) yield* write(i + 1)
      assert.strictEqual(yield* summarizeCalls, 3)
      assert.notInclude((yield* drain(events)).map((event) => event._tag), "SummarizationFailed")
      assert.strictEqual((yield* memory.getMessages("c")).length, 2 * i)

      // The summary waits; the context announces what it leaves out, as when the summary is behind.
      const context = yield* memory.getContext("c")
      assert.isNull(context.summary)
      assert.isAbove(context.turnsOmitted, 0)
      assert.isTrue(context.omissionAnnounced)
      assert.isAtMost(context.tokenCount, options.tokenBudget)
      const fallback = (yield* waitFor(events, "FallbackUsed")).at(-1)
      assert.strictEqual(fallback?._tag === "FallbackUsed" ? fallback.reason : "", "summary-behind")
    }).pipe(Effect.provide(summarizingMemory(options, { summarize: () => Effect.fail(refused) }))))

  it.scoped("after the cool-down one call goes through: a failure reopens it, a success closes it", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      let i = yield* writeUntilCalls(3)
      yield* waitFor(events, "SummarizerUnavailable")

      // Still cooling down: nothing is called.
      yield* TestClock.adjust("29 seconds")
      yield* write(++i)
      assert.strictEqual(yield* summarizeCalls, 3)

      // Cooled down: one call (the fourth, failing) reopens the breaker for another cool-down.
      yield* TestClock.adjust("1 second")
      yield* write(++i)
      assert.strictEqual(yield* summarizeCalls, 4)
      const reopened = (yield* waitFor(events, "SummarizerUnavailable")).at(-1)
      assert.strictEqual(reopened?._tag === "SummarizerUnavailable" ? reopened.failures : 0, 4)
      yield* write(++i)
      assert.strictEqual(yield* summarizeCalls, 4)

      // The next one after the cool-down answers: the backlog is summarized and the breaker closes.
      yield* TestClock.adjust("30 seconds")
      yield* write(++i)
      // The breaker closes when the skill answers, before the summary is committed.
      const after = yield* waitFor(events, "Summarized")
      assert.include(after.map((event) => event._tag), "SummarizerRecovered")
      const context = yield* memory.getContext("c")
      assert.isNotNull(context.summary)
      assert.strictEqual(context.turnsOmitted, 0)
      const calls = yield* summarizeCalls
      yield* write(++i)
      yield* write(++i)
      yield* write(++i)
      assert.isAbove(yield* summarizeCalls, calls)
      assert.strictEqual((yield* memory.getMessages("c")).length, 2 * i)
    }).pipe(Effect.provide(summarizingMemory(options, {
      summarize: (input, n) => (n <= 4 ? Effect.fail(refused) : Effect.succeed(defaultSummary(input)))
    }))))

  it.scoped("a conversation held back while paused is summarized once the skill answers, with no write of its own", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      let i = yield* writeUntilCalls(3)
      yield* waitFor(events, "SummarizerUnavailable")
      // Another conversation passes its threshold (twice over) while the summarizer is paused, then
      // stops writing: its summarization is held back, and its context leaves turns out.
      const j = 16
      for (let k = 1; k <= j; k++) yield* write(k, "d")
      assert.strictEqual(yield* summarizeCalls, 3)
      const behind = yield* memory.getContext("d")
      assert.isNull(behind.summary)
      assert.isAbove(behind.turnsOmitted, 0)
      // After the cool-down, a write to the first conversation gets the one call through, and it answers.
      yield* TestClock.adjust("30 seconds")
      yield* memory.addMessages("c", turn(++i))
      yield* memory.awaitIdle()
      const held = yield* memory.getContext("d")
      assert.isNotNull(held.summary)
      assert.strictEqual(held.turnsOmitted, 0)
      assert.strictEqual((yield* memory.getMessages("d")).length, 2 * j)
    }).pipe(Effect.provide(summarizingMemory(options, {
      summarize: (input, n) => (n <= 3 ? Effect.fail(refused) : Effect.succeed(defaultSummary(input)))
    }))))

  it.scoped("a call let through that is interrupted gives its turn to the next one", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      let i = yield* writeUntilCalls(3)
      yield* waitFor(events, "SummarizerUnavailable")
      yield* TestClock.adjust("30 seconds")
      // The one call let through hangs; clearing the conversation interrupts its job.
      yield* memory.addMessages("c", turn(++i))
      for (let n = 0; n < 1000 && (yield* summarizeCalls) < 4; n++) yield* Effect.yieldNow()
      assert.strictEqual(yield* summarizeCalls, 4)
      yield* memory.clearMessages("c")
      yield* writeUntilCalls(5, 0, "d")
      const after = yield* waitFor(events, "Summarized")
      assert.include(after.map((event) => event._tag), "SummarizerRecovered")
    }).pipe(Effect.provide(summarizingMemory(options, {
      summarize: (input, n) =>
        n <= 3
          ? Effect.fail(refused)
          : n === 4
          ? Effect.never
          : Effect.succeed(defaultSummary(input))
    }))))

  it.scoped("a success before the threshold starts the count again", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* writeUntilCalls(8)
      const tags = (yield* drain(events)).map((event) => event._tag)
      assert.notInclude(tags, "SummarizerUnavailable")
      assert.strictEqual(tags.filter((tag) => tag === "SummarizationFailed").length, 6)
    }).pipe(Effect.provide(summarizingMemory(options, {
      // Two failures, one success, and so on: never three in a row.
      summarize: (
        input,
        n
      ) => (n % 3 === 0 ? Effect.succeed(defaultSummary(input)) : Effect.fail(refused))
    }))))

  it.scoped("with lazyFallback sync, an open breaker serves the window at once, saying why", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* writeUntilCalls(3)
      yield* waitFor(events, "SummarizerUnavailable")
      const context = yield* memory.getContext("c")
      assert.strictEqual(yield* summarizeCalls, 3)
      assert.isAbove(context.turnsOmitted, 0)
      assert.isTrue(context.omissionAnnounced)
      const fallback = (yield* waitFor(events, "FallbackUsed")).at(-1)
      assert.strictEqual(fallback?._tag === "FallbackUsed" ? fallback.reason : "", "failure")
      assert.include(fallback?._tag === "FallbackUsed" ? fallback.detail : "", "paused after 3 summarizations")
    }).pipe(Effect.provide(summarizingMemory({ ...options, lazyFallback: "sync" }, {
      summarize: () => Effect.fail(refused)
    }))))

  it.effect("its knobs are options with defaults, checked like the others", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(SummarizationStrategy.make({ breakerFailures: 0 })).pipe(
          Effect.provide(summarizingMemory())
        )
      )
      assert.strictEqual(error._tag, "DataValidationError")
      assert.include(error.message, "breakerFailures")
    }))

  it.scoped("learning what is known about a user goes through the same breaker, and learns the turns held back", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const users = yield* UserMemoryService
      const events = yield* memory.subscribe
      const extractions = Effect.map(
        Effect.flatMap(ScriptedSkill.ScriptedSkill, (skill) => skill.calls),
        (calls) => calls.filter((call) => call.skill === "extractFacts").length
      )
      const userTurn = (i: number) =>
        Effect.zipRight(
          memory.addMessages("u-c", turn(i), { userId: "u" }),
          memory.awaitIdle("u-c")
        )
      // Three failed extractions in a row open the breaker: the summarizer's, for the same skill.
      for (let i = 1; i <= 3; i++) yield* userTurn(i)
      const opened = (yield* waitFor(events, "SummarizerUnavailable")).at(-1)
      assert.strictEqual(opened?._tag === "SummarizerUnavailable" ? opened.failures : 0, 3)
      assert.strictEqual(yield* extractions, 3)
      // While it cools down, turns are stored and the skill is left alone.
      yield* userTurn(4)
      yield* userTurn(5)
      assert.strictEqual(yield* extractions, 3)
      assert.isEmpty(yield* users.getFacts("u"))
      // After the cool-down, the next write's call answers: every turn since the first is learned.
      yield* TestClock.adjust("30 seconds")
      yield* userTurn(6)
      assert.strictEqual(yield* extractions, 4)
      assert.include((yield* waitFor(events, "SummarizerRecovered")).map((event) => event._tag), "SummarizerRecovered")
      const facts = yield* users.getFacts("u")
      assert.deepStrictEqual(facts.map((fact) => [fact.key, fact.value]), [
        ["orders", "ORD-1001 ORD-1002 ORD-1003 ORD-1004 ORD-1005 ORD-1006"]
      ])
      assert.strictEqual(yield* summarizeCalls, 0)
    }).pipe(Effect.provide(summarizingMemory({ ...options, tokenBudget: 4000, chunkSummarizeThreshold: 4000 }, {
      extractFacts: (input, n) =>
        n <= 3 ? Effect.fail(refused) : Effect.succeed({
          facts: [{
            key: "orders",
            value: input.turns.flatMap((t) => t.messages.flatMap((m) => m.content.match(/ORD-\d+/g) ?? [])).join(" "),
            category: "ENTITY" as const
          }],
          narrative: ""
        })
    }))))
})
