/**
 * Memory across a user's conversations, through the public services on the in-memory store with
 * the offline skill: a new conversation knows its user (what is known about the user, the list of
 * the user's conversations, recall across them), another user is refused and sees nothing, the
 * user's own operations, and what is known about a user learned from two conversations written at
 * once loses no update.
 */
import { assert, describe, it } from "@effect/vitest"
import { DateTime, Effect, FastCheck as fc, TestClock } from "effect"
import { contextText } from "../src/cli/Eval.js"
import { ConversationId } from "../src/domain/ConversationId.js"
import * as ChatMemoryLive from "../src/layers/ChatMemoryLive.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { RepositoryService } from "../src/services/RepositoryService.js"
import { UserMemoryService } from "../src/services/UserMemoryService.js"

const memory = (strategy: "summarization" | "hierarchical" = "summarization") =>
  ChatMemoryLive.layer({ strategy, store: { _tag: "memory" } })

const at = (day: number, minute = 0) => DateTime.formatIso(DateTime.unsafeMake(Date.UTC(2026, 2, day, 9, minute)))

/** A user message and its answer, said on `day`. */
const exchange = (day: number, user: string, assistant: string) => [
  { role: "user" as const, content: user, createdAt: at(day) },
  { role: "assistant" as const, content: assistant, createdAt: at(day, 1) }
]

/** Two conversations of `tess` a week apart, with an order, an address and a phone number. */
const history = Effect.gen(function*() {
  // The messages are said in March 2026: the clock of the writes is later.
  yield* TestClock.setTime(Date.UTC(2026, 5, 1))
  const memory = yield* ChatMemoryService
  yield* memory.addMessages("kitchen", [
    ...exchange(2, "Hi, I'm Tess Marlowe, my phone is 07700 900461.", "Welcome, Tess."),
    ...exchange(2, "I ordered the oak worktop, order ORD-5521, for £1,240.00.", "Noted: ORD-5521 at £1,240.00.")
  ], { userId: "tess" })
  yield* memory.addMessages("delivery", [
    ...exchange(9, "The delivery address is 14 Larch Road, Leeds LS6 2AB.", "Thanks, 14 Larch Road it is.")
  ], { userId: "tess" })
  yield* memory.awaitIdle()
})

