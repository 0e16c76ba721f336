/**
 * The memory for a host's own tests: a fresh in-memory store (or the store layer of your choice), a scripted summarizer that records its calls, the approximate token counter, and the
 * strategy of your choice.
 *
 * @since 0.1.0
 */
import { Layer } from "effect"
import type { StrategyName } from "../domain/ConversationSettings.js"
import type { DataValidationError } from "../errors/DataValidationError.js"
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
 * A fresh memory per build: provide it to each test (`Effect.provide(ChatMemoryTest.layer())`) so
 * that no state leaks between tests. Besides the services of `ChatMemoryLive`, it provides
 * `ScriptedSkill`, the log of the summarizer's calls.
 *
 * @example
 * ```ts
 * // A store double of your own (any layer of the storage ports), here one that needs a `Recorder`
 * // (its requirement becomes the test memory's).
 * const TestMemory = ChatMemoryTest.layer({ strategy: "noop", store: RecordingRepository }).pipe(
 *   Layer.provideMerge(Recorder.layer)
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never, R = never>(
  options: Options<E, R> = {}
): Layer.Layer<ChatMemoryLive.Services | ScriptedSkill.ScriptedSkill, DataValidationError | E, R> => {
  const { script, store, ...strategy } = options
  return Service.layer.pipe(
    Layer.provideMerge(ChatMemoryLive.layerStrategy(strategy)),
    Layer.provideMerge(ScriptedSkill.layer(script)),
    Layer.provideMerge(store ?? MemoryStore.layer),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )
}
