/**
 * What a skill call starts from (`SkillService.ExistingSummary`), by the fold that asks: each mode
 * of each strategy sends its case, and a model reads the parts as one summary.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import { summaryParts } from "../src/layers/skills/internal/prompts.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import type { SkillService } from "../src/services/SkillService.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import { summarizingMemory } from "./fixtures/layers.js"

// A turn takes 42 tokens with the approximate counter: a few turns pass the threshold.
const summarizing = { kRawTurns: 2, tokenBudget: 200, chunkSummarizeThreshold: 300, summaryTokenCap: 60, retries: 0 }
const hierarchical = {
  kRawTurns: 2,
  tokenBudget: 700,
  summaryTokenCap: 100,
  maxNarrativeTokens: 200,
  maxFactTokens: 100,
  retries: 0
}

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}.`.padEnd(100, ".") }
]

/** Adds turns 1 to `turns`, each awaited, so that every fold that falls due has run. */
const replay = (turns: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (let i = 1; i <= turns; i++) {
      yield* memory.addMessages("c", turn(i))
      yield* memory.awaitIdle("c")
    }
  })

/** What every skill call started from, oldest first. */
const reads = Effect.map(
  Effect.flatMap(ScriptedSkill.ScriptedSkill, (skill) => skill.calls),
  (calls): ReadonlyArray<SkillService.ExistingSummary> => calls.map((call) => call.input.existingSummary)
)

const tags = Effect.map(reads, (read) => read.map((existing) => existing._tag))

/** The hierarchical memory over a skill that keeps what it reads and adds a line per turn. */
const hierarchicalMemory = (options: Partial<HierarchicalStrategy.HierarchicalOptions>) =>
  ChatMemory.layer.pipe(
    Layer.provideMerge(HierarchicalStrategy.layer({ ...hierarchical, ...options })),
    Layer.provideMerge(ScriptedSkill.layer({
      extractFacts: (input) => {
        const lines = input.turns.map((t) => `Line of turn ${t.firstSeq}: the user asked about an order.`)
        return Effect.succeed({ facts: [], narrative: [...summaryParts(input.existingSummary), ...lines].join("\n") })
      }
    })),
    Layer.provideMerge(MemoryStore.layer),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )

describe("SkillService.ExistingSummary", () => {
  it("a model reads the parts as one summary, oldest first", () => {
    assert.deepStrictEqual(summaryParts({ _tag: "None" }), [])
    assert.deepStrictEqual(summaryParts({ _tag: "Narrative", text: "A.\nB." }), ["A.\nB."])
    assert.deepStrictEqual(summaryParts({ _tag: "Latest", text: "B." }), ["B."])
    assert.deepStrictEqual(summaryParts({ _tag: "Layers", older: "A.", newer: "B." }), ["A.", "B."])
  })

  it.effect("summarization, incremental: none on the first fold, then the narrative so far", () =>
    Effect.gen(function*() {
      yield* replay(16)
      const read = yield* reads
      assert.isAtLeast(read.length, 3)
      assert.deepStrictEqual(read, [
        { _tag: "None" },
        ...read.slice(1).map((_, i) => ({ _tag: "Narrative" as const, text: `summary #${i + 1}` }))
      ])
    }).pipe(Effect.provide(summarizingMemory({ ...summarizing, mode: "incremental" }, {
      summarize: (_, n) => Effect.succeed(`summary #${n}`)
    }))))

  it.effect("summarization, full: never a summary, only the original messages", () =>
    Effect.gen(function*() {
      yield* replay(16)
      const read = yield* tags
      assert.isAtLeast(read.length, 2)
      assert.isTrue(read.every((tag) => tag === "None"))
    }).pipe(Effect.provide(summarizingMemory({ ...summarizing, mode: "full" }, {
      summarize: (_, n) => Effect.succeed(`summary #${n}`)
    }))))

  it.effect("summarization, layered: a new layer starts from none, a merge from the two oldest layers", () =>
    Effect.gen(function*() {
      yield* replay(12)
      const calls = yield* Effect.flatMap(ScriptedSkill.ScriptedSkill, (skill) => skill.calls)
      assert.isAtLeast(calls.filter((call) => call.input.turns.length === 0).length, 1)
      for (const call of calls) {
        assert.deepStrictEqual(
          call.input.existingSummary,
          call.input.turns.length === 0
            ? { _tag: "Layers", older: "x".repeat(140), newer: "x".repeat(140) }
            : { _tag: "None" }
        )
      }
    }).pipe(Effect.provide(summarizingMemory({ ...summarizing, mode: "layered" }, {
      summarize: (input) => Effect.succeed(input.turns.length === 0 ? "merged layers" : "x".repeat(140))
    }))))

  it.effect("hierarchical, append fold: none on the first fold, then the narrative's latest lines", () =>
    Effect.gen(function*() {
      yield* replay(30)
      const read = yield* tags
      assert.isAtLeast(read.length, 3)
      assert.deepStrictEqual(read, ["None", ...read.slice(1).map(() => "Latest")])
    }).pipe(Effect.provide(hierarchicalMemory({ narrativeFold: "append" }))))

  it.effect("hierarchical, rewrite fold: none on the first fold, then the whole narrative", () =>
    Effect.gen(function*() {
      yield* replay(30)
      const read = yield* tags
      assert.isAtLeast(read.length, 3)
      assert.deepStrictEqual(read, ["None", ...read.slice(1).map(() => "Narrative")])
    }).pipe(Effect.provide(hierarchicalMemory({ narrativeFold: "rewrite" }))))

  it.effect("hierarchical, full: never a summary, only the original messages", () =>
    Effect.gen(function*() {
      yield* replay(30)
      const read = yield* tags
      assert.isAtLeast(read.length, 2)
      assert.isTrue(read.every((tag) => tag === "None"))
    }).pipe(Effect.provide(hierarchicalMemory({ mode: "full", summarizerInputLimit: 100 }))))
})
