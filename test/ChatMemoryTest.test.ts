/**
 * `ChatMemoryTest.layer` over a store of the test's choosing: a double that records what the memory
 * writes and fails on cue, whose own requirement the test provides, and a SQL store.
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Ref } from "effect"
import type { NewMessage } from "../src/domain/Message.js"
import { RepositoryError } from "../src/errors/RepositoryError.js"
import * as ChatMemoryTest from "../src/layers/ChatMemoryTest.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as Store from "../src/layers/store/Store.js"
import { ChatMemoryService } from "../src/services/ChatMemoryService.js"
import { RepositoryService } from "../src/services/RepositoryService.js"
import { pgliteRepository } from "./fixtures/pglite.js"

/** What the recording store received, and whether its next appends fail. */
class Recorder extends Context.Tag("test/ChatMemoryTest/Recorder")<Recorder, {
  readonly appended: Ref.Ref<ReadonlyArray<{ readonly conversationId: string; readonly roles: string }>>
  readonly failAppends: Ref.Ref<boolean>
}>() {
  static readonly layer = Layer.effect(
    Recorder,
    Effect.all({
      appended: Ref.make<ReadonlyArray<{ conversationId: string; roles: string }>>([]),
      failAppends: Ref.make(false)
    })
  )
}

const roles = (messages: ReadonlyArray<NewMessage>) => messages.map((message) => message.role).join(",")

/**
 * The in-memory store, with its appends recorded (and failed when the recorder says so, before
 * they reach the store, as a lost connection would). It needs a `Recorder`.
 */
const RecordingRepository: Layer.Layer<Store.Ports, never, Recorder> = Store.layer(
  Effect.gen(function*() {
    const recorder = yield* Recorder
    const inner = yield* MemoryStore.make
    return {
      ...inner,
      repository: RepositoryService.of({
        ...inner.repository,
        appendMessages: (conversationId, messages) =>
          Effect.gen(function*() {
            if (yield* Ref.get(recorder.failAppends)) {
              return yield* new RepositoryError({ operation: "appendMessages", conversationId, detail: "on cue" })
            }
            yield* Ref.update(recorder.appended, (all) => [...all, { conversationId, roles: roles(messages) }])
            return yield* inner.repository.appendMessages(conversationId, messages)
          })
      })
    }
  })
)

const TestMemory = ChatMemoryTest.layer({ strategy: "noop", store: RecordingRepository }).pipe(
  Layer.provideMerge(Recorder.layer)
)

describe("ChatMemoryTest with a repository of the test's choosing", () => {
  it.effect("the memory writes through the given store: each addMessages is one append", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const recorder = yield* Recorder
      yield* memory.addMessages("c", [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello!" }])
      yield* memory.addMessages("d", [{ role: "system", content: "Be brief." }])
      assert.deepStrictEqual(yield* Ref.get(recorder.appended), [
        { conversationId: "c", roles: "user,assistant" },
        { conversationId: "d", roles: "system" }
      ])
      // Reads go to the same store.
      assert.deepStrictEqual((yield* memory.getMessages("c")).map((message) => message.content), ["Hi", "Hello!"])
    }).pipe(Effect.provide(TestMemory)))

  it.effect("a store failure reaches the caller as a RepositoryError, and nothing is stored", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      const recorder = yield* Recorder
      yield* Ref.set(recorder.failAppends, true)
      const error = yield* Effect.flip(memory.addMessages("c", [{ role: "user", content: "Hi" }]))
      assert.deepStrictEqual([error._tag, error._tag === "RepositoryError" ? error.detail : undefined], [
        "RepositoryError",
        "on cue"
      ])
      assert.strictEqual((yield* Effect.flip(memory.getMessages("c")))._tag, "ConversationNotFoundError")
      assert.deepStrictEqual(yield* Ref.get(recorder.appended), [])
    }).pipe(Effect.provide(TestMemory)))

  it.effect("the default is a fresh in-memory store per build", () =>
    Effect.gen(function*() {
      const first = yield* Effect.provide(
        Effect.flatMap(ChatMemoryService, (memory) => memory.addMessages("c", [{ role: "user", content: "Hi" }])),
        ChatMemoryTest.layer()
      )
      const second = yield* Effect.provide(
        Effect.flatMap(ChatMemoryService, (memory) => memory.addMessages("c", [{ role: "user", content: "Hi" }])),
        ChatMemoryTest.layer()
      )
      assert.deepStrictEqual([first[0]?.seq, second[0]?.seq], [1, 1])
    }))

  it.effect("a SQL store: PGlite, its migrations run when the test memory is built", () =>
    Effect.gen(function*() {
      const memory = yield* ChatMemoryService
      yield* memory.addMessages("c", [{ role: "user", content: "Order ORD-7 ships Friday." }])
      const context = yield* memory.getContext("c")
      assert.deepStrictEqual(context.recent.map((message) => message.content), ["Order ORD-7 ships Friday."])
    }).pipe(Effect.provide(ChatMemoryTest.layer({ store: pgliteRepository() }))))
})
