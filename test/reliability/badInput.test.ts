/**
 * Generated bad input into every public method of `ChatMemoryService`: arbitrary values (JSON and
 * beyond), near-valid messages and options with one bad field, and hostile values (deep, cyclic,
 * throwing getters and proxies, dates, maps, class instances). Each call ends in a success or a
 * typed error (a `DataValidationError` names the field), never in a defect, and a refused call
 * stores nothing. At least 1,000 generated cases per method. Then the limits, the documented
 * transformations (canonical JSON), and that stored values never alias the caller's.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Cause, Context, Effect, Exit, FastCheck as fc, HashMap, Layer, Option, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { ConversationId } from "../../src/domain/ConversationId.js"
import { MaxMetadataLength } from "../../src/domain/internal/messageLimits.js"
import { MaxJsonValues } from "../../src/domain/internal/storable.js"
import { MemoryContext } from "../../src/domain/MemoryContext.js"
import type { ConversationNotFoundError } from "../../src/errors/ConversationNotFoundError.js"
import type { DataValidationError } from "../../src/errors/DataValidationError.js"
import type { RepositoryError } from "../../src/errors/RepositoryError.js"
import * as ChatMemory from "../../src/layers/ChatMemory.js"
import * as ScriptedSkill from "../../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../../src/layers/store/MemoryStore.js"
import * as Store from "../../src/layers/store/Store.js"
import * as ApproximateTokenCounter from "../../src/layers/tokens/ApproximateTokenCounter.js"
import * as ChatMemoryService from "../../src/services/ChatMemoryService.js"
import * as NoopStrategy from "../../src/strategies/NoopStrategy.js"
import * as SummarizationStrategy from "../../src/strategies/SummarizationStrategy.js"
import { canonicalJson } from "../fixtures/messages.js"
import {
  anyValue,
  badOptions,
  batchWithOneBad,
  conversationId,
  hostileValues,
  jsonMessage,
  nestedArrays,
  nestedObjects,
  validId,
  validMessage
} from "./badInputs.js"
import * as FaultyStore from "./faultyStore.js"

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
  getContext(conversationId: unknown, options?: unknown): Effect.Effect<unknown, PublicError>
  setSettings(conversationId: unknown, settings: unknown): Effect.Effect<unknown, PublicError>
  getSettings(conversationId: unknown): Effect.Effect<unknown, PublicError>
  awaitIdle(conversationId?: unknown): Effect.Effect<void, PublicError>
  stats(conversationId: unknown): Effect.Effect<unknown, PublicError>
}

const untyped = (memory: ChatMemoryService.ChatMemoryService.Service): Untyped => memory

/** The store under the memory, and the calls the memory made to it. */
class Counted extends Context.Tag("test/reliability/Counted")<Counted, {
  readonly store: Store.Store
  readonly counted: FaultyStore.FaultyStore
}>() {}

const StoreLive = Layer.effect(
  Counted,
  Effect.gen(function*() {
    const store = yield* MemoryStore.make
    return { store, counted: yield* FaultyStore.make(store, () => Effect.succeed(false)) }
  })
)

const MemoryLive = ChatMemory.layer.pipe(
  Layer.provideMerge(SummarizationStrategy.layer({
    kRawTurns: 1,
    tokenBudget: 300,
    chunkSummarizeThreshold: 400,
    summaryTokenCap: 50,
    retries: 0
  })),
  Layer.provideMerge(ScriptedSkill.layer()),
  Layer.provideMerge(ApproximateTokenCounter.layer),
  Layer.provideMerge(Layer.unwrapEffect(Effect.map(Counted, ({ counted }) => Store.layerFrom(counted.store)))),
  Layer.provideMerge(StoreLive)
)

const isConversationId = Schema.is(ConversationId)
const runs = { fastCheck: { numRuns: 1000 } }

/** Where a hostile value goes in a message: both are JSON values of the metadata. */
const placements = {
  attributes: {
    message: (value: unknown) => ({ role: "user", content: "hello", metadata: { attributes: { when: value } } }),
    path: ".metadata.attributes.when"
  },
  params: {
    message: (value: unknown) => ({
      role: "assistant",
      content: "",
      metadata: { toolCalls: [{ id: "call-1", name: "lookup", params: value }] }
    }),
    path: ".metadata.toolCalls[0].params"
  }
} as const

