import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { encode } from "gpt-tokenizer/encoding/o200k_base"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as ExactTokenCounter from "../src/layers/tokens/ExactTokenCounter.js"
import { MessageOverhead, type TokenCounter } from "../src/services/TokenCounter.js"

const counters: ReadonlyArray<readonly [string, TokenCounter.Service]> = [
  ["approximate", ApproximateTokenCounter.make],
  ["exact o200k", ExactTokenCounter.fromTokenizer(ExactTokenCounter.o200kTokenizer, "o200k_base")]
]

const texts = fc.oneof(fc.string({ maxLength: 300 }), fc.fullUnicodeString({ maxLength: 120 }))

describe.each(counters)("TokenCounter laws: %s", (_, counter) => {
  it.effect("counts the empty text as 0", () => Effect.map(counter.count(""), (n) => assert.strictEqual(n, 0)))

  it.effect.prop("truncate returns the longest fitting prefix, or the text when it fits", [
    texts,
    fc.integer({ min: 0, max: 60 })
  ], ([text, max]) =>
    Effect.gen(function*() {
      const cut = yield* counter.truncate(text, max)
      assert.isTrue(text.startsWith(cut))
      assert.isAtMost(yield* counter.count(cut), max)
      if ((yield* counter.count(text)) <= max) assert.strictEqual(cut, text)
      // Never half a surrogate pair.
      assert.notMatch(cut, /[\uD800-\uDBFF]$/)
    }), { fastCheck: { numRuns: 60 } })

  it.effect("countMessage adds the tool calls and the per-message overhead", () =>
    Effect.gen(function*() {
      const content = "Check the stock for R-290."
      const toolCalls = [{ id: "call_1", name: "check_inventory", params: { sku: "R-290" } }]
      const plain = yield* counter.countMessage({ content })
      assert.strictEqual(plain, (yield* counter.count(content)) + MessageOverhead)
      const withCalls = yield* counter.countMessage({ content, metadata: { toolCalls } })
      assert.strictEqual(withCalls, plain + (yield* counter.count(JSON.stringify(toolCalls))))
    }))
})

describe("ExactTokenCounter", () => {
  it.effect("counts exactly what the o200k encoding counts", () =>
    Effect.gen(function*() {
      const counter = ExactTokenCounter.fromTokenizer(ExactTokenCounter.o200kTokenizer, "o200k_base")
      for (const text of ["Hello world, this is a test.", "ORD-2024-88417 costs €12,480.50", "שלום 🧊"]) {
        assert.strictEqual(yield* counter.count(text), encode(text).length)
      }
    }))
})

describe("ApproximateTokenCounter", () => {
  it.effect("counts a quarter of the characters, rounded up", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* ApproximateTokenCounter.make.count("abcd"), 1)
      assert.strictEqual(yield* ApproximateTokenCounter.make.count("abcde"), 2)
    }))
})
