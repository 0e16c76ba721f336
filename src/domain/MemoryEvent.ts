/**
 * The events the memory emits: what was added, shown, summarized and extracted, what failed, and
 * when a fallback served the context.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"

/**
 * Messages were stored.
 *
 * @since 0.1.0
 * @category schemas
 */
export class MessagesAdded extends Schema.TaggedClass<MessagesAdded>()("MessagesAdded", {
  conversationId: ConversationId,
  count: Schema.NonNegativeInt,
  lastSeq: Schema.NonNegativeInt
}) {}

/**
 * A context was assembled.
 *
 * @since 0.1.0
 * @category schemas
 */
export class ContextBuilt extends Schema.TaggedClass<ContextBuilt>()("ContextBuilt", {
  conversationId: ConversationId,
  strategy: Schema.String,
  tokenCount: Schema.NonNegativeInt,
  turnsShown: Schema.NonNegativeInt,
  turnsOmitted: Schema.NonNegativeInt,
  summaryTruncated: Schema.Boolean,
  /** Whether the model is told about the omitted turns. */
  omissionAnnounced: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Turns recalled for the query, and the tokens they take. */
  turnsRecalled: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 }),
  recalledTokens: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 }),
  /** Facts shown in the hierarchical strategy's facts block, 0 when there is none. */
  factsIncluded: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 }),
  /** Whether a summary is shown. */
  summaryIncluded: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** The cursor of the summary state shown: the highest seq it covers, 0 for none. */
  summarizedUpTo: Schema.optionalWith(Schema.NonNegativeInt, { default: () => 0 })
}) {}

/**
 * A summarization was applied: the summary now covers every message up to `toSeq`.
 *
 * @since 0.1.0
 * @category schemas
 */
