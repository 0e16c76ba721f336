/**
 * Generated bad input into every public method of `ChatMemoryService`: arbitrary values (JSON and
 * beyond) and near-valid messages and options with one bad field. Each call ends in a success or
 * a typed error (a `DataValidationError` names the field), never in a defect, and a refused call
 * stores nothing. At least 1,000 generated cases per method.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Cause, Context, Effect, Exit, FastCheck as fc, HashMap, Layer, Option, Schema } from "effect"
import { ConversationId } from "../../src/domain/ConversationId.js"
import type { ConversationNotFoundError } from "../../src/errors/ConversationNotFoundError.js"
import type { DataValidationError } from "../../src/errors/DataValidationError.js"
import type { RepositoryError } from "../../src/errors/RepositoryError.js"
import * as ChatMemory from "../../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../../src/layers/skills/ScriptedSkill.js"
import * as MemoryRepository from "../../src/layers/store/MemoryRepository.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import * as ChatMemoryService from "../../src/services/ChatMemoryService.js"
import { RepositoryService } from "../../src/services/RepositoryService.js"
import * as SummarizationStrategy from "../../src/strategies/SummarizationStrategy.js"
import {
  anyValue,
  badOptions,
  batchWithOneBad,
  conversationId,
  jsonMessage,
  validId,
  validMessage
} from "./badInputs.js"
import * as FaultyRepository from "./faultyRepository.js"

type PublicError = DataValidationError | ConversationNotFoundError | RepositoryError

/**
 * The service as callers outside the type system see it: every argument `unknown`. Method
 * parameters are compared bivariantly, so the service is this without a cast, and the values
 * reach its methods unchanged.
 */
interface Untyped {
  addMessages(conversationId: unknown, messages: unknown): Effect.Effect<ReadonlyArray<unknown>, PublicError>
  getMessages(conversationId: unknown, options?: unknown): Effect.Effect<ReadonlyArray<unknown>, PublicError>
  clearMessages(conversationId: unknown): Effect.Effect<void, PublicError>
  getContext(conversationId: unknown): Effect.Effect<unknown, PublicError>
  awaitIdle(conversationId?: unknown): Effect.Effect<void, PublicError>
  stats(conversationId: unknown): Effect.Effect<unknown, PublicError>
}

const untyped = (memory: ChatMemoryService.ChatMemoryService.Service): Untyped => memory

/** The store under the memory, and the calls the memory made to it. */
class Store extends Context.Tag("test/reliability/Store")<Store, {
  readonly store: RepositoryService.Service
  readonly counted: FaultyRepository.FaultyRepository
}>() {}

const StoreLive = Layer.effect(
  Store,
  Effect.gen(function*() {
    const store = yield* MemoryRepository.make
    return { store, counted: yield* FaultyRepository.make(store, () => Effect.succeed(false)) }
  })
)

const MemoryLive = ChatMemory.layer.pipe(
  Layer.provideMerge(SummarizationStrategy.layer({
    kRawTurns: 1,
    promptTokenBudget: 300,
    chunkSummarizeThreshold: 400,
    summaryTokenCap: 50,
    retries: 0
  })),
  Layer.provideMerge(ScriptedSkill.layer()),
  Layer.provideMerge(ApproximateTokenCounter.layer),
  Layer.provideMerge(Layer.effect(RepositoryService, Effect.map(Store, ({ counted }) => counted.service))),
  Layer.provideMerge(StoreLive)
)

const isConversationId = Schema.is(ConversationId)
const runs = { fastCheck: { numRuns: 1000 } }

