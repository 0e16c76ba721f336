/**
 * The memory under one name: its tag, the service's layer over its ports (`layer`, `layerWith`), the
 * whole memory from typed options (`layerLive`) or the environment (`layerConfig`), and a memory for
 * tests (`layerTest`). Optional peers (PGlite, the OpenAI client, gpt-tokenizer) load when a layer
 * that uses them is built.
 *
 * @since 0.1.0
 */
import * as ChatMemoryLive from "./ChatMemoryLive.js"
import * as ChatMemoryTest from "./ChatMemoryTest.js"
import * as Service from "./internal/service.js"

export {
  /**
   * The memory's tag: `yield* ChatMemory.ChatMemoryService` gives the service. Its laws are on
   * `ChatMemoryService.Service`.
   *
   * @since 0.1.0
   * @category tags
   */
  ChatMemoryService
} from "../services/ChatMemoryService.js"

export {
  /**
   * The user's operations: list a user's conversations, read and edit the user's facts, search the
   * user's history, erase the user. Its laws are on `UserMemoryService.Service`.
   *
   * @since 0.2.0
   * @category tags
   */
  UserMemoryService
} from "../services/UserMemoryService.js"

/**
 * The options of the service (`layerWith`).
 *
 * @since 0.1.0
 * @category models
 */
export type Options = Service.Options

/**
 * The service as a layer over the store, strategy and token counter, to compose by hand.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ApproximateTokenCounter, ChatMemory, ExtractiveSkill, MemoryStore, SummarizationStrategy } from "effect-chat-memory"
 *
 * // The service over a store, a strategy, a skill and a token counter, composed by hand.
 * export const MemoryLive = ChatMemory.layer.pipe(
 *   Layer.provideMerge(SummarizationStrategy.layer({ tokenBudget: 3000 })),
 *   Layer.provideMerge(ExtractiveSkill.layer),
 *   Layer.provideMerge(MemoryStore.layer),
 *   Layer.provideMerge(ApproximateTokenCounter.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Service.layer

/**
 * The service as a layer over its ports, with options. Invalid options fail its construction.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ApproximateTokenCounter, ChatMemory, MemoryStore, SlidingWindowStrategy } from "effect-chat-memory"
 *
 * // A longer message is refused with a DataValidationError naming `messages[i].content`.
 * export const MemoryLive = ChatMemory.layerWith({ maxMessageLength: 20_000 }).pipe(
 *   Layer.provideMerge(SlidingWindowStrategy.layer({ tokenBudget: 3000 })),
 *   Layer.provideMerge(MemoryStore.layer),
 *   Layer.provideMerge(ApproximateTokenCounter.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = Service.layerWith

/**
 * Everything the composed memory provides: the service and its parts (storage ports, strategy,
 * summarizer skill, token counter).
 *
 * @since 0.1.0
 * @category models
 */
export type Services = ChatMemoryLive.Services

