import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Either, Layer, Queue } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as Prompts from "../src/layers/skills/Prompts.js"
import { ScriptedSkill } from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import type { SummarizationOptions } from "../src/strategies/internal/options.js"
import * as NoopStrategy from "../src/strategies/NoopStrategy.js"
import { memoryWith, summarizingMemory } from "./fixtures/layers.js"

// With the approximate counter a user line of 36 characters takes 13 tokens and an answer of 100
// characters 29: a turn takes 42 tokens. Seven turns (294) stay under the threshold; the eighth
// crosses it. The tail kept verbatim is what fits 200 - 60 tokens: three turns.
const options = {
  kRawTurns: 2,
  tokenBudget: 200,
  chunkSummarizeThreshold: 300,
  summaryTokenCap: 60,
  retries: 0
} as const

const user = (i: number) =>
  `Question ${String(i).padStart(2, "0")} about order ORD-${String(i).padStart(4, "0")}.`.padEnd(36, ".")
const answer = (i: number) => `Answer ${String(i).padStart(2, "0")}: shipped to Lyon.`.padEnd(100, ".")
const turn = (i: number) => [
  { role: "user" as const, content: user(i) },
  { role: "assistant" as const, content: answer(i), metadata: i === 2 ? { modelVariant: "deep-dive" } : {} }
]

const replay = (conversationId: string, from: number, to: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (let i = from; i <= to; i++) {
      yield* memory.addMessages(conversationId, turn(i))
      yield* memory.awaitIdle(conversationId)
    }
  })

const c = ConversationId.make("c")

const summaries = { summarize: (_: unknown, n: number) => Effect.succeed(`summary #${n}`) }

/** The inputs of the summarize calls, as the text a model skill renders from them. */
const summarizeInputs = Effect.map(
  Effect.flatMap(ScriptedSkill, (skill) => skill.calls),
  (calls) => calls.flatMap((call) => (call.skill === "summarize" ? [Prompts.summaryInput(call.input)] : []))
)