const boom = (): never => {
  throw new Error("boom")
}
const unreadable = "could not be read: a getter or a proxy trap threw"

/** What the store holds and was asked to write, to compare before and after a call. */
const observe = (id: unknown) =>
  Effect.gen(function*() {
    const { counted, store } = yield* Counted
    const calls = yield* counted.calls
    const count = (op: FaultyStore.Operation) => Option.getOrElse(HashMap.get(calls, op), () => 0)
    const ids = ["fuzz-a", "fuzz-b", "fuzz-c", ...(isConversationId(id) ? [id] : [])]
    const messages = yield* Effect.forEach(ids, (candidate) =>
      Effect.match(store.repository.getConversation(ConversationId.make(candidate)), {
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
const idOnly = (method: "clearMessages" | "getContext" | "stats" | "awaitIdle" | "getSettings") => (id: unknown) =>
  Effect.gen(function*() {
    const { error } = yield* call(method, id, ["conversationId"], (memory) => memory[method](id))
    const valid = isConversationId(id) || (method === "awaitIdle" && id === undefined)
    assert.strictEqual(error?._tag === "DataValidationError", !valid, `${method}(${fc.stringify(id)})`)
  })

describe("bad input", () => {
  layer(MemoryLive)("every public method", (it) => {
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
      "addMessages: valid messages with free-form JSON are stored as given, in canonical form",
      { id: validId, messages: fc.array(jsonMessage, { minLength: 1, maxLength: 4 }) },
      ({ id, messages }) =>
        Effect.gen(function*() {
          const { exit } = yield* call("addMessages", id, [], (memory) => memory.addMessages(id, messages))
          assert.isTrue(Exit.isSuccess(exit))
          const { store } = yield* Counted
          // The newest messages only: the conversation grows with every run, and reading all of it
          // each time made this property quadratic.
          const stored = yield* store.repository.listMessages(ConversationId.make(id), {
            limit: messages.length,
            from: "newest"
          })
          const read = stored.map((m) => ({
            role: m.role,
            content: m.content,
            metadata: m.metadata
          }))
          // The same values (`-0` read as `0`), with keys in `jsonb` order: compared as JSON text too.
          const expected = canonicalJson(messages)
          assert.deepStrictEqual(read, expected)
          assert.strictEqual(JSON.stringify(read), JSON.stringify(expected))
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
    it.effect.prop("getSettings: arbitrary values", { id: conversationId }, ({ id }) => idOnly("getSettings")(id), runs)

    it.effect.prop(
      "getContext: arbitrary options are refused naming options, or honoured as the call's budget",
      { options: fc.oneof(anyValue, fc.record({ tokenBudget: fc.integer({ min: 1, max: 5000 }) })) },
      ({ options }) =>
        Effect.gen(function*() {
          const memory = untyped(yield* ChatMemoryService.ChatMemoryService)
          yield* memory.addMessages("fuzz-context", [{ role: "user", content: "hello" }])
          const { error, exit } = yield* call(
            "getContext",
            "fuzz-context",
            ["options"],
            (memory) => memory.getContext("fuzz-context", options)
          )
          const plain = typeof options === "object" && options !== null &&
            Object.getPrototypeOf(options) === Object.prototype
          const keys = plain ? Object.keys(options) : []
          const budget = plain && "tokenBudget" in options ? options.tokenBudget : undefined
          if (options === undefined || (keys.length === 1 && Number.isInteger(budget) && Number(budget) > 0)) {
            assert.isUndefined(error, `getContext(…, ${fc.stringify(options)})`)
          }
          if (Exit.isSuccess(exit) && exit.value instanceof MemoryContext) {
            assert.strictEqual(exit.value.tokenBudget, typeof budget === "number" ? budget : 300)
          }
        }),
      runs
    )

    it.effect.prop(
      "setSettings: arbitrary values are refused naming settings and leave the stored settings as they were",
      { settings: fc.oneof(anyValue, fc.record({ tokenBudget: anyValue, kRawTurns: anyValue, view: anyValue })) },
      ({ settings }) =>
        Effect.gen(function*() {
          const memory = untyped(yield* ChatMemoryService.ChatMemoryService)
          const before = yield* memory.getSettings("fuzz-settings")
          const { error, exit } = yield* call(
            "setSettings",
            "fuzz-settings",
            ["settings"],
            (memory) => memory.setSettings("fuzz-settings", settings)
          )
          const after = yield* memory.getSettings("fuzz-settings")
          if (error !== undefined) assert.deepStrictEqual(after, before)
          if (Exit.isSuccess(exit)) assert.deepStrictEqual(after, exit.value)
        }),
      runs
    )
    it.effect.prop(
      "awaitIdle: arbitrary values",
      { id: fc.oneof(conversationId, fc.constant(undefined)) },
      ({ id }) => idOnly("awaitIdle")(id),
      runs
    )

    it.effect.each(hostileValues)(
      "hostile value: $name is refused naming its path, never a defect",
      (hostile) =>
        Effect.gen(function*() {
          for (const [name, placement] of Object.entries(placements)) {
            const messages = [{ role: "user", content: "before" }, placement.message(hostile.make())]
            const { error } = yield* call(
              "addMessages",
              "fuzz-a",
              ["messages"],
              (memory) => memory.addMessages("fuzz-a", messages)
            )
            assert.deepStrictEqual(
              error?._tag === "DataValidationError" ? { path: error.path, reason: error.reason } : error,
              { path: `messages[1]${placement.path}${hostile.path}`, reason: hostile.reason },
              name
            )
          }
        })
    )

    it.effect.prop(
      "addMessages: a hostile value anywhere in a batch is refused naming its path, and nothing is stored",
      {
        before: fc.array(validMessage, { maxLength: 4 }),
        which: fc.nat({ max: hostileValues.length - 1 }),
        placement: fc.constantFrom<keyof typeof placements>("attributes", "params"),
        after: fc.array(validMessage, { maxLength: 4 })
      },
      ({ after, before, placement, which }) =>
        Effect.gen(function*() {
          // The hostile value is built here, not by fast-check, which would print it on failure.
          const hostile = hostileValues[which]
          if (hostile === undefined) return assert.fail(`no hostile value #${which}`)
          const at = placements[placement]
          const messages = [...before, at.message(hostile.make()), ...after]
          const { error } = yield* call("addMessages", "fuzz-b", ["messages"], (memory) =>
            memory.addMessages("fuzz-b", messages))
          assert.strictEqual(error?._tag, "DataValidationError")
          if (error?._tag === "DataValidationError") {
            assert.strictEqual(error.path, `messages[${before.length}]${at.path}${hostile.path}`, hostile.name)
            assert.strictEqual(error.reason, hostile.reason)
          }
        }),
      runs
    )

    const user = { role: "user", content: "hello" }
    const hostileCalls: ReadonlyArray<{
      readonly name: string
      readonly method: keyof Untyped
      readonly run: (memory: Untyped) => Effect.Effect<unknown, PublicError>
      readonly path: string
      readonly reason: string
    }> = [
      {
        name: "the list of messages is a proxy whose get trap throws",
        method: "addMessages",
        run: (memory) => memory.addMessages("fuzz-c", new Proxy([user], { get: boom })),
        path: "messages",
        reason: unreadable
      },
      {
        name: "the list of messages is a revoked proxy",
        method: "addMessages",
        run: (memory) => {
          const { proxy, revoke } = Proxy.revocable([user], {})
          revoke()
          return memory.addMessages("fuzz-c", proxy)
        },
        path: "messages",
        reason: unreadable
      },
      {
        name: "a message behind a throwing getter",
        method: "addMessages",
        run: (memory) =>
          memory.addMessages("fuzz-c", Object.defineProperty([user, user], 1, { get: boom, enumerable: true })),
        path: "messages[1]",
        reason: unreadable
      },
      {
        name: "a message that is a Date",
        method: "addMessages",
        run: (memory) => memory.addMessages("fuzz-c", [user, new Date(0)]),
        path: "messages[1]",
        reason: "must be plain JSON data, not a Date"
      },
      {
        name: "a throwing getter for the content",
        method: "addMessages",
        run: (memory) =>
          memory.addMessages("fuzz-c", [{
            role: "user",
            get content() {
              return boom()
            }
          }]),
        path: "messages[0].content",
        reason: unreadable
      },
      {
        name: "a throwing getter for the role",
        method: "addMessages",
        run: (memory) =>
          memory.addMessages("fuzz-c", [{
            get role() {
              return boom()
            },
            content: "hello"
          }]),
        path: "messages[0].role",
        reason: unreadable
      },
      {
        name: "metadata that is a Map",
        method: "addMessages",
        run: (memory) => memory.addMessages("fuzz-c", [{ ...user, metadata: new Map([["modelVariant", "mini"]]) }]),
        path: "messages[0].metadata",
        reason: "must be plain JSON data, not a Map"
      },
      {
        name: "metadata that is a proxy whose ownKeys trap throws",
        method: "addMessages",
        run: (memory) => memory.addMessages("fuzz-c", [{ ...user, metadata: new Proxy({}, { ownKeys: boom }) }]),
        path: "messages[0].metadata",
        reason: unreadable
      },
      {
        name: "a message that contains itself",
        method: "addMessages",
        run: (memory) => {
          const message: Record<string, unknown> = { ...user }
          message.metadata = { attributes: { self: message } }
          return memory.addMessages("fuzz-c", [message])
        },
        path: "messages[0].metadata.attributes.self",
        reason: "is a cyclic reference (an object that contains itself)"
      },
      {
        name: "options that are a proxy whose get trap throws",
        method: "getMessages",
        run: (memory) => memory.getMessages("fuzz-c", new Proxy({ limit: 5 }, { get: boom })),
        path: "options.limit",
        reason: unreadable
      },
      {
        name: "options that are a Date",
        method: "getMessages",
        run: (memory) => memory.getMessages("fuzz-c", new Date(0)),
        path: "options",
        reason: "must be plain JSON data, not a Date"
      },
      {
        name: "a conversation id that is a proxy whose traps all throw",
        method: "getMessages",
        run: (memory) =>
          memory.getMessages(
            new Proxy({}, { get: boom, ownKeys: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom })
          ),
        path: "conversationId",
        reason: "must be a string"
      },
      {
        name: "an awaitIdle conversation id that is a proxy whose traps all throw",
        method: "awaitIdle",
        run: (memory) =>
          memory.awaitIdle(
            new Proxy({}, { get: boom, ownKeys: boom, getPrototypeOf: boom, getOwnPropertyDescriptor: boom })
          ),
        path: "conversationId",
        reason: "must be a string"
      },
      {
        name: "a stats conversation id that contains itself",
        method: "stats",
        run: (memory) => {
          const id: Record<string, unknown> = {}
          id.self = id
          return memory.stats(id)
        },
        path: "conversationId",
        reason: "must be a string"
      },
      {
        name: "a conversation id nested 10,000 deep",
        method: "getMessages",
        run: (memory) => memory.getMessages(nestedObjects(10_000)),
        path: "conversationId",
        reason: "must be a string"
      }
    ]

    it.effect.each(hostileCalls)("$name is refused naming $path, never a defect", (testCase) =>
      Effect.gen(function*() {
        const { error } = yield* call(
          testCase.method,
          "fuzz-c",
          ["conversationId", "messages", "options"],
          testCase.run
        )
        assert.deepStrictEqual(
          error?._tag === "DataValidationError" ? { path: error.path, reason: error.reason } : error,
          { path: testCase.path, reason: testCase.reason }
        )
      }))

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

const NoopMemory = ChatMemory.layer.pipe(
  Layer.provideMerge(NoopStrategy.layer),
  Layer.provideMerge(ApproximateTokenCounter.layer),
  Layer.provideMerge(MemoryStore.layer)
)

/** Adds `messages` to a fresh conversation through the public service; the id, what it returned. */
const addFresh = (messages: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    const memory = untyped(yield* ChatMemoryService.ChatMemoryService)
    const id = `json-${randomUUID()}`
    const exit = yield* Effect.exit(memory.addMessages(id, messages))
    return { id, exit, memory }
  })

/** The metadata stored for the only message of conversation `id`. */
const storedMetadata = (id: string) =>
  Effect.gen(function*() {
    const memory = yield* ChatMemoryService.ChatMemoryService
    const [message] = yield* memory.getMessages(id)
    return message?.metadata
  })

describe("bad input: limits", () => {
  it.effect("32 levels of arrays and objects are accepted where JSON goes; 33 are not", () =>
    Effect.gen(function*() {
      for (const [name, placement] of Object.entries(placements)) {
        for (const make of [nestedObjects, nestedArrays]) {
          const accepted = yield* addFresh([placement.message(make(32))])
          assert.isTrue(Exit.isSuccess(accepted.exit), name)
          const refused = yield* addFresh([placement.message(make(33))])
          assert.isTrue(Exit.isFailure(refused.exit), name)
        }
      }
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("metadata of MaxMetadataLength characters as JSON is accepted; one more is refused", () =>
    Effect.gen(function*() {
      const frame = JSON.stringify({ attributes: { s: "" } }).length
      const withText = (length: number) => ({
        role: "user",
        content: "big",
        metadata: { attributes: { s: "x".repeat(length - frame) } }
      })
      const accepted = yield* addFresh([withText(MaxMetadataLength)])
      assert.isTrue(Exit.isSuccess(accepted.exit))
      const memory = untyped(yield* ChatMemoryService.ChatMemoryService)
      const refused = yield* Effect.flip(memory.addMessages("json-big", [withText(MaxMetadataLength + 1)]))
      assert.deepStrictEqual(refused._tag === "DataValidationError" && [refused.path, refused.reason], [
        "messages[0].metadata",
        `must be at most ${MaxMetadataLength} characters long as JSON`
      ])
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("more than MaxJsonValues values, however they are built, are refused as too large at once", () =>
    Effect.gen(function*() {
      // A shared sub-object at each of 30 levels: 60 objects, read as 2^30 values.
      let bomb: unknown = 0
      for (let i = 0; i < 30; i++) bomb = [bomb, bomb]
      for (const value of [bomb, Array.from({ length: MaxJsonValues }, () => 0)]) {
        const memory = untyped(yield* ChatMemoryService.ChatMemoryService)
        const error = yield* Effect.flip(memory.addMessages("json-large", [placements.attributes.message(value)]))
        assert.deepStrictEqual(error._tag === "DataValidationError" && [error.path, error.reason], [
          "messages[0]",
          `is too large: more than ${MaxJsonValues} values`
        ])
      }
    }).pipe(Effect.provide(NoopMemory)))
})

describe("bad input: documented transformations", () => {
  it.effect("getters and proxies that do not throw are read once each, and their values stored", () =>
    Effect.gen(function*() {
      let getterReads = 0
      const reads = new Map<PropertyKey, number>()
      const attributes = {
        get counted() {
          getterReads += 1
          return { n: 1 }
        },
        proxied: new Proxy({ a: 1, b: [2] }, {
          get: (target, key, receiver) => {
            reads.set(key, (reads.get(key) ?? 0) + 1)
            return Reflect.get(target, key, receiver)
          }
        })
      }
      const { exit, id } = yield* addFresh([{ role: "user", content: "hello", metadata: { attributes } }])
      assert.isTrue(Exit.isSuccess(exit))
      assert.strictEqual(getterReads, 1)
      assert.deepStrictEqual([...reads], [["a", 1], ["b", 1]])
      assert.deepStrictEqual(yield* storedMetadata(id), {
        attributes: { counted: { n: 1 }, proxied: { a: 1, b: [2] } }
      })
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("metadata is stored and returned in canonical form: jsonb key order, -0 as 0, no undefined", () =>
    Effect.gen(function*() {
      const shared = { s: 1 }
      const nullPrototype = Object.assign(Object.create(null), { z: 1, a: 2 })
      const metadata = {
        modelVariant: "mini",
        toolName: undefined,
        attributes: {
          zeta: -0,
          b: [-0, { y: 2, x: 1 }],
          "10": "ten",
          "2": "two",
          aa: shared,
          ab: shared,
          gone: undefined
        },
        isError: false
      }
      const { exit, id } = yield* addFresh([
        { role: "user", content: "hello", metadata },
        { role: "user", content: "null prototype", metadata: { attributes: { nullPrototype } } }
      ])
      const expected = {
        isError: false,
        attributes: { "2": "two", "10": "ten", b: [0, { x: 1, y: 2 }], aa: { s: 1 }, ab: { s: 1 }, zeta: 0 },
        modelVariant: "mini"
      }
      assert.isTrue(Exit.isSuccess(exit))
      if (Exit.isSuccess(exit)) {
        const [returned, second] = exit.value
        // addMessages returns what getMessages reads back: the canonical form.
        assert.strictEqual(JSON.stringify(Reflect.get(returned ?? {}, "metadata")), JSON.stringify(expected))
        assert.deepStrictEqual(Reflect.get(second ?? {}, "metadata"), { attributes: { nullPrototype: { a: 2, z: 1 } } })
      }
      const memory = yield* ChatMemoryService.ChatMemoryService
      const [first, other] = yield* memory.getMessages(id)
      assert.deepStrictEqual(first?.metadata, expected)
      assert.strictEqual(JSON.stringify(first?.metadata), JSON.stringify(expected))
      assert.isTrue(Object.is(first?.metadata.attributes?.zeta, 0))
      assert.isFalse(Object.hasOwn(first?.metadata ?? {}, "toolName"))
      // A shared (not cyclic) object is fine, and is stored twice.
      assert.notStrictEqual(first?.metadata.attributes?.aa, first?.metadata.attributes?.ab)
      assert.strictEqual(Object.getPrototypeOf(other?.metadata.attributes?.nullPrototype), Object.prototype)
    }).pipe(Effect.provide(NoopMemory)))
})

describe("bad input: stored values are copies", () => {
  it.effect("mutating the input after addMessages, or what it returned, changes nothing stored", () =>
    Effect.gen(function*() {
      const params = { q: "rice", filters: ["organic"] }
      const input = { role: "assistant", content: "", metadata: { toolCalls: [{ id: "c1", name: "search", params }] } }
      const { exit, id } = yield* addFresh([input])
      const before = yield* storedMetadata(id)
      params.filters.push("local")
      Reflect.set(params, "q", "beans")
      Reflect.set(input, "content", "changed")
      if (Exit.isSuccess(exit)) {
        const [returned] = exit.value
        const metadata: unknown = Reflect.get(returned ?? {}, "metadata")
        Reflect.set(metadata ?? {}, "modelVariant", "changed")
        Reflect.set(returned ?? {}, "content", "changed")
      }
      const memory = yield* ChatMemoryService.ChatMemoryService
      const [after] = yield* memory.getMessages(id)
      assert.deepStrictEqual(before, {
        toolCalls: [{ id: "c1", name: "search", params: { q: "rice", filters: ["organic"] } }]
      })
      assert.deepStrictEqual(after?.metadata, before)
      assert.strictEqual(after?.content, "")
    }).pipe(Effect.provide(NoopMemory)))

  it.effect("mutating what getMessages returned changes nothing stored", () =>
    Effect.gen(function*() {
      const { id } = yield* addFresh([{
        role: "user",
        content: "hello",
        metadata: { attributes: { list: [1, { n: 2 }] } }
      }])
      const memory = yield* ChatMemoryService.ChatMemoryService
      const [read] = yield* memory.getMessages(id)
      const list = read?.metadata.attributes?.list
      if (Array.isArray(list)) {
        Reflect.set(list, 0, 99)
        Reflect.set(list[1], "n", 99)
        list.push("added")
      }
      Reflect.set(read?.metadata.attributes ?? {}, "added", true)
      Reflect.set(read?.metadata ?? {}, "modelVariant", "changed")
      Reflect.set(read ?? {}, "content", "changed")
      const [again] = yield* memory.getMessages(id)
      assert.deepStrictEqual(again?.metadata, { attributes: { list: [1, { n: 2 }] } })
      assert.strictEqual(again?.content, "hello")
    }).pipe(Effect.provide(NoopMemory)))
})
