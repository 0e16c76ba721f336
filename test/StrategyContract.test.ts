/**
 * Runs the strategy contract on every strategy: no-op, sliding window, summarization and hierarchical.
 */
import { Effect, Layer } from "effect"
import * as ChatMemory from "../src/layers/ChatMemory.js"
import { defaultSummary } from "../src/layers/skills/internal/scripted.js"
import * as ScriptedSkill from "../src/layers/skills/ScriptedSkill.js"
import * as MemoryStore from "../src/layers/store/MemoryStore.js"
import * as ApproximateTokenCounter from "../src/layers/tokens/ApproximateTokenCounter.js"
import * as HierarchicalStrategy from "../src/strategies/HierarchicalStrategy.js"
import * as NoopStrategy from "../src/strategies/NoopStrategy.js"
import * as SlidingWindowStrategy from "../src/strategies/SlidingWindowStrategy.js"
import { strategyContract } from "./contracts/StrategyContract.js"
import { memoryWith, summarizingMemory } from "./fixtures/layers.js"

strategyContract("noop", () => ({ layer: memoryWith(NoopStrategy.layer), tokenBudget: null, verbatimTurns: "all" }))

strategyContract("sliding-window", (settings) => ({
  layer: memoryWith(SlidingWindowStrategy.layer({ tokenBudget: settings.tokenBudget })),
  tokenBudget: settings.tokenBudget,
  verbatimTurns: "all"
}))

strategyContract("summarization", (settings) => ({
  layer: summarizingMemory({ ...settings, retries: 0 }),
  tokenBudget: settings.tokenBudget,
  verbatimTurns: settings.kRawTurns
}))

/**
 * An extractor that keeps the known facts and adds one per call, long enough that the facts block
 * soon reaches its cap; the narrative is the scripted default.
 */
const extractor: ScriptedSkill.ScriptedSkill.Script = {
  extractFacts: (input, call) =>
    Effect.succeed({
      facts: [
        ...input.existingFacts,
        { key: `topic_${call}`, value: `detail ${call} `.repeat(1 + (call % 5)).trim(), category: "GENERAL" }
      ],
      narrative: defaultSummary(input)
    })
}

strategyContract("hierarchical", ({ mode: _mode, ...settings }) => ({
  layer: ChatMemory.layer.pipe(
    Layer.provideMerge(HierarchicalStrategy.layer({ ...settings, retries: 0 })),
    Layer.provideMerge(ScriptedSkill.layer(extractor)),
    Layer.provideMerge(MemoryStore.layer),
    Layer.provideMerge(ApproximateTokenCounter.layer)
  ),
  tokenBudget: settings.tokenBudget,
  verbatimTurns: settings.kRawTurns
}))
