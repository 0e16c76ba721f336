/**
 * The memory for a host's own tests: a fresh in-memory store (or the store layer of your choice), a scripted summarizer that records its calls, the approximate token counter, and the
 * strategy of your choice.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, Ref } from "effect"
import type { StrategyName } from "../domain/ConversationSettings.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
import { RepositoryError } from "../errors/RepositoryError.js"
import { SkillExecutionError } from "../errors/SkillExecutionError.js"
import { RepositoryService } from "../services/RepositoryService.js"
import { SkillService } from "../services/SkillService.js"
import type { HierarchicalOptions } from "../strategies/HierarchicalStrategy.js"
import * as ChatMemoryLive from "./ChatMemoryLive.js"
import * as Service from "./internal/service.js"
import * as ScriptedSkill from "./skills/ScriptedSkill.js"
import * as MemoryStore from "./store/MemoryStore.js"
import type * as Store from "./store/Store.js"
import * as ApproximateTokenCounter from "./tokens/ApproximateTokenCounter.js"

/**
 * The options of the test memory: the strategy (`summarization` by default) and its knobs, the
 * summarizer's script (deterministic default answers when left out), and the store.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<E = never, R = never> extends Partial<HierarchicalOptions> {
  readonly strategy?: StrategyName | undefined
  readonly script?: ScriptedSkill.ScriptedSkill.Script | undefined
  /**
   * The store: a fresh `MemoryStore` by default. Any layer that provides the storage ports
   * (`Store.Ports`) goes: a double that records calls or fails on cue (`Store.layer` builds one
   * from its parts), a SQL store. Its error and requirements become the test memory's.
   */
  readonly store?: Layer.Layer<Store.Ports, E, R> | undefined
}

/**
 * Faults on cue, for a host's tests of its own error handling: from `failStore` on, the store's
 * calls fail with a `RepositoryError`; from `failSummarizer` on, the summarizer's calls fail with a
 * `SkillExecutionError`; `heal` ends both. The test memory provides it.
 *
 * @example
 * ```ts
 * import { assert, it } from "@effect/vitest"
 * import { Effect } from "effect"
 * import { ChatMemory } from "effect-chat-memory"
 *
 * it.effect("a failing store is reported to the user", () =>
 *   Effect.gen(function*() {
 *     yield* (yield* ChatMemory.TestFaults).failStore()
 *     const memory = yield* ChatMemory.ChatMemoryService
 *     const error = yield* Effect.flip(memory.addMessages("c1", [{ role: "user", content: "hi" }]))
 *     assert.strictEqual(error._tag, "RepositoryError")
 *   }).pipe(Effect.provide(ChatMemory.layerTest())))
 * ```
 *
 * @since 0.2.0
 * @category tags
 */
export class Faults extends Context.Tag("effect-chat-memory/ChatMemoryTest/Faults")<Faults, {
  /**
   * From now on, the store's calls fail with a `RepositoryError` whose `operation` is the call's
   * (`appendMessages`, `readWindow`, …): every call, or those of `operations` only.
   */
  readonly failStore: (options?: { readonly operations?: ReadonlyArray<string> | undefined }) => Effect.Effect<void>
  /** From now on, the summarizer's calls fail with a `SkillExecutionError` (`Unavailable`, retryable). */
  readonly failSummarizer: Effect.Effect<void>
  /** Ends every fault: the calls after it succeed again. */
  readonly heal: Effect.Effect<void>
}>() {}

interface Armed {
  /** The store's operations that fail: all of them (`true`), or those named. */
  readonly store: boolean | ReadonlySet<string>
  readonly summarizer: boolean
}

const makeFaults = Effect.map(Ref.make<Armed>({ store: false, summarizer: false }), (armed) => ({
  armed,
  faults: Faults.of({
    failStore: (options) =>
      Ref.update(armed, (a) => ({
        ...a,
        store: options?.operations === undefined ? true : new Set(options.operations)
      })),
    failSummarizer: Ref.update(armed, (a) => ({ ...a, summarizer: true })),
    heal: Ref.set(armed, { store: false, summarizer: false })
  })
}))

/** Fails with the store's error when `operation` is armed. */
const storeCheck = (armed: Ref.Ref<Armed>) => (operation: string, conversationId?: string) =>
  Effect.flatMap(Ref.get(armed), ({ store }) =>
    store === true || (store !== false && store.has(operation))
      ? Effect.fail(new RepositoryError({ operation, conversationId, detail: "a fault set by the test" }))
      : Effect.void)