describe("SummarizationStrategy", () => {
  it.effect("summarizes in the background once the threshold is crossed, in the EXISTING_SUMMARY / NEW_TURNS format", () =>
    Effect.gen(function*() {
      const repository = yield* SummaryStore
      yield* replay("c", 1, 7)
      assert.deepStrictEqual(yield* summarizeInputs, [])
      yield* replay("c", 8, 8)
      const [input] = yield* summarizeInputs
      assert.strictEqual(
        input,
        [
          "=== EXISTING_SUMMARY ===",
          "NONE",
          "=== END_EXISTING_SUMMARY ===",
          "",
          "=== NEW_TURNS ===",
          "Turn 1:",
          `User: ${user(1)}`,
          `Assistant: ${answer(1)}`,
          "",
          "Turn 2:",
          `User: ${user(2)}`,
          `Assistant (deep-dive): ${answer(2)}`,
          "",
          "Turn 3:",
          `User: ${user(3)}`,
          `Assistant: ${answer(3)}`,
          "",
          "Turn 4:",
          `User: ${user(4)}`,
          `Assistant: ${answer(4)}`,
          "",
          "Turn 5:",
          `User: ${user(5)}`,
          `Assistant: ${answer(5)}`,
          "=== END_NEW_TURNS ==="
        ].join("\n")
      )
      const state = yield* repository.getSummaryState(c)
      assert.deepStrictEqual([state.cursor, state.version, state.narrative], [10, 1, "summary #1"])
      const [record] = yield* repository.listSummarizations(c)
      assert.deepStrictEqual(
        [record?.fromSeq, record?.toSeq, record?.mode, record?.skillId],
        [1, 10, "incremental", "scripted/summarize@1"]
      )
      const context = yield* (yield* ChatMemoryService).getContext("c")
      assert.strictEqual(context.summary, "summary #1")
      // The full view (the default) fills the budget: turn 5, which the summary covers, fits too.
      assert.deepStrictEqual(context.recent.map((m) => m.seq), [9, 10, 11, 12, 13, 14, 15, 16])
      assert.deepStrictEqual(
        [context.turnsShown, context.turnsCovered, context.turnsOmitted, context.summarizedUpTo],
        [4, 1, 0, 10]
      )
      assert.isAtMost(context.tokenCount, options.tokenBudget)
    }).pipe(Effect.provide(summarizingMemory(options, summaries))))

  it.effect("incremental mode folds the existing summary with new turns and sends each message once", () =>
    Effect.gen(function*() {
      yield* replay("c", 1, 30)
      const inputs = yield* summarizeInputs
      assert.isAtLeast(inputs.length, 3)
      inputs.forEach((text, i) => {
        const existing = i === 0 ? "NONE" : `summary #${i}`
        assert.isTrue(text.startsWith(`=== EXISTING_SUMMARY ===\n${existing}\n=== END_EXISTING_SUMMARY ===`))
      })
      const sent = inputs.flatMap((text) => text.split("\n").filter((line) => line.startsWith("User: ")))
      assert.strictEqual(new Set(sent).size, sent.length)
      assert.deepStrictEqual(sent, Array.from({ length: sent.length }, (_, i) => `User: ${user(i + 1)}`))
      // As data: each stored message is in at most one call, in order.
      const calls = yield* Effect.flatMap(ScriptedSkill, (skill) => skill.calls)
      const seqs = calls.flatMap((call) => call.input.turns.flatMap((turn) => turn.messages.map((m) => m.seq)))
      assert.deepStrictEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1))
    }).pipe(Effect.provide(summarizingMemory(options, summaries))))

  it.effect("full mode re-summarizes the original messages, never a summary of a summary", () =>
    Effect.gen(function*() {
      yield* replay("c", 1, 20)
      const inputs = yield* summarizeInputs
      assert.isAtLeast(inputs.length, 2)
      for (const text of inputs) {
        assert.isTrue(text.startsWith("=== EXISTING_SUMMARY ===\nNONE\n"))
        assert.include(text, `Turn 1:\nUser: ${user(1)}`)
      }
    }).pipe(Effect.provide(summarizingMemory({ ...options, mode: "full" }, summaries))))

  it.effect("layered mode keeps a summary per chunk, oldest first, and merges the oldest past the cap", () =>
    Effect.gen(function*() {
      const repository = yield* SummaryStore
      yield* replay("c", 1, 12)
      const two = yield* repository.getSummaryState(c)
      assert.deepStrictEqual(two.layers.map((l) => l.text), ["summary #1", "summary #2"])
      assert.strictEqual(two.narrative, "summary #1\n\nsummary #2")
      assert.isBelow(two.layers[0]?.toSeq ?? 0, two.layers[1]?.fromSeq ?? 0)
    }).pipe(Effect.provide(summarizingMemory({ ...options, mode: "layered" }, summaries))))

  it.effect("layered mode merges the two oldest layers when together they pass the cap", () =>
    Effect.gen(function*() {
      const repository = yield* SummaryStore
      yield* replay("c", 1, 12)
      const state = yield* repository.getSummaryState(c)
      assert.strictEqual(state.layers.length, 1)
      assert.strictEqual(state.layers[0]?.fromSeq, 1)
      const inputs = yield* summarizeInputs
      const merge = inputs.find((text) => text.includes("=== NEW_TURNS ===\n=== END_NEW_TURNS ==="))
      assert.isDefined(merge)
      // The merge reads the two layers as the summary so far, and no turn.
      const calls = yield* Effect.flatMap(ScriptedSkill, (skill) => skill.calls)
      const merges = calls.filter((call) => call.skill === "summarize" && call.input.turns.length === 0)
      assert.isAtLeast(merges.length, 1)
      for (const call of merges) {
        assert.deepStrictEqual(call.input.existingSummary, {
          _tag: "Layers",
          older: "x".repeat(140),
          newer: "x".repeat(140)
        })
      }
    }).pipe(Effect.provide(
      summarizingMemory({ ...options, mode: "layered" }, {
        summarize: (input) => Effect.succeed(input.turns.length === 0 ? "merged layers" : "x".repeat(140))
      })
    )))

  it.effect("writes linked summary messages and prunes originals when configured", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("c", [{ role: "system", content: "You are a shipping assistant." }])
      yield* replay("c", 1, 8)
      const messages = yield* memory.getMessages("c")
      const summary = messages.find((m) => m.role === "summary")
      assert.strictEqual(summary?.content, "summary #1")
      assert.strictEqual(summary?.metadata.summaryMetadataId, 1)
      // The system message stays; the five summarized turns are gone; the tail is kept.
      assert.deepStrictEqual(messages.filter((m) => m.role === "system").map((m) => m.seq), [1])
      assert.strictEqual(messages.filter((m) => m.role === "user").length, 3)
      const context = yield* memory.getContext("c")
      assert.strictEqual(context.summary, "summary #1")
      assert.strictEqual(context.system.length, 1)
    }).pipe(Effect.provide(summarizingMemory({ ...options, summaryMessages: true, pruneSummarized: true }, summaries))))

  it.effect("stats report storage, compression, summarizer cost and lag", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* replay("c", 1, 8)
      const stats = yield* memory.stats("c")
      assert.deepStrictEqual(
        [stats.messagesStored, stats.tokensStored, stats.summarizations, stats.summarizedUpTo],
        [16, 8 * 42, 1, 10]
      )
      assert.strictEqual(stats.lagTokens, 3 * 42)
      assert.strictEqual(stats.lagMessages, 6)
      assert.isAbove(stats.summarizerInputTokens, 5 * 42 - 20)
      assert.isAbove(stats.compressionRatio, 1)
      assert.strictEqual(stats.strategy, "summarization")
    }).pipe(Effect.provide(summarizingMemory(options, summaries))))

  it.scoped("emits Summarized events to subscribers", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* replay("c", 1, 8)
      const tags = (yield* Queue.takeAll(events)).pipe((chunk) => [...chunk].map((event) => event._tag))
      assert.include(tags, "Summarized")
      assert.include(tags, "MessagesAdded")
    }).pipe(Effect.provide(summarizingMemory(options, summaries))))

  it.effect("clearing a conversation interrupts its running job", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* replay("c", 1, 7)
      yield* memory.addMessages("c", turn(8))
      // The job is blocked in the skill; clearing interrupts it and nothing is left running.
      yield* memory.clearMessages("c")
      yield* memory.awaitIdle()
      assert.strictEqual((yield* Effect.flip(memory.stats("c")))._tag, "ConversationNotFoundError")
      // A cleared conversation has an empty context, and nothing came back from the interrupted job.
      const context = yield* memory.getContext("c")
      assert.deepStrictEqual([context.recent, context.summary, context.tokenCount], [[], null, 0])
    }).pipe(Effect.provide(summarizingMemory(options, { summarize: () => Effect.never }))))

  it.effect("swapping SummarizationStrategy for NoopStrategy is one layer", () =>
    Effect.gen(function*() {
      const program = Effect.gen(function*() {
        yield* replay("c", 1, 10)
        return yield* (yield* ChatMemoryService).getContext("c")
      })
      const summarized = yield* Effect.provide(program, summarizingMemory(options, summaries))
      const whole = yield* Effect.provide(program, memoryWith(NoopStrategy.layer))
      assert.strictEqual(summarized.strategy, "summarization")
      assert.isNotNull(summarized.summary)
      assert.strictEqual(whole.strategy, "noop")
      assert.strictEqual(whole.recent.length, 20)
    }))

  it.effect("refuses invalid options with a DataValidationError naming the option", () =>
    Effect.gen(function*() {
      const build = (o: Parameters<typeof summarizingMemory>[0]) =>
        Effect.flip(Layer.build(summarizingMemory(o)).pipe(Effect.scoped))
      const cap = yield* build({ tokenBudget: 100, summaryTokenCap: 100 })
      assert.strictEqual(cap._tag === "DataValidationError" ? cap.path : "", "options.summaryTokenCap")
      const k = yield* build({ kRawTurns: 0 })
      assert.strictEqual(k._tag === "DataValidationError" ? k.path : "", "options.kRawTurns")
      const prune = yield* build({ mode: "full", pruneSummarized: true })
      assert.strictEqual(prune._tag === "DataValidationError" ? prune.path : "", "options.pruneSummarized")
    }).pipe(Effect.provide(Layer.merge(MemoryStore.layer, ApproximateTokenCounter.layer))))

  it.effect("timing options take any Duration input; a bad one is refused naming it; the millisecond names still work", () =>
    Effect.gen(function*() {
      const build = (o: Parameters<typeof summarizingMemory>[0]) =>
        Effect.either(Layer.build(summarizingMemory(o)).pipe(Effect.scoped))
      const pathOf = (o: Parameters<typeof summarizingMemory>[0]) =>
        Effect.map(
          Effect.flip(Layer.build(summarizingMemory(o)).pipe(Effect.scoped)),
          (error) => error._tag === "DataValidationError" ? error.path : error._tag
        )
      assert.isTrue(Either.isRight(yield* build({ skillTimeout: "10 seconds", breakerCooldown: Duration.minutes(1) })))
      assert.isTrue(Either.isRight(yield* build({ retryBaseDelay: 0, skillTimeout: 1500 })))
      assert.strictEqual(yield* pathOf({ skillTimeout: "0 millis" }), "options.skillTimeout")
      assert.strictEqual(yield* pathOf({ breakerCooldown: -5 }), "options.breakerCooldown")
      // Duration.decode reads an input below zero as zero: refused as written, not taken as zero.
      assert.strictEqual(yield* pathOf({ retryBaseDelay: -1 }), "options.retryBaseDelay")
      assert.strictEqual(yield* pathOf({ shutdownDrain: "-2 seconds" }), "options.shutdownDrain")
      assert.strictEqual(yield* pathOf({ shutdownDrain: [-1, 0] }), "options.shutdownDrain")
      assert.isTrue(Either.isRight(yield* build({ shutdownDrain: [0, 5], retryBaseDelay: BigInt(0) })))
      // The previous version's names, for one release: read as milliseconds, checked the same way.
      assert.isTrue(Either.isRight(yield* build({ skillTimeoutMillis: 1000, retryBaseDelayMillis: 0 })))
      assert.strictEqual(yield* pathOf({ breakerCooldownMillis: 0 }), "options.breakerCooldown")
    }).pipe(Effect.provide(Layer.merge(MemoryStore.layer, ApproximateTokenCounter.layer))))

  it.effect("invalid watermarks or view fail the layer's construction, naming the option", () =>
    Effect.gen(function*() {
      const pathOf = (o: Partial<SummarizationOptions>) =>
        Effect.map(
          Effect.flip(Layer.build(summarizingMemory(o, summaries)).pipe(Effect.scoped)),
          (error) => (error._tag === "DataValidationError" ? error.path : error._tag)
        )
      assert.strictEqual(yield* pathOf({ highWater: 0.5, lowWater: 0.5 }), "options.lowWater")
      assert.strictEqual(yield* pathOf({ highWater: 1.5 }), "options.highWater")
      assert.strictEqual(yield* pathOf({ lowWater: -0.1 }), "options.lowWater")
      assert.strictEqual(yield* pathOf({ highWater: 0 }), "options.highWater")
    }))

  it.effect("watermarks (no threshold set): a fold starts past highWater × room and leaves at most lowWater × room", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      // room = 400 - 60 (cap) = 340 tokens; a turn is 42: due past 306 (8 turns), folds down to 85 (2 turns).
      for (let i = 1; i <= 7; i++) yield* memory.addMessages("c", turn(i))
      yield* memory.awaitIdle("c")
      assert.strictEqual((yield* repository.getSummaryState(c)).cursor, 0)
      yield* memory.addMessages("c", turn(8))
      yield* memory.awaitIdle("c")
      const state = yield* repository.getSummaryState(c)
      // Six turns folded (12 messages), two left: at most lowWater × room, never fewer than K.
      assert.deepStrictEqual([state.cursor, state.version], [12, 1])
      const context = yield* memory.getContext("c")
      assert.strictEqual(context.turnsOmitted, 0)
      assert.isAtMost(context.tokenCount, 400)
    }).pipe(Effect.provide(summarizingMemory({
      kRawTurns: 2,
      tokenBudget: 400,
      summaryTokenCap: 60,
      highWater: 0.9,
      lowWater: 0.25,
      retries: 0
    }, summaries))))
})