/**
 * The whole memory from typed options (`ChatMemoryConfig.Options`). Each part left out takes its
 * default. An invalid setting fails with a `DataValidationError` naming it. A store that cannot be
 * opened fails with a `RepositoryError`. Closing the layer interrupts background work and closes
 * the store.
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 *
 * // Typed options instead of the environment: the hierarchical strategy on PostgreSQL.
 * export const MemoryLive = ChatMemory.layerLive({
 *   strategy: "hierarchical",
 *   tokenBudget: 4000,
 *   shutdownDrain: "10 seconds",
 *   store: { _tag: "postgres", url: Redacted.make("postgres://app:secret@localhost:5432/app") }
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerLive = ChatMemoryLive.layer

/**
 * The whole memory from the environment (`MEMORY_STRATEGY`, `MEMORY_STORE`, `DATABASE_URL`,
 * `OPENAI_API_KEY`…). An invalid variable fails with a `ConfigError` naming it. Given a `Config.Wrap`
 * of the options, it reads the app's own variables instead. `ChatMemoryConfig.configWith` gives
 * options in code, and the variables that would set them are not read.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 *
 * // The memory from the environment: MEMORY_STRATEGY, MEMORY_STORE, DATABASE_URL, OPENAI_API_KEY…
 * const program = Effect.gen(function*() {
 *   const memory = yield* ChatMemory.ChatMemoryService
 *   yield* memory.addMessages("c1", [{ role: "user", content: "My order is A-1001." }])
 *   const context = yield* memory.getContext("c1", { query: "which order?" })
 *   yield* Effect.log(`${context.tokenCount} tokens in context`)
 * })
 *
 * program.pipe(Effect.provide(ChatMemory.layerConfig()), NodeRuntime.runMain)
 * ```
 *
 * @example
 * ```ts
 * import { Config } from "effect"
 * import { ChatMemory, ChatMemoryConfig } from "effect-chat-memory"
 *
 * // The app's own variables: what it leaves out takes its default, and no other variable is read.
 * export const FromAppVariables = ChatMemory.layerConfig({
 *   strategy: Config.literal("summarization", "hierarchical")("APP_MEMORY_STRATEGY"),
 *   tokenBudget: Config.withDefault(Config.integer("APP_MEMORY_BUDGET"), 4000)
 * })
 *
 * // The environment table, with the store given in code.
 * export const InMemory = ChatMemory.layerConfig(ChatMemoryConfig.configWith({ store: { _tag: "memory" } }))
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = ChatMemoryLive.layerConfig

/**
 * A memory for a host's tests, fresh per build: an in-memory store (or your own store layer), a
 * scripted summarizer that records its calls (`ScriptedSkill`), the approximate token counter and
 * your choice of strategy. Provide it to each test.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory, ScriptedSkill } from "effect-chat-memory"
 *
 * // A small budget, so that older turns fold into the summary in the background.
 * const TestMemory = ChatMemory.layerTest({ strategy: "summarization", tokenBudget: 600, summaryTokenCap: 100 })
 *
 * const program = Effect.gen(function*() {
 *   const memory = yield* ChatMemory.ChatMemoryService
 *   for (let i = 1; i <= 12; i++) {
 *     yield* memory.addMessages("c1", [
 *       { role: "user", content: `Where is order A-${1000 + i}? `.repeat(4) },
 *       { role: "assistant", content: `Order A-${1000 + i} ships on day ${i}. `.repeat(4) }
 *     ])
 *   }
 *   // Waits for the background summaries: a test sees their result.
 *   yield* memory.awaitIdle("c1")
 *   const context = yield* memory.getContext("c1")
 *   const calls = yield* (yield* ScriptedSkill.ScriptedSkill).calls
 *   return { context, calls }
 * })
 *
 * Effect.runPromise(program.pipe(Effect.provide(TestMemory))).then(({ calls, context }) => {
 *   assert.notStrictEqual(context.summary, null)
 *   assert.strictEqual(context.turnsOmitted, 0)
 *   assert.ok(calls.length > 0)
 * })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = ChatMemoryTest.layer

/**
 * Faults on cue in the test memory (`failStore`, `failSummarizer`, `failEmbeddings`, `heal`).
 * `layerTest` provides it.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 *
 * // The app's handling of a store failure, tested with one line of setup.
 * const program = Effect.gen(function*() {
 *   yield* (yield* ChatMemory.TestFaults).failStore()
 *   const memory = yield* ChatMemory.ChatMemoryService
 *   return yield* Effect.flip(memory.addMessages("c1", [{ role: "user", content: "hi" }]))
 * })
 *
 * // In a test: `it.effect("…", () => program.pipe(Effect.provide(ChatMemory.layerTest())))`.
 * Effect.runPromise(program.pipe(Effect.provide(ChatMemory.layerTest()))).then((error) =>
 *   assert.strictEqual(error._tag, "RepositoryError")
 * )
 * ```
 *
 * @since 0.2.0
 * @category tags
 */
export const TestFaults = ChatMemoryTest.Faults

/**
 * `TestFaults` as a requirement, in the `R` of the effects and layers that use it. Its controls are
 * `Context.Tag.Service<typeof TestFaults>`.
 *
 * @since 0.2.0
 * @category models
 */
export type TestFaults = ChatMemoryTest.Faults
