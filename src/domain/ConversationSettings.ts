/**
 * Per-conversation settings: overrides of the memory's defaults that an application stores with
 * one conversation (a larger budget for one customer, the stable view for one agent).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The overrides of one conversation. Every field is optional: an absent field means "use the
 * layer's default", so the empty settings leave the conversation on the defaults.
 *
 * @since 0.1.0
 * @category schemas
 */
export class ConversationSettings extends Schema.Class<ConversationSettings>("ConversationSettings")({
  /** Tokens the context may take, leading system messages included. */
  tokenBudget: Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { exact: true }),
  /** Turns always shown verbatim after the summary when they fit. */
  kRawTurns: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 1000)), { exact: true }),
  /** What the context shows after the summary: the newest turns that fit, or every unsummarized turn. */
  view: Schema.optionalWith(Schema.Literal("full", "stable"), { exact: true })
}) {}

/**
 * The settings of a conversation that overrides nothing.
 *
 * @since 0.1.0
 * @category constants
 */
export const empty: ConversationSettings = new ConversationSettings({})

/**
 * Whether `settings` override nothing.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isEmpty = (settings: ConversationSettings): boolean =>
  settings.tokenBudget === undefined && settings.kRawTurns === undefined && settings.view === undefined
