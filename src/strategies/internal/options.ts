/**
 * The options of the summarizing strategies, and their defaults.
 *
 * @since 0.1.0
 */
import { Duration, Schema } from "effect"
import * as ContextSettings from "../../domain/ContextSettings.js"
import { NonNegativeDuration, PositiveDuration } from "../../domain/internal/duration.js"

const PositiveInt = Schema.Int.pipe(Schema.positive()).annotations({ description: "a positive integer" })

/**
 * The explicit trigger: a summarization is due when summary and buffer tokens pass it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ChunkSummarizeThreshold = PositiveInt

/**
 * The share of the room for turns past which the unsummarized turns trigger a fold.
 *
 * @since 0.1.0
 * @category schemas
 */
export const HighWater = Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1)).annotations({
  description: "a share above 0, at most 1"
})

/**
 * The share of the room for turns a fold leaves unsummarized at most.
 *
 * @since 0.1.0
 * @category schemas
 */
export const LowWater = Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThan(1)).annotations({
  description: "a share from 0 to below 1"
})

/**
 * Hard cap on the summary, in tokens.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SummaryTokenCap = PositiveInt

/**
 * `incremental` folds the summary with new turns; `full` re-summarizes the originals; `layered`
 * keeps a summary per chunk.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SummaryMode = Schema.Literal("incremental", "full", "layered")

/**
 * How many conversations a strategy summarizes at once in the background.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SummarizationConcurrency = Schema.Int.pipe(Schema.between(1, 1000)).annotations({
  description: "an integer from 1 to 1000"
})

/**
 * Options of `SummarizationStrategy` (and the summarizing part of `HierarchicalStrategy`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Options = Schema.Struct({
  /** The budget, K, view and recall (`ContextSettings`). */
  ...ContextSettings.ContextSettings.fields,
  /**
   * The explicit trigger: a summarization is due when summary and buffer tokens pass it. Unset,
   * the default, the watermarks decide.
   */
  chunkSummarizeThreshold: Schema.optional(ChunkSummarizeThreshold),
  /**
   * A summarization is due when more than K unsummarized turns pass `highWater × room`, leaving
   * headroom while it runs. `room` is `tokenBudget − summary cap − system tokens`.
   */
  highWater: HighWater,
  /** A summarization folds the oldest turns until at most `lowWater × room`, and at least K turns, stay. */
  lowWater: LowWater,
  /** Hard cap on the summary, in tokens. */
  summaryTokenCap: SummaryTokenCap,
  /** `incremental` folds the summary with new turns. `full` re-summarizes the originals. `layered` keeps a summary per chunk. */
  mode: SummaryMode,
  /** A summarization is also due past `threshold` buffered messages. It then keeps about `target`. */
  messageTrigger: Schema.optional(
    Schema.Struct({ threshold: PositiveInt, target: Schema.NonNegativeInt }).pipe(
      Schema.filter((t) => t.target < t.threshold || { path: ["target"], message: "must be below threshold" })
    )
  ),
  /** Delete originals once summarized. Leading system and summary messages are kept. */
  pruneSummarized: Schema.Boolean,
  /** Append each applied summary to the log as a `summary` message linked to its record. */
  summaryMessages: Schema.Boolean,
  /** When the summary is behind: serve the window now (`window`) or summarize first (`sync`). */
  lazyFallback: Schema.Literal("window", "sync"),
  /** The most tokens of turns one summarizer call reads. */
  summarizerInputLimit: PositiveInt,
  /** Retries of a skill call that failed with a retryable error. */
  retries: Schema.Int.pipe(Schema.between(0, 10)),
  /** The first retry's delay. Each further one doubles it, with jitter. */
  retryBaseDelay: NonNegativeDuration,
  /** The longest one skill call may take. */
  skillTimeout: PositiveDuration,
  /**
   * The summarizer's breaker. After this many summarizations in a row fail on the skill, each
   * after its retries, background summarizations stop calling it. Messages are still stored, the
   * summary waits, and contexts announce the turns it does not cover.
   */
  breakerFailures: Schema.Int.pipe(Schema.between(1, 1000)),
  /**
   * How long the breaker stays open. Then the next due summarization goes through alone while the
   * others wait, and its success closes the breaker.
   */
  breakerCooldown: PositiveDuration,
  /**
   * How many conversations this strategy summarizes at once in the background, and as many for
   * each other background job: learning what is known about users, and embedding messages with
   * hybrid recall. The others wait their turn, holding no lock or connection. It bounds the
   * summarization locks held. If the store caps its lock holders (`maxLockConnections`), keep this
   * at most that cap, or jobs beyond it find the lock busy.
   */
  summarizationConcurrency: SummarizationConcurrency,
  /**
   * How long closing the strategy waits for background summarizations in flight before it
   * interrupts them: a graceful drain for rolling deploys. Zero, the default, interrupts them at
   * once. Those interrupted are logged at Info. A summary resumes on its conversation's next write,
   * what is known about a user on the user's next write.
   */
  shutdownDrain: NonNegativeDuration
}).pipe(
  Schema.filter((o) => [
    o.summaryTokenCap < o.tokenBudget ||
    { path: ["summaryTokenCap"], message: "must be below tokenBudget" },
    !(o.pruneSummarized && o.mode === "full") ||
    { path: ["pruneSummarized"], message: "cannot be set in full mode, which re-reads the originals" },
    o.lowWater < o.highWater || { path: ["lowWater"], message: "must be below highWater" }
  ])
)

/** The options as the strategy holds them: durations decoded. */
export type SummarizationOptions = typeof Options.Type

/**
 * The options as a caller gives them: durations as any `Duration.DurationInput`, and the
 * deprecated millisecond names.
 */
export type SummarizationInput = typeof Options.Encoded & {
  /** @deprecated Use `retryBaseDelay`. */
  readonly retryBaseDelayMillis?: number | undefined
  /** @deprecated Use `skillTimeout`. */
  readonly skillTimeoutMillis?: number | undefined
  /** @deprecated Use `breakerCooldown`. */
  readonly breakerCooldownMillis?: number | undefined
}

/** The input with the deprecated millisecond names read as their durations. */
export const withoutDeprecated = <A extends Partial<SummarizationInput>>(
  input: A
): Omit<A, "retryBaseDelayMillis" | "skillTimeoutMillis" | "breakerCooldownMillis"> => {
  const { breakerCooldownMillis, retryBaseDelayMillis, skillTimeoutMillis, ...rest } = input
  return {
    ...rest,
    ...(retryBaseDelayMillis === undefined || rest.retryBaseDelay !== undefined
      ? {}
      : { retryBaseDelay: retryBaseDelayMillis }),
    ...(skillTimeoutMillis === undefined || rest.skillTimeout !== undefined
      ? {}
      : { skillTimeout: skillTimeoutMillis }),
    ...(breakerCooldownMillis === undefined || rest.breakerCooldown !== undefined
      ? {}
      : { breakerCooldown: breakerCooldownMillis })
  }
}

/**
 * The defaults.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: SummarizationOptions = {
  ...ContextSettings.defaults,
  highWater: 0.9,
  lowWater: 0.25,
  summaryTokenCap: 500,
  mode: "incremental",
  pruneSummarized: false,
  summaryMessages: false,
  lazyFallback: "window",
  summarizerInputLimit: 8000,
  retries: 3,
  retryBaseDelay: Duration.millis(200),
  skillTimeout: Duration.seconds(30),
  breakerFailures: 5,
  breakerCooldown: Duration.seconds(30),
  summarizationConcurrency: 16,
  shutdownDrain: Duration.zero
}
