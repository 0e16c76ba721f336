/**
 * Model output is data: a summary or a fact holding characters no store can hold (NUL, unpaired
 * surrogates) is committed with them replaced, the same on memory, PGlite and PostgreSQL, once:
 * never refused by the store and retried for ever.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ConversationId from "../src/domain/ConversationId.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import type * as Store from "../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { SummaryStore } from "../src/services/SummaryStore.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import * as SummarizationStrategy from "../src/strategies/SummarizationStrategy.js"
import { pgliteRepository } from "./fixtures/pglite.js"
import { describePostgres, repositoryLayer } from "./fixtures/postgres.js"

const options = { kRawTurns: 2, tokenBudget: 200, chunkSummarizeThreshold: 300, summaryTokenCap: 60 } as const

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${i} about order ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${i}.`.padEnd(100, ".") }
]

const dirty = "Order ORD-1001\u0000 ships \uD800Friday\uDFFF."
const clean = "Order ORD-1001\uFFFD ships \uFFFDFriday\uFFFD."

/** What a store holds after a summarization whose model wrote `dirty` everywhere. */
const committed = <E>(store: Layer.Layer<Store.Ports, E>) =>
  Effect.gen(function*() {
    const summarized = yield* Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const repository = yield* SummaryStore
      const skill = yield* ScriptedSkill.ScriptedSkill
      for (let i = 1; i <= 8; i++) yield* memory.addMessages("c", turn(i))
      yield* memory.awaitIdle("c")
      const state = yield* repository.getSummaryState(ConversationId.make("c"))
      const context = yield* memory.getContext("c")
      return {
        narrative: state.narrative,
        summary: context.summary,
        version: state.version,
        calls: (yield* skill.calls).length
      }
    }).pipe(Effect.provide(
      ChatMemory.layer.pipe(
        Layer.provideMerge(SummarizationStrategy.layer({ ...options, retries: 0 })),
        Layer.provideMerge(ScriptedSkill.layer({ summarize: () => Effect.succeed(dirty) })),
        Layer.provideMerge(store),
        Layer.provideMerge(ApproximateTokenCounter.layer)
      )
    ))
    const facts = yield* Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      for (let i = 1; i <= 8; i++) yield* memory.addMessages("h", turn(i))
      yield* memory.awaitIdle("h")
      return (yield* memory.getContext("h")).facts.map((fact) => [fact.key, fact.value])
    }).pipe(Effect.provide(
      ChatMemory.layer.pipe(
        Layer.provideMerge(HierarchicalStrategy.layer({ ...options, retries: 0 })),
        Layer.provideMerge(ScriptedSkill.layer({
          extractFacts: () =>
            Effect.succeed({
              facts: [{ key: "delivery\u0000day", value: dirty, category: "DECISION" }],
              narrative: dirty
            })
        })),
        Layer.provideMerge(store),
        Layer.provideMerge(ApproximateTokenCounter.layer)
      )
    ))
    return { ...summarized, facts }
  })

const expected = {
  narrative: clean,
  summary: clean,
  // Committed by the first run: nothing refused, nothing retried.
  version: 1,
  calls: 1,
  facts: [["delivery\uFFFDday", clean]]
}

describe("model output holding characters no store can hold", () => {
  it.effect("memory: replaced and committed once", () =>
    Effect.map(committed(MemoryStore.layer), (result) => assert.deepStrictEqual(result, expected)))

  it.effect(
    "PGlite: the same",
    () => Effect.map(committed(pgliteRepository()), (result) => assert.deepStrictEqual(result, expected))
  )
})

describePostgres("model output on PostgreSQL", (url) => {
  it.effect(
    "PostgreSQL: the same",
    () => Effect.map(committed(repositoryLayer(url)), (result) => assert.deepStrictEqual(result, expected))
  )
})
