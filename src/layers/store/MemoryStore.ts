/**
 * The in-memory store: a real implementation of every storage port (`Store.Ports`) over one `Ref`.
 * It serves tests, embedded use, and hosts' own tests.
 *
 * @since 0.1.0
 */
import { Effect, type Layer } from "effect"
import * as Conversations from "./internal/memory/conversations.js"
import * as Lease from "./internal/memory/lease.js"
import * as MessageIndex from "./internal/memory/messageIndex.js"
import * as Settings from "./internal/memory/settings.js"
import * as State from "./internal/memory/state.js"
import * as Summaries from "./internal/memory/summaries.js"
import * as Users from "./internal/memory/users.js"
import * as Store from "./Store.js"

/**
 * Builds an empty in-memory store whose ports share the same data.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Store.Store> = Effect.gen(function*() {
  const state = yield* State.make
  return {
    repository: Conversations.make(state),
    summaries: Summaries.make(state),
    settings: Settings.make(state),
    index: MessageIndex.make(state),
    lease: yield* Lease.make,
    users: Users.make(state)
  }
})

/**
 * A fresh, empty in-memory store per build, providing every storage port.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ApproximateTokenCounter, ChatMemory, MemoryStore, NoopStrategy, Store } from "effect-chat-memory"
 *
 * const memoryOver = (store: Layer.Layer<Store.Ports>) =>
 *   ChatMemory.layer.pipe(
 *     Layer.provideMerge(NoopStrategy.layer),
 *     Layer.provideMerge(store),
 *     Layer.provideMerge(ApproximateTokenCounter.layer)
 *   )
 *
 * // `MemoryStore.layer` is a fresh store per build. One store shared by two memories (as two
 * // processes share a database): build it once, then provide it as a value.
 * const program = Effect.gen(function*() {
 *   const store = Store.layerFrom(yield* MemoryStore.make)
 *   const add = Effect.flatMap(ChatMemory.ChatMemoryService, (memory) =>
 *     memory.addMessages("c1", [{ role: "user", content: "hello" }]))
 *   const read = Effect.flatMap(ChatMemory.ChatMemoryService, (memory) => memory.getMessages("c1"))
 *   yield* add.pipe(Effect.provide(memoryOver(store)))
 *   return yield* read.pipe(Effect.provide(memoryOver(store)))
 * })
 *
 * Effect.runPromise(program).then((messages) =>
 *   assert.deepStrictEqual(messages.map((message) => message.content), ["hello"])
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<Store.Ports> = Store.layer(make)
