/**
 * The summary state of a conversation and the record of each summarization run.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"
import { Fact } from "./Fact.js"

/**
 * One chunk summary of the `layered` mode: the summary of the messages `fromSeq..toSeq`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SummaryLayer = Schema.Struct({
  fromSeq: Schema.Int.pipe(Schema.positive()),
  toSeq: Schema.Int.pipe(Schema.positive()),
  text: Schema.String,
  tokenCount: Schema.NonNegativeInt
}).annotations({ identifier: "SummaryLayer" })

/**
 * A chunk summary, as the `SummaryLayer` schema decodes it.
 *
 * @since 0.1.0
 * @category models
 */
export type SummaryLayer = typeof SummaryLayer.Type

/**
 * What the memory knows of the older part of a conversation: a narrative and facts covering every
 * message up to `cursor` (`summarizedUpTo`). `version` counts the changes. The state changes only
 * by compare-and-set on (`cursor`, `version`).
 *
 * @since 0.1.0
 * @category schemas
 */
export class SummaryState extends Schema.Class<SummaryState>("SummaryState")({
  conversationId: ConversationId,
  narrative: Schema.String,
  facts: Schema.Array(Fact),
  /** The per-chunk summaries of the `layered` mode, oldest first (empty in other modes). */
  layers: Schema.Array(SummaryLayer),
  cursor: Schema.NonNegativeInt,
  version: Schema.NonNegativeInt,
  updatedAt: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/**
 * One applied summarization run: the seqs it covered, what it produced and what it cost. It is
 * identified by the conversation and the summary-state `version` it produced. A `summary` message
 * the run appended and its record name each other. The record holds the message's seq
 * (`summaryMessageSeq`), the message its record's version (`metadata.summaryMetadataId`).
 *
 * @since 0.1.0
 * @category schemas
 */
export class SummarizationRecord extends Schema.Class<SummarizationRecord>("SummarizationRecord")({
  conversationId: ConversationId,
  version: Schema.Int.pipe(Schema.positive()),
  fromSeq: Schema.Int.pipe(Schema.positive()),
  toSeq: Schema.Int.pipe(Schema.positive()),
  summary: Schema.String,
  /** Whether the summary this run produced had to be cut to the summary token cap. */
  summaryTruncated: Schema.Boolean,
  mode: Schema.String,
  skillId: Schema.String,
  model: Schema.NullOr(Schema.String),
  inputTokens: Schema.NonNegativeInt,
  outputTokens: Schema.NonNegativeInt,
  durationMs: Schema.NonNegativeInt,
  createdAt: Schema.DateTimeUtc,
  /**
   * The seq of the `summary` message the run appended. Null when it appended none, or when the
   * record predates this link.
   */
  summaryMessageSeq: Schema.optionalWith(Schema.NullOr(Schema.Int.pipe(Schema.positive())), {
    default: () => null
  })
}) {}
