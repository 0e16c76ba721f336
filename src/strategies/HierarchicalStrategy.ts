/**
 * The hierarchical strategy: key/value facts, a running narrative and the newest turns verbatim,
 * inside a token budget. Facts and narrative are folded in the background by an extract-facts
 * skill and stored with the summary state: incrementally (the known facts and narrative with the
 * new turns), or, in `full` mode, extracted again from the original messages at each run.
 * Incrementally, the facts and the narrative share the preamble's room (`maxSharedTokens` of the
 * skill's input): the narrative takes what the facts leave, and the offline skill keeps a fact
 * beyond the newest of its kind only where it carries more per token than the narrative's lines.
 * A fold reads the narrative's latest lines and writes after the earlier ones, which are kept as
 * written, the oldest leaving first (a line with a number outlasts the plain ones of the older
 * half; `narrativeFold: "append"`, the default), so that each message is read about once;
 * `"rewrite"` reads and writes the whole narrative at each fold.
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
   * `incremental` mode the narrative also takes what the facts leave of `maxFactTokens`: the two
   * blocks as shown never pass `maxNarrativeTokens + maxFactTokens` together. In `full` mode it is
   * the narrative's hard cap.
   */
  maxNarrativeTokens: Schema.optional(PositiveInt),
  /** The most facts kept; past it, the facts untouched for longest are dropped. */
  maxFacts: Schema.Int.pipe(Schema.between(1, 1000)),
  /** Hard cap on the facts block, in tokens; `summaryTokenCap` when absent. */
  maxFactTokens: Schema.optional(PositiveInt),
  /**
   * How an `incremental` fold treats the narrative. `append` (the default): the fold reads the
   * narrative's latest lines again with the new turns, and what it writes follows the earlier
   * lines, kept as they were written; when the room is short, the oldest lines leave first, but
   * a line that carries a number (an identifier, an amount, a date) outlasts the plain lines of
   * the older half. Each message is read about once. `rewrite`: the fold reads the whole
   * narrative again and writes it anew, so a skill may keep an old line over a newer one, at the
   * cost of reading the narrative at every fold.
   */
  narrativeFold: NarrativeFold
})

/**
 * Options of the hierarchical strategy: those of `SummarizationStrategy` and `Extras`. Its `mode`
 * is `incremental` (the default: the known facts and the narrative, or its latest lines, are
 * folded with the new turns, each message read about once) or `full` (each run extracts the facts
 * and the narrative again from the original messages, up to the new cursor, in chunks of at most
 * `summarizerInputLimit` tokens: never from an earlier narrative); `layered` is refused.
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
 * Builds the strategy. Its background jobs and event stream live in the scope: closing it
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
    // Layers are summaries of chunks the next ones never see: facts could not be merged across them.
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
 * The hierarchical strategy as a layer; invalid options fail its construction, and closing the
 * layer interrupts every background job.
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
