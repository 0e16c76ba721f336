/**
 * The events of the summarization strategy: `ContextBuilt` says whether and which summary it
 * shows (no facts: the strategy keeps none), and no `FactsExtracted` is emitted.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Queue } from "effect"
import type { MemoryEvent } from "../src/domain/MemoryEvent.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { summarizingMemory } from "./fixtures/layers.js"

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}.`.padEnd(100, ".") }
]

const built = (events: ReadonlyArray<MemoryEvent>) =>
  events.flatMap((e) =>
    e._tag === "ContextBuilt" ? [[e.factsIncluded, e.summaryIncluded, e.summarizedUpTo, e.summaryTruncated]] : []
  )

describe("MemoryEvent", () => {
  it.scoped("summarization: ContextBuilt names the summary it shows, and no facts are ever extracted", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const events = yield* memory.subscribe
      yield* memory.addMessages("c", turn(1))
      yield* memory.getContext("c")
      for (let i = 2; i <= 12; i++) {
        yield* memory.addMessages("c", turn(i))
        yield* memory.awaitIdle("c")
      }
      const all: Array<MemoryEvent> = []
      // The strategy's events are relayed: wait for the first summarization.
      while (!all.some((e) => e._tag === "Summarized")) all.push(yield* Queue.take(events))
      const context = yield* memory.getContext("c")
      all.push(...yield* Queue.takeAll(events))
      assert.isAbove(context.summarizedUpTo, 0)
      assert.deepStrictEqual(built(all), [[0, false, 0, false], [0, true, context.summarizedUpTo, false]])
      assert.isFalse(all.some((e) => e._tag === "FactsExtracted"))
    }).pipe(Effect.provide(summarizingMemory({
      kRawTurns: 2,
      tokenBudget: 200,
      chunkSummarizeThreshold: 300,
      summaryTokenCap: 60,
      retries: 0
    }))))
})
