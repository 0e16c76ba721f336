/**
 * What the memory logs through the app's logger: routine events (a summary made, turns a context
 * omits) at Debug, so that an app on Effect's default logger (which prints Info and above) sees
 * none of them; faults at Warning. The omission is logged once per context.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, LogLevel } from "effect"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import * as SlidingWindowStrategy from "../src/strategies/SlidingWindowStrategy.js"
import { memoryWith, summarizingMemory } from "./fixtures/layers.js"
import { atInfoOrAbove, recording } from "./fixtures/logs.js"

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}: shipped to Lyon.`.padEnd(100, ".") }
]

describe("memory logs", () => {
  it.effect("a summary made and a context read log nothing at Info or above; the summary at Debug", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        for (let i = 1; i <= 10; i++) {
          yield* memory.addMessages("c", turn(i))
          yield* memory.awaitIdle("c")
        }
        const context = yield* memory.getContext("c")
        assert.isNotNull(context.summary)
        assert.deepStrictEqual(atInfoOrAbove(entries), [])
        const summarized = entries.filter((entry) => entry.message === "summarized")
        assert.isAbove(summarized.length, 0)
        for (const entry of summarized) assert.strictEqual(entry.level, LogLevel.Debug)
      }).pipe(Effect.provide(summarizingMemory(
        { kRawTurns: 2, tokenBudget: 200, chunkSummarizeThreshold: 300, summaryTokenCap: 60, retries: 0 },
        { summarize: (_, n) => Effect.succeed(`summary #${n}`) }
      )))
    ))

  it.effect("turns a context omits are logged at Debug, once per context", () =>
    recording((entries) =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        for (let i = 1; i <= 6; i++) yield* memory.addMessages("c", turn(i))
        for (let read = 1; read <= 3; read++) {
          const context = yield* memory.getContext("c")
          assert.isAbove(context.turnsOmitted, 0)
        }
        // Stats read a context of their own: they log no omission, only `getContext` does.
        yield* memory.stats("c")
        yield* memory.clearMessages("c")
        const omissions = entries.filter((entry) => entry.message === "context omits turns")
        assert.deepStrictEqual(omissions.map((entry) => entry.level), [LogLevel.Debug, LogLevel.Debug, LogLevel.Debug])
        assert.deepStrictEqual(atInfoOrAbove(entries), [])
      }).pipe(Effect.provide(memoryWith(SlidingWindowStrategy.layer({ tokenBudget: 100 }))))
    ))
})
