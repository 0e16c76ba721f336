import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { ConversationId } from "../src/domain/ConversationId.js"
import { MaxContentLength } from "../src/domain/internal/messageLimits.js"
import type { MessageInput } from "../src/domain/Message.js"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { RepositoryService } from "../src/services/RepositoryService.js"
import * as NoopStrategy from "../src/strategies/NoopStrategy.js"
import * as SlidingWindowStrategy from "../src/strategies/SlidingWindowStrategy.js"
import { memoryWith } from "./fixtures/layers.js"

const NoopMemory = memoryWith(NoopStrategy.layer)

const conversation: ReadonlyArray<typeof MessageInput.Encoded> = [
  { role: "system", content: "You are the operations assistant." },
  { role: "user", content: "Order ORD-2024-88417 is for 12 units." },
  { role: "assistant", content: "Noted: 12 units on ORD-2024-88417.", metadata: { modelVariant: "mini" } },
  { role: "user", content: "Check stock for the R-290 model." },
  {
    role: "assistant",
    content: "",
    metadata: { toolCalls: [{ id: "call_1", name: "check_inventory", params: { sku: "R-290" } }] }
  },
  { role: "tool", content: "{\"available\":40}", metadata: { toolCallId: "call_1", toolName: "check_inventory" } },
  { role: "assistant", content: "40 units of R-290 are in stock." }
]

