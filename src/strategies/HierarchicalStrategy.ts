/**
 * The hierarchical strategy: key/value facts, a running narrative and the newest turns verbatim,
 * inside a token budget. An extract-facts skill folds facts and narrative in the background, and
 * they are stored with the summary state. Folds are incremental, or in `full` mode extract again
 * from the original messages at each run.
 *
 * Incrementally, the facts and narrative share the preamble's room (the skill's `maxSharedTokens`).
 * The narrative takes what the facts leave. The offline skill keeps a fact beyond the newest of
 * its kind only when it carries more per token than the narrative's lines. With
 * `narrativeFold: "append"`, the default, a fold reads the narrative's latest lines and writes
 * after the earlier ones, so each message is read about once. `"rewrite"` reads and writes the
 * whole narrative at each fold.
 *
 * @since 0.1.0
 */
import { Effect, Layer, Schema, type Scope } from "effect"
import { DefaultMaxFacts } from "../domain/internal/facts.js"
import { DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/internal/decode.js"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import {
  defaults as summarizationDefaults,
  Options,
  type SummarizationInput,
  withoutDeprecated
} from "./internal/options.js"
import * as Hierarchical from "./internal/summarizer/hierarchical.js"
import { makeWith, type Ports } from "./internal/summarizing.js"

/** Everything the strategy needs from its environment. */
type Requirements = Ports | SkillService | TokenCounter

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * How an `incremental` fold treats the narrative: `append` its new lines after the earlier ones, or
 * `rewrite` the whole of it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NarrativeFold = Schema.Literal("append", "rewrite")

/**
 * The options the hierarchical strategy adds to those of `SummarizationStrategy`.
 */
const Extras = Schema.Struct({
  /**
   * The narrative's share of the preamble, in tokens; `summaryTokenCap` when absent. In
   * `incremental` mode the narrative also takes what the facts leave of `maxFactTokens`. The two
   * blocks as shown never pass `maxNarrativeTokens + maxFactTokens`. In `full` mode it is the
   * narrative's hard cap.
   */
  maxNarrativeTokens: Schema.optional(PositiveInt),
  /** The most facts kept; past it, the facts untouched for longest are dropped. */
  maxFacts: Schema.Int.pipe(Schema.between(1, 1000)),
  /** Hard cap on the facts block, in tokens; `summaryTokenCap` when absent. */
  maxFactTokens: Schema.optional(PositiveInt),
  /**
   * How an `incremental` fold treats the narrative. `append`, the default: the fold reads the
   * latest lines again with the new turns, and writes after the earlier lines, kept as written.
   * When room is short, the oldest lines leave first. A line with a number (an identifier, an
   * amount, a date) outlasts the plain lines of the older half. Each message is read about once.
   * `rewrite`: the fold reads and rewrites the whole narrative, so a skill may keep an old line
   * over a newer one. It costs reading the narrative at every fold.
   */
  narrativeFold: NarrativeFold
})

/**
 * Options of the hierarchical strategy: those of `SummarizationStrategy` and `Extras`. Its `mode`
 * is `incremental` or `full`; `layered` is refused. `incremental`, the default, folds the new turns
 * into the known facts and narrative, reading each message about once. `full` extracts the facts
 * and narrative again from the original messages at each run, in chunks of at most
 * `summarizerInputLimit` tokens.
 *
 * @since 0.1.0
 * @category models
 */
export type HierarchicalOptions = SummarizationInput & typeof Extras.Type

/**
 * The defaults: those of `SummarizationStrategy`, at most 50 facts, and folds that append to the
 * narrative.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: HierarchicalOptions = {
  ...summarizationDefaults,
  maxFacts: DefaultMaxFacts,
  narrativeFold: "append"
}

/**
 * Builds the strategy. Its background jobs and event stream live in the scope; closing it
 * interrupts every job.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Partial<HierarchicalOptions> = {}
): Effect.Effect<MemoryManagementStrategy.Service, DataValidationError, Requirements | Scope.Scope> =>
  Effect.gen(function*() {
    const settings = yield* decodeOptions(options)
    const producer = yield* Hierarchical.make(settings)
    return yield* makeWith(settings, producer, { name: "hierarchical", showFacts: true })
  })

const operation = "HierarchicalStrategy.make"

const decodeOptions = (
  options: Partial<HierarchicalOptions>
): Effect.Effect<Hierarchical.HierarchicalSettings, DataValidationError> =>
  Effect.gen(function*() {
    const { maxFactTokens, maxFacts, maxNarrativeTokens, narrativeFold, ...rest } = {
      ...defaults,
      ...withoutDeprecated(options)
    }
    const base = yield* decode(Options, operation, "options")(rest)
    // Facts cannot be merged across layers, which summarize chunks the next ones never see.
    if (base.mode === "layered") {
      return yield* new DataValidationError({
        operation,
        path: "options.mode",
        reason: "must be incremental or full for the hierarchical strategy"
      })
    }
    const extras = yield* decode(Extras, operation, "options")({
      maxFactTokens,
      maxFacts,
      maxNarrativeTokens,
      narrativeFold
    })
    const narrativeCap = extras.maxNarrativeTokens ?? base.summaryTokenCap
    const factCap = extras.maxFactTokens ?? base.summaryTokenCap
    const tooLarge = narrativeCap >= base.tokenBudget
      ? "maxNarrativeTokens"
      : factCap >= base.tokenBudget
      ? "maxFactTokens"
      : undefined
    if (tooLarge !== undefined) {
      return yield* new DataValidationError({
        operation,
        path: `options.${tooLarge}`,
        reason: "must be below tokenBudget"
      })
    }
    return {
      ...base,
      maxFacts: extras.maxFacts,
      maxNarrativeTokens: narrativeCap,
      maxFactTokens: factCap,
      narrativeFold: extras.narrativeFold
    }
  })

/**
 * The hierarchical strategy as a layer. Invalid options fail its construction. Closing the layer
 * interrupts every background job.
 *
 * @example
 * ```ts
 * import { ChatMemory } from "effect-chat-memory"
 *
 * // Facts kept apart from the narrative: ids, amounts, decisions and conditions survive every fold.
 * export const MemoryLive = ChatMemory.layerLive({ strategy: "hierarchical", maxFacts: 80, tokenBudget: 4000 })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<HierarchicalOptions> = {}
): Layer.Layer<MemoryManagementStrategy, DataValidationError, Requirements> =>
  Layer.scoped(MemoryManagementStrategy, make(options))
