/**
 * The hierarchical strategy: key/value facts, a running narrative and the newest turns verbatim,
 * inside a token budget. Facts and narrative are folded in the background by an extract-facts
 * skill and stored with the summary state.
 *
 * @since 0.1.0
 */
import { Effect, Layer, Schema, type Scope } from "effect"
import { DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/DataValidationError.js"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import type { RepositoryService } from "../services/RepositoryService.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import * as Hierarchical from "./internal/summarizer/hierarchical.js"
import { defaults as summarizationDefaults, Options, type SummarizationOptions } from "./SummarizationOptions.js"
import * as SummarizationStrategy from "./SummarizationStrategy.js"

/** Everything the strategy needs from its environment. */
type Requirements = RepositoryService | SkillService | TokenCounter

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * The options the hierarchical strategy adds to those of `SummarizationStrategy`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Extras = Schema.Struct({
  /** Hard cap on the narrative, in tokens; `summaryTokenCap` when absent. */
  maxNarrativeTokens: Schema.optional(PositiveInt),
  /** The most facts kept; past it, the facts untouched for longest are dropped. */
  maxFacts: Schema.Int.pipe(Schema.between(1, 1000)),
  /** Hard cap on the facts block, in tokens; `summaryTokenCap` when absent. */
  maxFactTokens: Schema.optional(PositiveInt)
})

/**
 * Options of the hierarchical strategy: those of `SummarizationStrategy` (whose `mode` is ignored:
 * the facts and narrative are always folded incrementally, each message read once) and `Extras`.
 *
 * @since 0.1.0
 * @category models
 */
export type HierarchicalOptions = SummarizationOptions & typeof Extras.Type

/**
 * The defaults: those of `SummarizationStrategy`, and at most 50 facts.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: HierarchicalOptions = { ...summarizationDefaults, maxFacts: 50 }

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
    return yield* SummarizationStrategy.makeWith(settings, producer, { name: "hierarchical", showFacts: true })
  })

const operation = "HierarchicalStrategy.make"

const decodeOptions = (
  options: Partial<HierarchicalOptions>
): Effect.Effect<Hierarchical.HierarchicalSettings, DataValidationError> =>
  Effect.gen(function*() {
    const { maxFactTokens, maxFacts, maxNarrativeTokens, ...rest } = { ...defaults, ...options }
    // The mode is not the hierarchical strategy's to choose: it always folds incrementally.
    const base = yield* decode(Options, operation, "options")({ ...rest, mode: "incremental" })
    const extras = yield* decode(Extras, operation, "options")({ maxFactTokens, maxFacts, maxNarrativeTokens })
    const narrativeCap = extras.maxNarrativeTokens ?? base.summaryTokenCap
    const factCap = extras.maxFactTokens ?? base.summaryTokenCap
    const tooLarge = narrativeCap >= base.promptTokenBudget
      ? "maxNarrativeTokens"
      : factCap >= base.promptTokenBudget
      ? "maxFactTokens"
      : undefined
    if (tooLarge !== undefined) {
      return yield* new DataValidationError({
        operation,
        path: `options.${tooLarge}`,
        reason: "must be below promptTokenBudget"
      })
    }
    return { ...base, maxFacts: extras.maxFacts, maxNarrativeTokens: narrativeCap, maxFactTokens: factCap }
  })

/**
 * The hierarchical strategy as a layer; invalid options fail its construction, and closing the
 * layer interrupts every background job.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<HierarchicalOptions> = {}
): Layer.Layer<MemoryManagementStrategy, DataValidationError, Requirements> =>
  Layer.scoped(MemoryManagementStrategy, make(options))
