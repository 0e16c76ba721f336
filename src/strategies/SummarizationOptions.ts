/**
 * The options of the summarizing strategies, with the defaults of DESIGN §6.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import type { MemoryManagementStrategy } from "../services/MemoryManagementStrategy.js"

const PositiveInt = Schema.Int.pipe(Schema.positive())

/**
 * Options of `SummarizationStrategy` (and the summarizing part of `HierarchicalStrategy`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Options = Schema.Struct({
  /** Turns always shown verbatim after the summary when they fit; at least 1. */
  kRawTurns: Schema.Int.pipe(Schema.between(1, 1000)),
  /** Tokens the context may take, leading system messages included. */
  promptTokenBudget: PositiveInt,
  /**
   * The explicit trigger of the chunked-summary design: a summarization is due when summary +
   * buffer tokens pass it. Unset (the default): the watermarks decide.
   */
  chunkSummarizeThreshold: Schema.optional(PositiveInt),
  /**
   * With `room = promptTokenBudget − summary cap − system tokens`: a summarization is due when the
   * unsummarized turns (more than K) pass `highWater × room`, leaving headroom while it runs.
   */
  highWater: Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1)),
  /** A summarization folds the oldest turns until at most `lowWater × room` (and at least K turns) stay unsummarized. */
  lowWater: Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThan(1)),
  /**
   * What the context shows after the summary: `full`, the newest turns that fit, whether or not
   * the summary covers them (the budget is always used); `stable`, every unsummarized turn (the
   * prompt only grows at its end between two folds, so a provider's prefix cache keeps hitting).
   */
  view: Schema.Literal("full", "stable"),
  /** Hard cap on the summary, in tokens. */
  summaryTokenCap: PositiveInt,
  /** `incremental` folds the summary with new turns; `full` re-summarizes the originals; `layered` keeps a summary per chunk. */
  mode: Schema.Literal("incremental", "full", "layered"),
  /** A summarization is also due when the buffer holds more than `threshold` messages; it then keeps about `target`. */
  messageTrigger: Schema.optional(
    Schema.Struct({ threshold: PositiveInt, target: Schema.NonNegativeInt }).pipe(
      Schema.filter((t) => t.target < t.threshold || { path: ["target"], message: "must be below threshold" })
    )
  ),
  /** Delete originals once summarized (leading system and summary messages are kept). */
  pruneSummarized: Schema.Boolean,
  /** Append each applied summary to the log as a `summary` message linked to its record. */
  summaryMessages: Schema.Boolean,
  /** When the summary is behind: serve the window now (`window`) or summarize first (`sync`). */
  lazyFallback: Schema.Literal("window", "sync"),
  /** The most tokens of turns one summarizer call reads. */
  summarizerInputLimit: PositiveInt,
  /** Retries of a failed skill call (retryable failures only). */
  retries: Schema.Int.pipe(Schema.between(0, 10)),
  /** The first retry's delay; each further one doubles it (with jitter). */
  retryBaseDelayMillis: Schema.NonNegativeInt,
  /** The longest one skill call may take. */
  skillTimeoutMillis: PositiveInt,
  /**
   * The summarizer's breaker: after this many summarizations in a row failed on the skill (each
   * after its retries), background summarizations stop calling it. Messages are still stored,
   * the summary waits, and contexts announce the turns it does not cover.
   */
  breakerFailures: Schema.Int.pipe(Schema.between(1, 1000)),
  /**
   * How long the breaker stays open; then the next summarization due is let through alone (the
   * others wait for its outcome), and its success closes the breaker.
   */
  breakerCooldownMillis: PositiveInt,
  /**
   * How many conversations this strategy summarizes at once in the background; the others wait
   * for a turn (holding no lock or connection meanwhile). It bounds the concurrent calls to the
   * summarizer model and the summarization locks held. If the store caps its lock holders
   * (`maxLockConnections`), keep this at most that cap, or the jobs beyond it find the lock busy.
   */
  summarizationConcurrency: Schema.Int.pipe(Schema.between(1, 1000)),
  /**
   * Recall for a context asked with a query: `lexical` (the default: full-text search of the
   * store, offline) adds the older turns that best match it; `hybrid` fuses that ranking with the
   * nearest messages by meaning (reciprocal rank fusion), from vectors an `@effect/ai`
   * `EmbeddingModel` computes in the background (the layer must find one in its context); `off`
   * ignores the query.
   */
  recall: Schema.Literal("off", "lexical", "hybrid"),
  /**
   * The name the `hybrid` vectors are stored under: the embedding model's (vectors of different
   * models are never compared). Change it when the model changes: the messages are embedded again.
   */
  embeddingModel: Schema.NonEmptyTrimmedString.pipe(Schema.maxLength(255)),
  /**
   * The longest a context waits for the search by meaning (the query's vector and the store's
   * scan of the conversation's vectors); past it, or when it fails, the context is served with
   * lexical recall and the failure is counted.
   */
  embeddingTimeoutMillis: PositiveInt,
  /** The share of the budget recalled turns may take from the recent turns (never their K). */
  recallTokenBudget: Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThan(1))
}).pipe(
  Schema.filter((o) => [
    o.summaryTokenCap < o.promptTokenBudget ||
    { path: ["summaryTokenCap"], message: "must be below promptTokenBudget" },
    !(o.pruneSummarized && o.mode === "full") ||
    { path: ["pruneSummarized"], message: "cannot be set in full mode, which re-reads the originals" },
    o.lowWater < o.highWater || { path: ["lowWater"], message: "must be below highWater" }
  ])
)

/**
 * @since 0.1.0
 * @category models
 */
export type SummarizationOptions = typeof Options.Type

/**
 * The defaults (DESIGN §6).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: SummarizationOptions = {
  kRawTurns: 3,
  promptTokenBudget: 3000,
  highWater: 0.9,
  lowWater: 0.25,
  view: "full",
  summaryTokenCap: 500,
  mode: "incremental",
  pruneSummarized: false,
  summaryMessages: false,
  lazyFallback: "window",
  summarizerInputLimit: 8000,
  retries: 3,
  retryBaseDelayMillis: 200,
  skillTimeoutMillis: 30_000,
  breakerFailures: 5,
  breakerCooldownMillis: 30_000,
  summarizationConcurrency: 16,
  recall: "lexical",
  embeddingModel: "text-embedding-3-small",
  embeddingTimeoutMillis: 2000,
  recallTokenBudget: 0.25
}

/**
 * The options with a conversation's overrides (budget, K, view) applied: what one context, or one
 * conversation's summarization, runs with.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withOverrides = (
  options: SummarizationOptions,
  overrides: MemoryManagementStrategy.ContextSettings | undefined
): SummarizationOptions => ({
  ...options,
  promptTokenBudget: overrides?.tokenBudget ?? options.promptTokenBudget,
  kRawTurns: overrides?.kRawTurns ?? options.kRawTurns,
  view: overrides?.view ?? options.view
})