/** What the store holds and was asked to write, to compare before and after a call. */
const observe = (id: unknown) =>
  Effect.gen(function*() {
    const { counted, store } = yield* Store
    const calls = yield* counted.calls
    const count = (op: FaultyRepository.Operation) => Option.getOrElse(HashMap.get(calls, op), () => 0)
    const ids = ["fuzz-a", "fuzz-b", "fuzz-c", ...(isConversationId(id) ? [id] : [])]
    const messages = yield* Effect.forEach(ids, (candidate) =>
      Effect.match(store.getConversation(ConversationId.make(candidate)), {
        onFailure: () =>
          -1,
        onSuccess: (info) => info.messageCount
      }))
    return { appends: count("appendMessages"), deletes: count("deleteConversation"), messages }
  })

/**
 * Calls `method` and checks the outcome: a success, or a typed error; a `DataValidationError`
 * from this method, naming a path under one of `roots`; and nothing stored by a refused call.
 */
const call = <A>(
  method: keyof Untyped,
  id: unknown,
  roots: ReadonlyArray<string>,
  run: (memory: Untyped) => Effect.Effect<A, PublicError>
) =>
  Effect.gen(function*() {
    const memory = untyped(yield* ChatMemoryService.ChatMemoryService)
    const before = yield* observe(id)
    const exit = yield* Effect.exit(Effect.suspend(() => {
      const effect = run(memory)
      assert.isTrue(Effect.isEffect(effect), `${method} did not return an Effect`)
      return effect
    }))
    const after = yield* observe(id)
    if (Exit.isSuccess(exit)) return { exit, before, after, error: undefined }
    const failure = Cause.failureOption(exit.cause)
    if (Option.isNone(failure) || Cause.isDie(exit.cause) || Cause.isInterrupted(exit.cause)) {
      return assert.fail(`${method} ended with a defect or an interruption:\n${Cause.pretty(exit.cause)}`)
    }
    const error = failure.value
    assert.include(["DataValidationError", "ConversationNotFoundError"], error._tag, `${method}: ${error.message}`)
    // A refused call reached no write of the store, and the store holds what it held.
    assert.strictEqual(after.appends, before.appends, `${method} appended despite failing`)
    assert.deepStrictEqual(after.messages, before.messages, `${method} changed stored messages despite failing`)
    if (error._tag === "DataValidationError") {
      assert.strictEqual(after.deletes, before.deletes, `${method} deleted despite refusing its input`)
      assert.strictEqual(error.operation, `ChatMemoryService.${method}`)
      assert.isTrue(
        roots.some((root) =>
          error.path === root || error.path.startsWith(`${root}.`) || error.path.startsWith(`${root}[`)
        ),
        `${method}: the path ${error.path} names no argument (${roots.join(", ")})`
      )
      assert.isAbove(error.reason.length, 0)
    }
    return { exit, before, after, error }
  })

/** A call whose only problem can be a bad conversation id is refused naming it, and only then. */
const idOnly = (method: "clearMessages" | "getContext" | "stats" | "awaitIdle") => (id: unknown) =>
  Effect.gen(function*() {
    const { error } = yield* call(method, id, ["conversationId"], (memory) => memory[method](id))
    const valid = isConversationId(id) || (method === "awaitIdle" && id === undefined)
    assert.strictEqual(error?._tag === "DataValidationError", !valid, `${method}(${fc.stringify(id)})`)
  })