export class Summarized extends Schema.TaggedClass<Summarized>()("Summarized", {
  conversationId: ConversationId,
  mode: Schema.String,
  fromSeq: Schema.Int,
  toSeq: Schema.Int,
  version: Schema.Int,
  turnsCompressed: Schema.NonNegativeInt,
  tokensBefore: Schema.NonNegativeInt,
  tokensAfter: Schema.NonNegativeInt,
  inputTokens: Schema.NonNegativeInt,
  outputTokens: Schema.NonNegativeInt,
  durationMs: Schema.NonNegativeInt,
  skillId: Schema.String,
  /** Whether the summary passed its cap even when asked again, so it was cut at a sentence. */
  summaryTruncated: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

/**
 * Facts were extracted and committed with a summarization of the hierarchical strategy. It says
 * how the facts changed, compared by key with the facts before. `removed` counts the facts the run
 * dropped, whether the model removed them or a cap did.
 *
 * @since 0.1.0
 * @category schemas
 */
export class FactsExtracted extends Schema.TaggedClass<FactsExtracted>()("FactsExtracted", {
  conversationId: ConversationId,
  /** The summary-state version that holds them, which is the summarization record's version. */
  version: Schema.Int,
  /** Facts whose key is new. */
  added: Schema.NonNegativeInt,
  /** Facts whose key was known and whose value or category changed. */
  updated: Schema.NonNegativeInt,
  /** Known facts whose key is gone. */
  removed: Schema.NonNegativeInt,
  /** The facts the conversation holds now. */
  total: Schema.NonNegativeInt,
  skillId: Schema.String
}) {}

/**
 * A summarization failed after its retries. The summary state is unchanged and nothing was lost.
 *
 * @since 0.1.0
 * @category schemas
 */
export class SummarizationFailed extends Schema.TaggedClass<SummarizationFailed>()("SummarizationFailed", {
  conversationId: ConversationId,
  /** The error's tag, e.g. `SkillExecutionError` or `RepositoryError`. */
  error: Schema.String,
  /** The error's message. It is never a secret: errors carry no credentials. */
  detail: Schema.String
}) {}

/**
 * The summarizer's breaker opened: `failures` calls in a row failed on the skill, after their
 * retries. Background summarizations, and the learning of what is known about users, stop calling
 * it for `retryInMillis`. Then one call is let through, and its success closes the breaker
 * (`SummarizerRecovered`). Messages are stored meanwhile, and contexts announce the turns the
 * waiting summary does not cover.
 *
 * @since 0.1.0
 * @category schemas
 */
export class SummarizerUnavailable extends Schema.TaggedClass<SummarizerUnavailable>()("SummarizerUnavailable", {
  /** The conversation whose summarization failed last. */
  conversationId: ConversationId,
  /** The skill that failed, as its error names it (e.g. `openai/summarize@5`). */
  skillId: Schema.String,
  /** Summarizations that failed in a row. */
  failures: Schema.Int.pipe(Schema.positive()),
  /** The last error's message. It is never a secret: errors carry no credentials. */
  detail: Schema.String,
  /** How long the summarizer is left alone before one call is let through. */
  retryInMillis: Schema.NonNegativeInt
}) {}

/**
 * A skill call succeeded while the summarizer's breaker was open. The breaker is closed again,
 * and the background jobs call the skill.
 *
 * @since 0.1.0
 * @category schemas
 */
export class SummarizerRecovered extends Schema.TaggedClass<SummarizerRecovered>()("SummarizerRecovered", {
  /** The conversation whose summarization succeeded. */
  conversationId: ConversationId
}) {}

/**
 * The context was served without a fresh summary, because the summary is behind
 * (`"summary-behind"`) or building it failed (`"failure"`).
 *
 * @since 0.1.0
 * @category schemas
 */
export class FallbackUsed extends Schema.TaggedClass<FallbackUsed>()("FallbackUsed", {
  conversationId: ConversationId,
  reason: Schema.Literal("summary-behind", "failure"),
  detail: Schema.String
}) {}

/**
 * A context was built with a query and recalled older turns for it.
 *
 * @since 0.1.0
 * @category schemas
 */
export class MemoryRecalled extends Schema.TaggedClass<MemoryRecalled>()("MemoryRecalled", {
  conversationId: ConversationId,
  /** The recalled turns, best first: seq range and score. */
  turns: Schema.Array(Schema.Struct({ fromSeq: Schema.Int, toSeq: Schema.Int, score: Schema.Number })),
  /** Tokens the recalled block takes in the context. */
  tokenCount: Schema.NonNegativeInt
}) {}

/**
 * Why an embedding for hybrid recall was unusable:
 *
 * - The model's call failed (`failed`), died (`defect`), was interrupted (`interrupted`) or took
 *   too long (`timeout`).
 * - It answered with another number of vectors than texts (`count`).
 * - A vector's length differs from the model's others (`dimension`).
 * - A vector holds a number that is not finite (`non-finite`).
 * - The store's scan of the vectors failed (`store`, queries only).
 */
const EmbeddingFaultReason = Schema.Literal(
  "failed",
  "defect",
  "interrupted",
  "timeout",
  "count",
  "dimension",
  "non-finite",
  "store"
)

type EmbeddingFaultReason = typeof EmbeddingFaultReason.Type

/**
 * The embedding model of hybrid recall failed, or answered with unusable vectors. No write or
 * context failed for it. A bad vector is never stored.
 *
 * - `stage: "query"`: a context's or `searchMemory`'s query had no usable vector, so recall was
 *   lexical for it. A search of a user's conversations made for none (`UserMemoryService.search`)
 *   is counted and logged instead.
 * - `stage: "index"`: a background batch failed, and its messages stay pending for a later write.
 *   Or some of its vectors were unusable, and those messages are found by their words only.
 *
 * @since 0.1.0
 * @category schemas
 */
export class EmbeddingFailed extends Schema.TaggedClass<EmbeddingFailed>()("EmbeddingFailed", {
  conversationId: ConversationId,
  stage: Schema.Literal("index", "query"),
  reason: EmbeddingFaultReason,
  /** The texts concerned: the batch's, the bad vectors' (`dimension`, `non-finite`), or the query's. */
  messages: Schema.NonNegativeInt,
  /** What went wrong, in one line. It is never a secret: errors carry no credentials. */
  detail: Schema.String
}) {}

/**
 * Every memory event.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemoryEvent = Schema.Union(
  MessagesAdded,
  ContextBuilt,
  Summarized,
  FactsExtracted,
  SummarizationFailed,
  SummarizerUnavailable,
  SummarizerRecovered,
  FallbackUsed,
  MemoryRecalled,
  EmbeddingFailed
)

/**
 * Any memory event.
 *
 * @since 0.1.0
 * @category models
 */
export type MemoryEvent = typeof MemoryEvent.Type