describe("memory across a user's conversations", () => {
  it.effect("a new conversation of the user shows what was said in earlier ones; one without the user shows nothing", () =>
    Effect.gen(function*() {
      yield* history
      const memory = yield* ChatMemoryService
      const fresh = yield* memory.getContext("new-chat", { userId: "tess" })
      const text = contextText(fresh)
      for (const value of ["07700 900461", "ORD-5521", "£1,240.00", "14 Larch Road"]) assert.include(text, value)
      // The list of the user's conversations, the latest first, dated.
      assert.deepStrictEqual(fresh.digest.map((entry) => entry.conversationId), ["delivery", "kitchen"])
      assert.include(text, "2026-03-09")
      assert.isAtMost(fresh.tokenCount, fresh.tokenBudget ?? 0)
      // The same memory, the same conversation id, without the user: nothing of the user.
      const anonymous = yield* memory.getContext("new-chat")
      assert.deepStrictEqual([anonymous.userFacts.length, anonymous.digest.length, anonymous.tokenCount], [0, 0, 0])
    }).pipe(Effect.provide(memory())))

  it.effect("with a query, a new conversation recalls the user's earlier turns, labelled with their conversation and date", () =>
    Effect.gen(function*() {
      yield* history
      const memory = yield* ChatMemoryService
      const context = yield* memory.getContext("new-chat", { userId: "tess", query: "what did the oak worktop cost?" })
      const recalled = context.recalled.find((turn) => turn.conversationId === "kitchen")
      assert.isDefined(recalled)
      assert.include(contextText(context), "[conversation kitchen, seq 3-4, 2026-03-02 09:00 UTC]")
      assert.isAtMost(context.tokenCount, context.tokenBudget ?? 0)
    }).pipe(Effect.provide(memory())))

  it.effect("a value cancelled in a later conversation leaves what is known about the user", () =>
    Effect.gen(function*() {
      yield* history
      const memory = yield* ChatMemoryService
      const users = yield* UserMemoryService
      yield* memory.addMessages("changes", [
        ...exchange(16, "Please cancel order ORD-5521, I found a cheaper worktop.", "Done: ORD-5521 is cancelled.")
      ], { userId: "tess" })
      yield* memory.awaitIdle()
      assert.notInclude((yield* users.getFacts("tess")).map((fact) => fact.value), "ORD-5521")
      const fresh = yield* memory.getContext("new-chat", { userId: "tess" })
      assert.notInclude(fresh.userFacts.map((fact) => fact.value), "ORD-5521")
      // What the other conversations said stays known.
      for (const value of ["07700 900461", "14 Larch Road"]) {
        assert.isTrue(fresh.userFacts.some((fact) => (fact.value ?? "").includes(value)), value)
      }
    }).pipe(Effect.provide(memory())))

  it.effect("a long history written at once is read whole for what is known about the user", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(Date.UTC(2026, 5, 1))
      const memory = yield* ChatMemoryService
      const repository = yield* RepositoryService
      // More pages than a run reads (8 of 200 messages): the job runs again until none is left.
      const said = Array.from({ length: 1000 }, (_, i) => exchange(1 + (i % 28), `Note ${i}: item IT-${i}.`, "Noted."))
        .flat()
      yield* memory.addMessages("imported", [...said, { role: "user", content: "And one more?" }], { userId: "tess" })
      yield* memory.awaitIdle()
      const info = yield* repository.getConversation(ConversationId.make("imported"))
      assert.strictEqual(info.lastSeq, 2001)
      // Every answered turn read; the last user message waits for its answer.
      assert.strictEqual(info.factsCursor, 2000)
    }).pipe(Effect.provide(memory())))

  it.effect("another user is refused by name, and nothing of the call is stored", () =>
    Effect.gen(function*() {
      yield* history
      const memory = yield* ChatMemoryService
      const write = yield* Effect.flip(memory.addMessages("kitchen", [{ role: "user", content: "mine now" }], {
        userId: "tess "
      }))
      assert.strictEqual(
        write.message,
        "ChatMemoryService.addMessages: invalid options.userId: the conversation belongs to another user"
      )
      // An empty write names the conversation too: refused the same way.
      const empty = yield* Effect.flip(memory.addMessages("kitchen", [], { userId: "Tess" }))
      assert.strictEqual(empty.message, write.message)
      assert.deepStrictEqual(yield* memory.addMessages("kitchen", [], { userId: "tess" }), [])
      assert.deepStrictEqual(yield* memory.addMessages("unwritten", [], { userId: "Tess" }), [])
      const read = yield* Effect.flip(memory.getContext("kitchen", { userId: "Tess" }))
      assert.include(read.message, "options.userId")
      assert.strictEqual((yield* memory.getMessages("kitchen")).length, 4)
      // A search or a read naming another user is refused; tess's own goes through.
      const search = yield* Effect.flip(memory.searchMemory("kitchen", "worktop", { userId: "TESS" }))
      assert.strictEqual(
        search.message,
        "ChatMemoryService.searchMemory: invalid options.userId: the conversation belongs to another user"
      )
      const page = yield* Effect.flip(memory.getMessages("kitchen", { userId: "tess\u200b" }))
      assert.strictEqual(
        page.message,
        "ChatMemoryService.getMessages: invalid options.userId: the conversation belongs to another user"
      )
      assert.lengthOf(yield* memory.getMessages("kitchen", { userId: "tess" }), 4)
      assert.isNotEmpty(yield* memory.searchMemory("kitchen", "worktop", { userId: "tess" }))
      const bad = yield* Effect.flip(memory.addMessages("x", [{ role: "user", content: "hi" }], { userId: "" }))
      assert.include(bad.message, "options.userId")
    }).pipe(Effect.provide(memory())))

  it.effect("the user's operations: list, facts set and removed by the app, search, erase", () =>
    Effect.gen(function*() {
      yield* history
      const users = yield* UserMemoryService
      const memory = yield* ChatMemoryService
      assert.deepStrictEqual((yield* users.listConversations("tess")).map((e) => e.conversationId), [
        "delivery",
        "kitchen"
      ])
      assert.deepStrictEqual(
        (yield* users.listConversations("tess", { limit: 1, before: at(5) })).map((e) => e.conversationId),
        ["kitchen"]
      )
      // The next page: after the last entry of the previous one, as listed or as plain values.
      const [first] = yield* users.listConversations("tess", { limit: 1 })
      assert.deepStrictEqual((yield* users.listConversations("tess", { after: first })).map((e) => e.conversationId), [
        "kitchen"
      ])
      const plain = {
        conversationId: "delivery",
        lastSaidAt: first === undefined ? "" : DateTime.formatIso(first.lastSaidAt)
      }
      assert.deepStrictEqual((yield* users.listConversations("tess", { after: plain })).map((e) => e.conversationId), [
        "kitchen"
      ])
      const badPage = yield* Effect.flip(
        users.listConversations("tess", { after: { ...plain, lastSaidAt: "yesterday" } })
      )
      assert.include(badPage.message, "options.after.lastSaidAt")
      yield* users.setFacts("tess", [{ key: "loyalty_tier", value: "Gold" }])
      assert.include((yield* users.getFacts("tess")).map((fact) => fact.value), "Gold")
      assert.include(contextText(yield* memory.getContext("another", { userId: "tess" })), "loyalty_tier: Gold (set ")
      yield* users.removeFacts("tess", ["loyalty_tier"])
      assert.notInclude((yield* users.getFacts("tess")).map((fact) => fact.value), "Gold")
      const found = yield* users.search("tess", "Larch Road")
      assert.deepStrictEqual(found.map((turn) => String(turn.conversationId)), ["delivery"])
      const refused = yield* Effect.flip(users.setFacts("tess", [{ key: "", value: "x" }]))
      assert.include(refused.message, "facts[0].key")
      const erased = yield* users.erase("tess")
      assert.deepStrictEqual([erased.conversations, erased.messages], [2, 6])
      assert.isEmpty(yield* users.listConversations("tess"))
      assert.isEmpty(yield* users.getFacts("tess"))
      assert.strictEqual((yield* Effect.flip(memory.getMessages("kitchen")))._tag, "ConversationNotFoundError")
      const after = yield* memory.getContext("another", { userId: "tess" })
      assert.deepStrictEqual([after.userFacts.length, after.digest.length], [0, 0])
    }).pipe(Effect.provide(memory())))

  it.effect("two conversations of one user written at once lose no update of what is known about the user", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              conversation: fc.constantFrom("a", "b"),
              day: fc.integer({ min: 1, max: 28 }),
              order: fc.integer({ min: 1000, max: 9999 })
            }),
            { minLength: 2, maxLength: 8 }
          ),
          fc.array(fc.nat(3), { minLength: 8, maxLength: 8 }),
          (statements, pauses) =>
            Effect.runPromise(
              Effect.gen(function*() {
                const memory = yield* ChatMemoryService
                const users = yield* UserMemoryService
                // Each conversation says its statements in its order; the two run at once, interleaved
                // by the pauses drawn.
                const write = (conversation: string) =>
                  Effect.forEach(
                    statements.filter((s) => s.conversation === conversation),
                    (statement, i) =>
                      Effect.zipRight(
                        Effect.repeatN(Effect.yieldNow(), pauses[i] ?? 0),
                        memory.addMessages(
                          conversation,
                          exchange(
                            statement.day,
                            `My order number is ORD-${statement.order}.`,
                            `Noted, ORD-${statement.order}.`
                          ),
                          { userId: "tess" }
                        )
                      ),
                    { discard: true }
                  )
                yield* Effect.all([write("a"), write("b")], { concurrency: 2 })
                yield* memory.awaitIdle()
                // The order said last (by the time it was said) is the one known, whoever wrote last.
                const latest = [...statements].sort((x, y) => x.day - y.day).at(-1)
                const facts = yield* users.getFacts("tess")
                const values = facts.map((fact) => fact.value)
                const lastDay = statements.filter((s) => s.day === latest?.day).map((s) => `ORD-${s.order}`)
                assert.isTrue(
                  values.some((value) => lastDay.includes(value ?? "")),
                  `${values.join(", ")} lacks ${lastDay.join(" or ")}`
                )
              }).pipe(Effect.provide(memory()))
            )
        ),
        { numRuns: 25 }
      )
    ))
})
