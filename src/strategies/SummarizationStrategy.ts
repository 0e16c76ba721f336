/**
 * The summarization strategy: a running summary of the older conversation, before the newest turns
 * verbatim, inside a token budget. A summarize skill folds the summary in the background.
 *
 * @since 0.1.0
 */
import { Effect, Layer, type Scope } from "effect"
import { type DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/internal/decode.js"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import * as Internal from "./internal/options.js"
import * as Producers from "./internal/summarizer/producers.js"
import { makeWith, type Ports } from "./internal/summarizing.js"

/**
 * The options of the strategy, also used by `HierarchicalStrategy`. They set the budget, K, view
 * and recall, the trigger, the summary's cap and mode, and the summarizer's retries, timeout,
 * breaker and concurrency.
 *
 * @since 0.2.0
 * @category schemas
 */
export const Options = Internal.Options

/**
 * The options as a caller gives them, durations as any `Duration.DurationInput`.
 *
 * @since 0.2.0
 * @category models
 */
export type SummarizationOptions = Internal.SummarizationInput

/**
 * The defaults: a budget of 3000 tokens, K of 3, the `full` view, lexical recall in a quarter of
 * the budget, watermarks at 0.9 and 0.25, a summary of at most 500 tokens, `incremental` folds.
 *
 * @since 0.2.0
 * @category constants
 */
export const defaults: SummarizationOptions = Internal.defaults

/** Everything the strategy needs from its environment. */
type Requirements = Ports | SkillService | TokenCounter

/**
 * Builds the strategy. Its background jobs and event stream live in the scope: closing it
 * interrupts every job.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Partial<SummarizationOptions> = {}
): Effect.Effect<MemoryManagementStrategy.Service, DataValidationError, Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* decode(Options, "SummarizationStrategy.make", "options")({
      ...defaults,
      ...Internal.withoutDeprecated(options)
    })
    const producer = yield* Producers.make(settings)
    return yield* makeWith(settings, producer, { name: "summarization", showFacts: false })
  })

/**
 * The summarization strategy as a layer. Invalid options fail its construction. Closing the layer
 * interrupts every background job.
 *
 * @example
 * ```ts
 * import { ChatMemory, SummarizationStrategy } from "effect-chat-memory"
 *
 * // A tighter budget and the cache-stable view, in a test memory.
 * export const Strategy = SummarizationStrategy.layer({ tokenBudget: 2000, kRawTurns: 4, view: "stable" })
 * export const TestMemory = ChatMemory.layerTest({ strategy: "summarization", tokenBudget: 2000, view: "stable" })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<SummarizationOptions> = {}
): Layer.Layer<MemoryManagementStrategy, DataValidationError, Requirements> =>
  Layer.scoped(MemoryManagementStrategy, make(options))
