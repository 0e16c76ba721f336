/**
 * The summary cap: an answer over it is asked for once more with the overrun stated; one still
 * over is cut at a sentence boundary, and the cut is counted (record, event, stats, metric).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import { SkillExecutionError } from "../src/errors/SkillExecutionError.js"
import * as Prompts from "../src/layers/skills/Prompts.js"
import { ScriptedSkill } from "../src/layers/skills/ScriptedSkill.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import { TokenCounter } from "../src/services/TokenCounter.js"
import { capAtSentence, sentencePrefix } from "../src/strategies/internal/summarizer/cap.js"
import { summarizingMemory } from "./fixtures/layers.js"

// A turn takes 42 tokens with the approximate counter (see SummarizationStrategy.test): eight
// turns cross the threshold of 300.
const options = {
  kRawTurns: 2,
  tokenBudget: 200,
  chunkSummarizeThreshold: 300,
  summaryTokenCap: 60,
  retries: 0
} as const

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}: shipped to Lyon.`.padEnd(100, ".") }
]

/** Sentences of about 12 tokens each, numbered: far over a 60-token cap when there are many. */
const sentences = (n: number, from = 1) =>
  Array.from({ length: n }, (_, i) => `Sentence ${from + i} keeps order ORD-${1000 + from + i} in Lyon.`).join(" ")

const fold = (conversationId: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (let i = 1; i <= 8; i++) yield* memory.addMessages(conversationId, turn(i))
    yield* memory.awaitIdle(conversationId)
  })

const summarizeCalls = Effect.map(
  Effect.flatMap(ScriptedSkill, (skill) => skill.calls),
  (calls) => calls.flatMap((call) => (call.skill === "summarize" ? [call.input] : []))
)

describe("sentencePrefix", () => {
  it("ends at the last sentence or line end in the second half of the text", () => {
    assert.strictEqual(sentencePrefix("One two. Three four! Five six"), "One two. Three four!")
    assert.strictEqual(sentencePrefix("First words here\nnext"), "First words here")
    assert.strictEqual(sentencePrefix("He said \"done.\" Then more"), "He said \"done.\"")
  })

  it("falls back to a word end when no sentence ends in the second half, and never returns more than given", () => {
    assert.strictEqual(
      sentencePrefix("Ok. A long sentence without an end in sight"),
      "Ok. A long sentence without an end in"
    )
    assert.strictEqual(sentencePrefix("unbroken"), "unbroken")
    assert.strictEqual(sentencePrefix("v1.2 is here"), "v1.2 is")
  })
})

describe("capAtSentence", () => {
  it.effect("keeps a text that fits, and cuts one that does not at a sentence, within the cap", () =>
    Effect.gen(function*() {
      const counter = yield* TokenCounter
      const short = yield* capAtSentence(counter, " Fits. ", 60)
      assert.deepStrictEqual(short, { text: "Fits.", truncated: false })
      const long = sentences(20)
      const cut = yield* capAtSentence(counter, long, 60)
      assert.isTrue(cut.truncated)
      assert.isAtMost(yield* counter.count(cut.text), 60)
      assert.isTrue(long.startsWith(cut.text))
      assert.match(cut.text, /in Lyon\.$/)
    }).pipe(Effect.provide(ApproximateTokenCounter.layer)))
})

describe("the summary cap", () => {
  it.effect("an answer over the cap is asked for again with the overrun stated; a shorter one is kept whole", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      yield* fold("again")
      const calls = yield* summarizeCalls
      assert.strictEqual(calls.length, 2)
      assert.isUndefined(calls[0]?.overCap)
      // The same input again: the same summary and turns.
      assert.deepStrictEqual([calls[1]?.existingSummary, calls[1]?.turns], [calls[0]?.existingSummary, calls[0]?.turns])
      assert.strictEqual(calls[1]?.overCap?.summary, sentences(20))
      assert.isAbove(calls[1]?.overCap?.tokens ?? 0, 60)
      const state = yield* repository.getSummaryState(ConversationId.make("again"))
      assert.strictEqual(state.narrative, sentences(3, 18))
      const [record] = yield* repository.listSummarizations(ConversationId.make("again"))
      assert.isFalse(record?.summaryTruncated)
      // Both calls are paid for.
      const stats = yield* memory.stats("again")
      assert.strictEqual(stats.summariesTruncated, 0)
      const input = calls[0] === undefined ? "" : Prompts.summaryInput(calls[0])
      assert.isAbove(stats.summarizerInputTokens, 2 * Math.ceil(input.length / 4) - 1)
    }).pipe(Effect.provide(summarizingMemory(options, {
      summarize: (input) => Effect.succeed(input.overCap === undefined ? sentences(20) : sentences(3, 18))
    }))))

  it.effect("one still over is cut at a sentence boundary and counted in the record, the event and the stats", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const events = yield* Effect.fork(
        Stream.runCollect(Stream.take(Stream.filter(memory.events, (e) => e._tag === "Summarized"), 1))
      )
      yield* Effect.yieldNow()
      yield* fold("cut")
      const state = yield* repository.getSummaryState(ConversationId.make("cut"))
      assert.isTrue(sentences(20).startsWith(state.narrative))
      assert.match(state.narrative, /^Sentence 1 .* in Lyon\.$/)
      assert.isAtMost(yield* (yield* TokenCounter).count(state.narrative), 60)
      const [record] = yield* repository.listSummarizations(ConversationId.make("cut"))
      assert.isTrue(record?.summaryTruncated)
      assert.strictEqual((yield* memory.stats("cut")).summariesTruncated, 1)
      assert.strictEqual((yield* summarizeCalls).length, 2)
      const [event] = yield* Effect.flatMap(events.await, (exit) => exit)
      assert.isTrue(event?._tag === "Summarized" && event.summaryTruncated)
    }).pipe(Effect.provide(summarizingMemory(options, { summarize: () => Effect.succeed(sentences(20)) }))))

  it.effect("when asking again fails, the first answer is cut rather than the fold lost", () =>
    Effect.gen(function*() {
      const repository = yield* SummaryStore
      yield* fold("fails")
      const state = yield* repository.getSummaryState(ConversationId.make("fails"))
      assert.isAbove(state.cursor, 0)
      assert.isTrue(sentences(20).startsWith(state.narrative))
      const [record] = yield* repository.listSummarizations(ConversationId.make("fails"))
      assert.isTrue(record?.summaryTruncated)
    }).pipe(Effect.provide(summarizingMemory(options, {
      summarize: (input) =>
        input.overCap === undefined ? Effect.succeed(sentences(20)) : Effect.fail(
          new SkillExecutionError({ skillId: "scripted/summarize@1", reason: "Unavailable", retryable: false })
        )
    }))))
})
