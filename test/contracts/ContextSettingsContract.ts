/**
 * Settings per call and per conversation, through the public service over one store: the call's
 * `tokenBudget`, then the conversation's stored settings, then the strategy's options; invalid
 * ones refused with a `DataValidationError` naming the field, and nothing stored. Run on every
 * store (memory, PGlite, PostgreSQL).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as ChatMemory from "../../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../../src/layers/skills/ScriptedSkill.js"
import type * as Store from "../../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../../src/services/ChatMemoryService.js"
import * as SummarizationStrategy from "../../src/strategies/SummarizationStrategy.js"
import { freshId } from "../fixtures/messages.js"

// With the approximate counter a turn below takes 42 tokens (see SummarizationStrategy.test).
const defaults = {
  kRawTurns: 2,
  tokenBudget: 400,
  summaryTokenCap: 60,
  retries: 0
} as const

const turn = (i: number) => [
  { role: "user" as const, content: `Question ${String(i).padStart(2, "0")} about ORD-${1000 + i}.`.padEnd(36, ".") },
  { role: "assistant" as const, content: `Answer ${String(i).padStart(2, "0")}: shipped to Lyon.`.padEnd(100, ".") }
]

const addTurns = (id: string, from: number, to: number) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService
    for (let i = from; i <= to; i++) {
      yield* memory.addMessages(id, turn(i))
      yield* memory.awaitIdle(id)
    }
  })

/** The field a failed call names, or "" when it did not fail with a DataValidationError. */
const refusedField = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(
    Effect.flip(effect),
    (error) => ("path" in error && error._tag === "DataValidationError" ? error.path : "")
  )

export const contextSettingsContract = <E>(name: string, repositoryLayer: Layer.Layer<Store.Ports, E>) =>
  layer(
    ChatMemory.layer.pipe(
      Layer.provideMerge(SummarizationStrategy.layer(defaults)),
      Layer.provideMerge(ScriptedSkill.layer()),
      Layer.provideMerge(repositoryLayer),
      Layer.provideMerge(ApproximateTokenCounter.layer)
    )
  )(`context settings: ${name}`, (it) => {
    it.effect("a call's tokenBudget bounds that context only: larger shows more, smaller less", () =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const id = freshId("budget")
        yield* addTurns(id, 1, 30)
        const base = yield* memory.getContext(id)
        const small = yield* memory.getContext(id, { tokenBudget: 200 })
        const large = yield* memory.getContext(id, { tokenBudget: 1200 })
        assert.deepStrictEqual([base.tokenBudget, small.tokenBudget, large.tokenBudget], [400, 200, 1200])
        assert.isAtMost(small.tokenCount, 200)
        assert.isAtMost(base.tokenCount, 400)
        assert.isAtMost(large.tokenCount, 1200)
        assert.isBelow(small.turnsShown, base.turnsShown)
        assert.isAbove(large.turnsShown, base.turnsShown)
        // Nothing is remembered from a call: the next one without a budget is on the default again.
        assert.strictEqual((yield* memory.getContext(id)).tokenBudget, 400)
      }))

    it.effect("a conversation's settings win over the defaults, a call's budget over them; others keep the defaults", () =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const id = freshId("settings")
        const other = freshId("settings-other")
        // Settings may come before the first message.
        const stored = yield* memory.setSettings(id, { tokenBudget: 800, kRawTurns: 4, view: "stable" })
        assert.deepStrictEqual([stored.tokenBudget, stored.kRawTurns, stored.view], [800, 4, "stable"])
        yield* addTurns(id, 1, 30)
        yield* addTurns(other, 1, 30)
        const context = yield* memory.getContext(id)
        assert.strictEqual(context.tokenBudget, 800)
        assert.isAtMost(context.tokenCount, 800)
        // The stable view shows only unsummarized turns: none of those shown is covered.
        assert.strictEqual(context.turnsCovered, 0)
        assert.isAtLeast(context.turnsShown, 4)
        assert.strictEqual((yield* memory.getContext(id, { tokenBudget: 300 })).tokenBudget, 300)
        const untouched = yield* memory.getContext(other)
        assert.strictEqual(untouched.tokenBudget, 400)
        assert.isAbove(untouched.turnsCovered, 0)
        // The background folds by the conversation's budget: with twice the room, fewer folds.
        yield* memory.awaitIdle()
        const [own, others] = [yield* memory.stats(id), yield* memory.stats(other)]
        assert.isAbove(own.summarizations, 0)
        assert.isBelow(own.summarizations, others.summarizations)
        // Replacing clears what is absent; the stats read with the stored settings.
        yield* memory.setSettings(id, { kRawTurns: 3 })
        const replaced = yield* memory.getSettings(id)
        assert.deepStrictEqual([replaced.tokenBudget, replaced.kRawTurns, replaced.view], [undefined, 3, undefined])
        assert.strictEqual((yield* memory.getContext(id)).tokenBudget, 400)
      }))

    it.effect("clearMessages clears the settings with the conversation", () =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const id = freshId("cleared")
        yield* memory.setSettings(id, { tokenBudget: 900 })
        yield* addTurns(id, 1, 3)
        yield* memory.clearMessages(id)
        const after = yield* memory.getSettings(id)
        assert.deepStrictEqual([after.tokenBudget, after.kRawTurns, after.view], [undefined, undefined, undefined])
        yield* addTurns(id, 1, 3)
        assert.strictEqual((yield* memory.getContext(id)).tokenBudget, 400)
      }))

    it.effect("invalid budgets and settings are refused naming the field, and nothing is stored", () =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const id = freshId("invalid")
        yield* memory.setSettings(id, { tokenBudget: 700 })
        yield* addTurns(id, 1, 3)
        for (const tokenBudget of [0, -5, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
          assert.strictEqual(yield* refusedField(memory.getContext(id, { tokenBudget })), "options.tokenBudget")
        }
        const cases: ReadonlyArray<readonly [Parameters<typeof memory.setSettings>[1], string]> = [
          [{ tokenBudget: 0 }, "settings.tokenBudget"],
          [{ tokenBudget: 2.5 }, "settings.tokenBudget"],
          [{ kRawTurns: 0 }, "settings.kRawTurns"],
          [{ kRawTurns: 1001 }, "settings.kRawTurns"],
          [{ tokenBudget: 500, kRawTurns: -1 }, "settings.kRawTurns"]
        ]
        for (const [settings, field] of cases) {
          assert.strictEqual(yield* refusedField(memory.setSettings(id, settings)), field)
        }
        assert.strictEqual((yield* memory.getSettings(id)).tokenBudget, 700)
        assert.strictEqual((yield* memory.getContext(id)).tokenBudget, 700)
      }))
  })
