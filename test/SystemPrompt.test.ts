/**
 * A conversation's system prompt changes (`ChatMemoryService.setSystemPrompt`): contexts of every
 * strategy show the current one in place of the leading system messages, the log keeps what each
 * turn was told, the same prompt again stores nothing; on every store.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { MaxContentLength } from "../src/domain/internal/messageLimits.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import type * as Store from "../src/layers/store/Store.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { pgliteRepository } from "./fixtures/pglite.js"
import { describePostgres, repositoryLayer } from "./fixtures/postgres.js"

const suite = (name: string, store: () => Layer.Layer<Store.Ports, unknown>) =>
  describe(`the system prompt changes (${name})`, () => {
    for (const strategy of ["summarization", "hierarchical", "sliding-window", "noop"] as const) {
      it.effect(`${strategy}: the context shows the current one, the log keeps the first`, () =>
        Effect.gen(function*() {
          const memory = yield* ChatMemoryService
          yield* memory.addMessages("c", [
            { role: "system", content: "You are the travel desk." },
            { role: "user", content: "Book TRV-4411." },
            { role: "assistant", content: "Booked." }
          ])
          const first = yield* memory.getContext("c")
          const settings = yield* memory.setSystemPrompt("c", "You are the travel desk; answer in French.")
          assert.lengthOf(settings.systemPrompts ?? [], 1)
          // The same prompt again stores nothing.
          yield* memory.setSystemPrompt("c", "You are the travel desk; answer in French.")
          assert.lengthOf((yield* memory.getSettings("c")).systemPrompts ?? [], 1)
          const context = yield* memory.getContext("c")
          assert.deepStrictEqual(context.system.map((m) => m.content), ["You are the travel desk; answer in French."])
          assert.deepStrictEqual(context.recent.map((m) => m.content), ["Book TRV-4411.", "Booked."])
          assert.isAbove(context.tokenCount, first.tokenCount)
          assert.notStrictEqual(context.prefixVersion, first.prefixVersion)
          const stored = yield* memory.getMessages("c")
          assert.deepStrictEqual(stored.map((m) => m.content), [
            "You are the travel desk.",
            "Book TRV-4411.",
            "Booked."
          ])
          // A later change replaces it; the settings keep both, oldest first.
          yield* memory.setSystemPrompt("c", "You are the travel desk; answer in German.")
          const later = yield* memory.getContext("c")
          assert.deepStrictEqual(later.system.map((m) => m.content), ["You are the travel desk; answer in German."])
          assert.deepStrictEqual((yield* memory.getSettings("c")).systemPrompts?.map((p) => p.text), [
            "You are the travel desk; answer in French.",
            "You are the travel desk; answer in German."
          ])
          // An empty prompt is refused naming it.
          const refused = yield* Effect.flip(memory.setSystemPrompt("c", ""))
          assert.strictEqual(refused._tag, "DataValidationError")
          assert.include(refused.message, "text")
          // So is one longer than a stored message may be, and the stored prompts stay as they were.
          const tooLong = yield* Effect.flip(memory.setSystemPrompt("c", "x".repeat(MaxContentLength + 1)))
          assert.strictEqual(tooLong._tag, "DataValidationError")
          assert.include(tooLong.message, "text")
          assert.strictEqual((yield* memory.getSettings("c")).systemPrompts?.length, 2)
        }).pipe(Effect.provide(ChatMemoryTest.layer({ strategy, store: store() }))))

      it.effect(`${strategy}: a prompt set before the first message is in the first context; setSettings keeps it`, () =>
        Effect.gen(function*() {
          const memory = yield* ChatMemoryService
          yield* memory.setSystemPrompt("new", "You are the travel desk.")
          const first = yield* memory.getContext("new")
          assert.deepStrictEqual(first.system.map((m) => m.content), ["You are the travel desk."])
          assert.isAbove(first.tokenCount, 0)
          // Overrides and prompts set at once, in any order: none is lost, and the prompts stay.
          yield* Effect.all([
            memory.setSettings("new", { tokenBudget: 3000 }),
            memory.setSystemPrompt("new", "You are the travel desk; answer in French."),
            memory.setSettings("new", { tokenBudget: 3000, kRawTurns: 2 })
          ], { concurrency: "unbounded" })
          const settings = yield* memory.getSettings("new")
          assert.deepStrictEqual(settings.systemPrompts?.map((p) => p.text), [
            "You are the travel desk.",
            "You are the travel desk; answer in French."
          ])
          assert.strictEqual(settings.tokenBudget, 3000)
          yield* memory.addMessages("new", [{ role: "user", content: "Book TRV-4411." }])
          const context = yield* memory.getContext("new")
          assert.deepStrictEqual(context.system.map((m) => m.content), ["You are the travel desk; answer in French."])
        }).pipe(Effect.provide(ChatMemoryTest.layer({ strategy, store: store() }))))
    }
  })

suite("in memory", () => MemoryStore.layer)
suite("PGlite", () => pgliteRepository())
describePostgres("the system prompt changes (PostgreSQL)", (url) => {
  suite("PostgreSQL", () => repositoryLayer(url))
})