/** The store's repository, each call failing on cue. */
const faultyRepository = (
  inner: RepositoryService.Service,
  armed: Ref.Ref<Armed>
): RepositoryService.Service => {
  const check = storeCheck(armed)
  return RepositoryService.of({
    appendMessages: (id, messages, options) =>
      Effect.zipRight(check("appendMessages", id), inner.appendMessages(id, messages, options)),
    getConversation: (id) => Effect.zipRight(check("getConversation", id), inner.getConversation(id)),
    listMessages: (id, query) => Effect.zipRight(check("listMessages", id), inner.listMessages(id, query)),
    countMessages: (id, query) => Effect.zipRight(check("countMessages", id), inner.countMessages(id, query)),
    readWindow: (id, query) => Effect.zipRight(check("readWindow", id), inner.readWindow(id, query)),
    readTurns: (id, query) => Effect.zipRight(check("readTurns", id), inner.readTurns(id, query)),
    deleteConversation: (id) => Effect.zipRight(check("deleteConversation", id), inner.deleteConversation(id))
  })
}

/** The summarizer, each call failing on cue. */
const faultySkill = (inner: SkillService.Service, armed: Ref.Ref<Armed>): SkillService.Service => {
  const check = (skillId: string) =>
    Effect.flatMap(Ref.get(armed), ({ summarizer }) =>
      summarizer
        ? Effect.fail(
          new SkillExecutionError({
            skillId,
            reason: "Unavailable",
            retryable: true,
            detail: "a fault set by the test"
          })
        )
        : Effect.void)
  return SkillService.of({
    summarize: (input) => Effect.zipRight(check("scripted/summarize@1"), inner.summarize(input)),
    extractFacts: (input) => Effect.zipRight(check("scripted/extract-facts@1"), inner.extractFacts(input))
  })
}

/**
 * A fresh memory per build: provide it to each test (`Effect.provide(ChatMemoryTest.layer())`) so
 * that no state leaks between tests. Besides the services of `ChatMemoryLive`, it provides
 * `ScriptedSkill`, the log of the summarizer's calls, and `Faults`, which makes the store or the
 * summarizer fail on cue.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatMemory, MemoryStore, Store } from "effect-chat-memory"
 *
 * // A store double of your own: any layer of the storage ports, here the in-memory store whose
 * // reads of the window are counted.
 * let windowReads = 0
 * const CountingStore = Store.layer(Effect.map(MemoryStore.make, (store) => ({
 *   ...store,
 *   repository: {
 *     ...store.repository,
 *     readWindow: (id, query) => Effect.zipRight(Effect.sync(() => windowReads++), store.repository.readWindow(id, query))
 *   }
 * })))
 *
 * export const TestMemory = ChatMemory.layerTest({ strategy: "noop", store: CountingStore })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never, R = never>(
  options: Options<E, R> = {}
): Layer.Layer<ChatMemoryLive.Services | ScriptedSkill.ScriptedSkill | Faults, DataValidationError | E, R> => {
  const { script, store, ...strategy } = options
  return Layer.unwrapEffect(Effect.map(makeFaults, ({ armed, faults }) => {
    const faultyStore = Layer.effectContext(Effect.gen(function*() {
      const ports = yield* Effect.context<Store.Ports>()
      return Context.add(ports, RepositoryService, faultyRepository(Context.get(ports, RepositoryService), armed))
    })).pipe(Layer.provide(store ?? MemoryStore.layer))
    const faultySkills = Layer.effectContext(Effect.gen(function*() {
      const skills = yield* Effect.context<SkillService | ScriptedSkill.ScriptedSkill>()
      return Context.add(skills, SkillService, faultySkill(Context.get(skills, SkillService), armed))
    })).pipe(Layer.provide(ScriptedSkill.layer(script)))
    return Service.layer.pipe(
      Layer.provideMerge(ChatMemoryLive.layerStrategy(strategy)),
      Layer.provideMerge(faultySkills),
      Layer.provideMerge(faultyStore),
      Layer.provideMerge(ApproximateTokenCounter.layer),
      Layer.provideMerge(Layer.succeed(Faults, faults))
    )
  }))
}