describe("bad input", () => {
  layer(MemoryLive, { timeout: "120 seconds" })("every public method", (it) => {
    it.effect.prop(
      "addMessages: arbitrary values",
      { id: conversationId, messages: anyValue },
      ({ id, messages }) =>
        Effect.gen(function*() {
          const { after, before, error, exit } = yield* call(
            "addMessages",
            id,
            ["conversationId", "messages"],
            (memory) => memory.addMessages(id, messages)
          )
          if (!isConversationId(id)) {
            assert.strictEqual(error?._tag === "DataValidationError" && error.path, "conversationId")
          }
          if (Exit.isSuccess(exit)) {
            // All of it is stored, at the end of the conversation.
            const added = exit.value.length
            assert.isTrue(Array.isArray(messages) && messages.length === added)
            if (added > 0) {
              assert.strictEqual(after.messages.at(-1), Math.max(0, before.messages.at(-1) ?? 0) + added)
            }
          }
        }),
      runs
    )

    it.effect.prop(
      "addMessages: one bad field among valid messages, or a bad id, is refused naming it, and nothing is stored",
      {
        input: fc.oneof(
          fc.tuple(validId, batchWithOneBad).map(([id, { messages, path }]) => ({ id, messages, path })),
          fc.tuple(conversationId.filter((id) => !isConversationId(id)), fc.array(validMessage, { maxLength: 5 })).map((
            [id, messages]
          ) => ({ id, messages, path: "conversationId" }))
        )
      },
      ({ input }) =>
        Effect.gen(function*() {
          const { error } = yield* call(
            "addMessages",
            input.id,
            ["conversationId", "messages"],
            (memory) => memory.addMessages(input.id, input.messages)
          )
          assert.strictEqual(error?._tag, "DataValidationError")
          if (error?._tag === "DataValidationError") assert.strictEqual(error.path, input.path, error.reason)
        }),
      runs
    )

    it.effect.prop(
      "addMessages: valid messages with free-form JSON are stored exactly as given",
      { id: validId, messages: fc.array(jsonMessage, { minLength: 1, maxLength: 4 }) },
      ({ id, messages }) =>
        Effect.gen(function*() {
          const { exit } = yield* call("addMessages", id, [], (memory) => memory.addMessages(id, messages))
          assert.isTrue(Exit.isSuccess(exit))
          const { store } = yield* Store
          const stored = yield* store.listMessages(ConversationId.make(id), {})
          assert.deepStrictEqual(
            stored.slice(stored.length - messages.length).map((m) => ({
              role: m.role,
              content: m.content,
              metadata: m.metadata
            })),
            messages
          )
        }),
      runs
    )

    it.effect.prop(
      "getMessages: arbitrary values",
      { id: conversationId, options: anyValue },
      ({ id, options }) =>
        Effect.gen(function*() {
          const { error } = yield* call(
            "getMessages",
            id,
            ["conversationId", "options"],
            (memory) => memory.getMessages(id, options)
          )
          if (!isConversationId(id)) {
            assert.strictEqual(error?._tag === "DataValidationError" && error.path, "conversationId")
          }
        }),
      runs
    )

    it.effect.prop("getMessages: one bad option is refused naming it", { id: validId, input: badOptions }, ({
      id,
      input
    }) =>
      Effect.gen(function*() {
        const { error } = yield* call(
          "getMessages",
          id,
          ["conversationId", "options"],
          (memory) => memory.getMessages(id, input.options)
        )
        assert.strictEqual(error?._tag === "DataValidationError" && error.path, input.path)
      }), runs)

    it.effect.prop(
      "clearMessages: arbitrary values",
      { id: conversationId },
      ({ id }) => idOnly("clearMessages")(id),
      runs
    )
    it.effect.prop("getContext: arbitrary values", { id: conversationId }, ({ id }) => idOnly("getContext")(id), runs)
    it.effect.prop("stats: arbitrary values", { id: conversationId }, ({ id }) => idOnly("stats")(id), runs)
    it.effect.prop(
      "awaitIdle: arbitrary values",
      { id: fc.oneof(conversationId, fc.constant(undefined)) },
      ({ id }) => idOnly("awaitIdle")(id),
      runs
    )

    it.effect("a batch over the limit is refused whole", () =>
      Effect.gen(function*() {
        const messages = Array.from({ length: ChatMemoryService.MaxMessagesPerCall + 1 }, (_, i) => ({
          role: "user",
          content: `message ${i}`
        }))
        const { error } = yield* call("addMessages", "fuzz-a", ["messages"], (memory) =>
          memory.addMessages("fuzz-a", messages))
        assert.strictEqual(error?._tag === "DataValidationError" && error.path, "messages")
      }))
  })
})
