/**
 * The settings a context is built with, one name and one schema each. Calls, stored conversation
 * settings, strategy options and the configuration all use them.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Tokens the context may take, leading system messages included.
 */
const TokenBudget = Schema.Int.pipe(Schema.positive()).annotations({ description: "a positive integer" })

/**
 * Turns always shown verbatim after the summary when they fit (K).
 */
const KRawTurns = Schema.Int.pipe(Schema.between(1, 1000)).annotations({
  description: "an integer from 1 to 1000"
})

/**
 * What the context shows after the summary. `full` shows the newest turns that fit, covered by the
 * summary or not, so the budget is always used. `stable` shows every unsummarized turn. Between
 * two folds its prompt only grows at the end, so a provider's prefix cache keeps hitting.
 */
const View = Schema.Literal("full", "stable")

type View = typeof View.Type

/**
 * Recall for a context asked with a query. `lexical` adds the older turns that best match it, by
 * the store's full-text search, offline. `hybrid` fuses that ranking with the nearest messages by
 * meaning, from an `@effect/ai` `EmbeddingModel`'s vectors. `off` ignores the query.
 */
const RecallMode = Schema.Literal("off", "lexical", "hybrid")

type RecallMode = typeof RecallMode.Type

/**
 * The share of the budget recalled turns may take from the recent turns, never from their K.
 */
const RecallTokenBudget = Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThan(1)).annotations({
  description: "a share from 0 to below 1"
})

/**
 * The share of the budget for the facts about the conversation's user, or for the list of the
 * user's recent conversations. Only a conversation with a user has them.
 */
const UserShare = Schema.Number.pipe(Schema.greaterThanOrEqualTo(0), Schema.lessThan(1)).annotations({
  description: "a share from 0 to below 1"
})

/**
 * The settings of a context, each under its one name.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContextSettings = Schema.Struct({
  tokenBudget: TokenBudget,
  kRawTurns: KRawTurns,
  view: View,
  recall: RecallMode,
  recallTokenBudget: RecallTokenBudget,
  userFactsTokenBudget: UserShare,
  digestTokenBudget: UserShare
})

/**
 * The settings of a context, as the `ContextSettings` schema decodes them.
 *
 * @since 0.1.0
 * @category models
 */
export type ContextSettings = typeof ContextSettings.Type

/**
 * The defaults.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: ContextSettings = {
  tokenBudget: 3000,
  kRawTurns: 3,
  view: "full",
  recall: "lexical",
  recallTokenBudget: 0.25,
  userFactsTokenBudget: 0.2,
  digestTokenBudget: 0.05
}

/**
 * The settings a conversation (`setSettings`) or a call may set for itself, each optional. An
 * absent one is the strategy's.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Overrides = Schema.Struct({
  tokenBudget: Schema.optionalWith(TokenBudget, { exact: true }),
  kRawTurns: Schema.optionalWith(KRawTurns, { exact: true }),
  view: Schema.optionalWith(View, { exact: true })
})

/**
 * The overrides as they are passed along. A field may also be present and `undefined`: unset.
 *
 * @since 0.1.0
 * @category models
 */
export type Overrides = { readonly [K in keyof typeof Overrides.Type]?: typeof Overrides.Type[K] | undefined }
