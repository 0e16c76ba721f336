/**
 * The summarization strategy: a running summary of the older conversation, folded in the
 * background by a summarize skill, in front of the newest turns verbatim, inside a token budget.
 *
 * @since 0.1.0
 */
import { Effect, Layer, type Scope } from "effect"
import type { DataValidationError } from "../errors/DataValidationError.js"
import { decode } from "../errors/DataValidationError.js"
import { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"
import type { RepositoryService } from "../services/RepositoryService.js"
import type { SkillService } from "../services/SkillService.js"
import type { TokenCounter } from "../services/TokenCounter.js"
import * as Producers from "./internal/summarizer/producers.js"
import { makeSummarizing } from "./internal/summarizing.js"
import { defaults, Options, type SummarizationOptions } from "./SummarizationOptions.js"

/** Everything the strategy needs from its environment. */
type Requirements = RepositoryService | SkillService | TokenCounter

const producers = { incremental: Producers.incremental, full: Producers.full, layered: Producers.layered } as const

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
  Effect.flatMap(decodeOptions(options), (settings) =>
    makeSummarizing({
      name: "summarization",
      span: "SummarizationStrategy.buildContext",
      settings,
      showFacts: false,
      summarizer: {
        settings: {
          ...settings,
          retryBaseDelay: settings.retryBaseDelayMillis,
          skillTimeout: settings.skillTimeoutMillis,
          foldsExistingSummary: settings.mode === "incremental",
          chunksItself: settings.mode === "full"
        },
        produce: producers[settings.mode]
      }
    }))

const decodeOptions = (options: Partial<SummarizationOptions>) =>
  decode(Options, "SummarizationStrategy.make", "options")({ ...defaults, ...options })

/**
 * The summarization strategy as a layer; invalid options fail its construction, and closing the
 * layer interrupts every background job.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<SummarizationOptions> = {}
): Layer.Layer<MemoryManagementStrategy, DataValidationError, Requirements> =>
  Layer.scoped(MemoryManagementStrategy, make(options))
