/**
 * The memory for a host's own tests: a fresh in-memory store, a scripted summarizer that records
 * its calls, the approximate token counter, and the strategy of your choice.
 *
 * @since 0.1.0
 */
import { Layer } from "effect"
import type { DataValidationError } from "../errors/DataValidationError.js"
import type { HierarchicalOptions } from "../strategies/HierarchicalStrategy.js"
import * as ChatMemory from "./ChatMemory.js"
import type * as ChatMemoryConfig from "./ChatMemoryConfig.js"
import * as ChatMemoryLive from "./ChatMemoryLive.js"
import * as ScriptedSkill from "./skills/ScriptedSkill.js"
import * as MemoryRepository from "./store/MemoryRepository.js"
import * as ApproximateTokenCounter from "./tokens/ApproximateTokenCounter.js"

/**
 * The options of the test memory: the strategy (`summarization` by default) and its knobs, and
 * the summarizer's script (deterministic default answers when left out).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends Partial<HierarchicalOptions> {
  readonly strategy?: ChatMemoryConfig.Strategy | undefined
  readonly script?: ScriptedSkill.ScriptedSkill.Script | undefined
}

/**
 * A fresh memory per build: provide it to each test (`Effect.provide(ChatMemoryTest.layer())`) so
 * that no state leaks between tests. Besides the services of `ChatMemoryLive`, it provides
 * `ScriptedSkill`, the log of the summarizer's calls.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Options = {}
): Layer.Layer<ChatMemoryLive.Services | ScriptedSkill.ScriptedSkill, DataValidationError> => {
  const { script, ...strategy } = options
  return ChatMemory.layer.pipe(
    Layer.provideMerge(ChatMemoryLive.layerStrategy(strategy)),
    Layer.provideMerge(ScriptedSkill.layer(script)),
    Layer.provideMerge(MemoryRepository.layer),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  )
}