describe("ChatMemoryService", () => {
  it.effect("maxMessageLength: a longer message is refused naming it, and nothing of the call is stored", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("c", [{ role: "user", content: "x".repeat(100) }])
      const error = yield* Effect.flip(
        memory.addMessages("c", [{ role: "user", content: "ok" }, { role: "assistant", content: "y".repeat(101) }])
      )
      assert.deepStrictEqual(
        error._tag === "DataValidationError" ? [error.path, error.reason] : [],
        ["messages[1].content", "must be at most 100 characters (maxMessageLength)"]
      )
      assert.strictEqual((yield* memory.getMessages("c")).length, 1)
      const invalid = yield* Effect.flip(Effect.scoped(Layer.build(
        ChatMemory.layerWith({ maxMessageLength: 0 }).pipe(
          Layer.provide(Layer.merge(NoopStrategy.layer, ApproximateTokenCounter.layer)),
          Layer.provide(MemoryStore.layer)
        )
      )))
      assert.strictEqual(invalid._tag === "DataValidationError" && invalid.path, "options.maxMessageLength")
    }).pipe(Effect.provide(
      ChatMemory.layerWith({ maxMessageLength: 100 }).pipe(
        Layer.provideMerge(NoopStrategy.layer),
        Layer.provideMerge(MemoryStore.layer),
        Layer.provideMerge(ApproximateTokenCounter.layer)
      )
    )))

  it.effect("adds, reads back and pages messages", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const stored = yield* memory.addMessages("c-1", conversation)
      assert.deepStrictEqual(stored.map((m) => m.seq), [1, 2, 3, 4, 5, 6, 7])
      assert.deepStrictEqual(stored[2]?.metadata, { modelVariant: "mini" })
      // Token counts are computed once, at write time: content / 4 rounded up, plus 4 per message.
      assert.strictEqual(stored[1]?.tokenCount, Math.ceil("Order ORD-2024-88417 is for 12 units.".length / 4) + 4)
      const all = yield* memory.getMessages("c-1")
      assert.deepStrictEqual(all.map((m) => m.content), conversation.map((m) => m.content))
      const page = yield* memory.getMessages("c-1", { limit: 2, before: 5 })
      assert.deepStrictEqual(page.map((m) => m.seq), [3, 4])
      const newest = yield* memory.getMessages("c-1", { limit: 3 })
      assert.deepStrictEqual(newest.map((m) => m.seq), [5, 6, 7])
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("an empty batch stores nothing", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      assert.deepStrictEqual(yield* memory.addMessages("c-empty", []), [])
      assert.strictEqual((yield* Effect.flip(memory.getMessages("c-empty")))._tag, "ConversationNotFoundError")
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("clearMessages removes the conversation; later calls find nothing", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("c-clear", conversation)
      yield* memory.addMessages("c-keep", conversation)
      yield* memory.clearMessages("c-clear")
      for (
        const error of [
          yield* Effect.flip(memory.getMessages("c-clear")),
          yield* Effect.flip(memory.stats("c-clear")),
          yield* Effect.flip(memory.clearMessages("c-clear"))
        ]
      ) {
        assert.strictEqual(error._tag, "ConversationNotFoundError")
      }
      assert.strictEqual((yield* memory.getMessages("c-keep")).length, conversation.length)
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("unknown conversations fail with ConversationNotFoundError naming the id; their context is empty", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const error = yield* Effect.flip(memory.getMessages("nobody"))
      assert.strictEqual(error._tag, "ConversationNotFoundError")
      if (error._tag === "ConversationNotFoundError") {
        assert.strictEqual(error.conversationId, "nobody")
        assert.strictEqual(error.message, "Conversation not found: \"nobody\"")
      }
      // An empty history is not an error: the first turn asks for its context like any other.
      const context = yield* memory.getContext("nobody")
      assert.deepStrictEqual(
        [context.conversationId, context.recent, context.system, context.tokenCount, context.turnsOmitted],
        ["nobody", [], [], 0, 0]
      )
      // Asking creates nothing.
      assert.strictEqual((yield* Effect.flip(memory.stats("nobody")))._tag, "ConversationNotFoundError")
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("the Noop context is the whole conversation, with no budget", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const stored = yield* memory.addMessages("c-noop", conversation)
      const context = yield* memory.getContext("c-noop")
      assert.strictEqual(context.strategy, "noop")
      assert.strictEqual(context.tokenBudget, null)
      assert.deepStrictEqual(context.system.map((m) => m.seq), [1])
      assert.deepStrictEqual(context.recent.map((m) => m.seq), [2, 3, 4, 5, 6, 7])
      assert.deepStrictEqual([context.turnsShown, context.turnsOmitted, context.messagesOmitted], [2, 0, 0])
      assert.strictEqual(context.tokenCount, stored.reduce((n, m) => n + m.tokenCount, 0))
      yield* memory.awaitIdle("c-noop")
      yield* memory.awaitIdle()
    }).pipe(Effect.provide(NoopMemory)))

  describe("swapping the strategy is swapping one layer", () => {
    const program = Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("c-swap", conversation)
      return yield* memory.getContext("c-swap")
    })

    it.effect("Noop shows every turn", () =>
      Effect.gen(function*() {
        const context = yield* program
        assert.strictEqual(context.strategy, "noop")
        assert.strictEqual(context.turnsShown, 2)
      }).pipe(Effect.provide(memoryWith(NoopStrategy.layer))))

    it.effect("a sliding window of 70 tokens shows only the newest turn that fits", () =>
      Effect.gen(function*() {
        const context = yield* program
        assert.strictEqual(context.strategy, "sliding-window")
        assert.strictEqual(context.tokenBudget, 70)
        assert.deepStrictEqual(context.system.map((m) => m.seq), [1])
        // The newest turn (user 4 .. assistant 7, with the tool call and its result) fits; turn 2-3 does not.
        assert.deepStrictEqual(context.recent.map((m) => m.seq), [4, 5, 6, 7])
        assert.deepStrictEqual([context.turnsShown, context.turnsOmitted, context.messagesOmitted], [1, 1, 2])
        const shown = [...context.system, ...context.recent].reduce((n, m) => n + m.tokenCount, 0)
        assert.strictEqual(context.tokenCount, shown)
        assert.strictEqual(context.tokenCount, 66)
      }).pipe(Effect.provide(memoryWith(SlidingWindowStrategy.layer({ tokenBudget: 70 })))))
  })

  it.effect("invalid strategy options fail the layer with a DataValidationError naming the option", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Effect.provide(ChatMemoryService, memoryWith(SlidingWindowStrategy.layer({ tokenBudget: -5 })))
      )
      assert.isTrue(Exit.isFailure(exit))
      const error = yield* Effect.flip(
        Effect.provide(ChatMemoryService, memoryWith(SlidingWindowStrategy.layer({ tokenBudget: -5 })))
      )
      assert.strictEqual(error._tag, "DataValidationError")
      assert.strictEqual(error.path, "options.tokenBudget")
    }))

  describe("bad input", () => {
    // Bad input arrives from outside the type system (JSON from a client), so the cases are
    // written as JSON and parsed, as a host would receive them.
    const fromJson = (json: string) => JSON.parse(json)
    const user = { role: "user", content: "hello" } as const

    interface Case {
      readonly name: string
      readonly call: (memory: ChatMemoryService.Service) => Effect.Effect<unknown, { readonly _tag: string }>
      readonly path: string
    }

    const add = (conversationId: string, messages: ReadonlyArray<unknown>): Case["call"] => (memory) =>
      memory.addMessages(conversationId, fromJson(JSON.stringify(messages)))

    const cases: ReadonlyArray<Case> = [
      { name: "wrong role", call: add("c", [{ role: "wizard", content: "x" }]), path: "messages[0].role" },
      {
        name: "summary role is the library's",
        call: add("c", [{ role: "summary", content: "x" }]),
        path: "messages[0].role"
      },
      { name: "missing role", call: add("c", [{ content: "x" }]), path: "messages[0].role" },
      { name: "empty content", call: add("c", [user, { role: "user", content: "" }]), path: "messages[1].content" },
      { name: "missing content", call: add("c", [{ role: "user" }]), path: "messages[0].content" },
      { name: "numeric content", call: add("c", [{ role: "user", content: 42 }]), path: "messages[0].content" },
      { name: "null content", call: add("c", [{ role: "user", content: null }]), path: "messages[0].content" },
      {
        name: "oversized content",
        call: (memory) => memory.addMessages("c", [{ role: "user", content: "x".repeat(MaxContentLength + 1) }]),
        path: "messages[0].content"
      },
      {
        name: "NUL in content",
        call: (memory) => memory.addMessages("c", [user, { role: "user", content: "a\u0000b" }]),
        path: "messages[1].content"
      },
      {
        name: "unpaired surrogate in content",
        call: (memory) => memory.addMessages("c", [{ role: "assistant", content: "broken \ud83d" }]),
        path: "messages[0].content"
      },
      { name: "empty conversation id", call: add("", [user]), path: "conversationId" },
      { name: "overlong conversation id", call: add("x".repeat(256), [user]), path: "conversationId" },
      { name: "control character in conversation id", call: add("abc\n", [user]), path: "conversationId" },
      {
        name: "non-string conversation id",
        call: (memory) => memory.addMessages(fromJson("17"), [user]),
        path: "conversationId"
      },
      { name: "messages not an array", call: (memory) => memory.addMessages("c", fromJson("{}")), path: "messages" },
      { name: "message not an object", call: add("c", [user, "hello"]), path: "messages[1]" },
      { name: "unknown message key", call: add("c", [{ ...user, name: "bob" }]), path: "messages[0].name" },
      { name: "metadata not an object", call: add("c", [{ ...user, metadata: [1, 2] }]), path: "messages[0].metadata" },
      {
        name: "unknown metadata key",
        call: add("c", [{ ...user, metadata: { modelVariantt: "mini" } }]),
        path: "messages[0].metadata.modelVariantt"
      },
      {
        name: "metadata modelVariant not a string",
        call: add("c", [{ ...user, metadata: { modelVariant: 3 } }]),
        path: "messages[0].metadata.modelVariant"
      },
      {
        name: "library-only summaryMetadataId in metadata",
        call: add("c", [{ ...user, metadata: { summaryMetadataId: 1 } }]),
        path: "messages[0].metadata.summaryMetadataId"
      },
      {
        name: "tool message without toolCallId",
        call: add("c", [user, { role: "tool", content: "{}" }]),
        path: "messages[1].metadata.toolCallId"
      },
      {
        name: "tool calls on a user message",
        call: add("c", [{ ...user, metadata: { toolCalls: [{ id: "a", name: "b", params: {} }] } }]),
        path: "messages[0].metadata.toolCalls"
      },
      {
        name: "tool call without a name",
        call: add("c", [{ role: "assistant", content: "", metadata: { toolCalls: [{ id: "a", params: {} }] } }]),
        path: "messages[0].metadata.toolCalls[0].name"
      },
      {
        name: "attributes that are not JSON",
        call: (memory) =>
          memory.addMessages("c", [{
            ...user,
            role: "user",
            metadata: { attributes: { n: Number.POSITIVE_INFINITY } }
          }]),
        path: "messages[0].metadata.attributes.n"
      },
      {
        name: "__proto__ key in attributes (JSON.parse keeps it as data; decoding would drop it)",
        call: (memory) =>
          memory.addMessages(
            "c",
            fromJson(`[{"role":"user","content":"hi","metadata":{"attributes":{"a":1,"__proto__":{"isAdmin":true}}}}]`)
          ),
        path: "messages[0].metadata.attributes.__proto__"
      },
      {
        name: "__proto__ key nested in tool call params",
        call: (memory) =>
          memory.addMessages(
            "c",
            fromJson(
              `[{"role":"assistant","content":"","metadata":{"toolCalls":[{"id":"a","name":"b","params":{"q":{"__proto__":5}}}]}}]`
            )
          ),
        path: "messages[0].metadata.toolCalls[0].params.q.__proto__"
      },
      {
        name: "NaN limit",
        call: (memory) => memory.getMessages("c", { limit: Number.NaN }),
        path: "options.limit"
      },
      { name: "negative limit", call: (memory) => memory.getMessages("c", { limit: -1 }), path: "options.limit" },
      { name: "zero limit", call: (memory) => memory.getMessages("c", { limit: 0 }), path: "options.limit" },
      { name: "fractional limit", call: (memory) => memory.getMessages("c", { limit: 2.5 }), path: "options.limit" },
      { name: "huge limit", call: (memory) => memory.getMessages("c", { limit: 1e9 }), path: "options.limit" },
      { name: "negative before", call: (memory) => memory.getMessages("c", { before: -3 }), path: "options.before" },
      {
        name: "string before",
        call: (memory) => memory.getMessages("c", fromJson("{\"before\":\"5\"}")),
        path: "options.before"
      },
      {
        name: "unknown option",
        call: (memory) => memory.getMessages("c", fromJson("{\"offset\":5}")),
        path: "options.offset"
      },
      { name: "empty id to getMessages", call: (memory) => memory.getMessages(""), path: "conversationId" },
      { name: "control id to getContext", call: (memory) => memory.getContext("a\u0007b"), path: "conversationId" },
      { name: "empty id to clearMessages", call: (memory) => memory.clearMessages(""), path: "conversationId" },
      { name: "overlong id to awaitIdle", call: (memory) => memory.awaitIdle("y".repeat(300)), path: "conversationId" }
    ]

    it.effect.each(cases)("$name is refused, naming $path, and stores nothing", (testCase) =>
      Effect.gen(function*() {
        const memory = yield* ChatMemoryService
        const repository = yield* RepositoryService
        const error = yield* Effect.flip(testCase.call(memory))
        assert.strictEqual(error._tag, "DataValidationError")
        if ("path" in error) assert.strictEqual(error.path, testCase.path)
        assert.include(String(error), testCase.path)
        // Nothing of the call was stored: not even the valid messages of a refused batch.
        const stored = yield* Effect.flip(repository.getConversation(ConversationId.make("c")))
        assert.strictEqual(stored._tag, "ConversationNotFoundError")
      }).pipe(Effect.provide(NoopMemory)))

    it("has at least 20 cases", () => {
      assert.isAtLeast(cases.length, 20)
    })
  })
})
