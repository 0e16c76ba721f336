/**
 * What the memory of one conversation holds and costs: the figures `ChatMemoryService.stats`
 * reports.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { ConversationId } from "./ConversationId.js"

/**
 * A conversation's figures. `compressionRatio` is the tokens stored over the tokens the context
 * takes now. `lagTokens` are the tokens after the summary cursor, the buffer.
 *
 * @since 0.1.0
 * @category schemas
 */
export class ConversationStats extends Schema.Class<ConversationStats>("ConversationStats")({
  conversationId: ConversationId,
  strategy: Schema.String,
  messagesStored: Schema.NonNegativeInt,
  tokensStored: Schema.NonNegativeInt,
  contextTokens: Schema.NonNegativeInt,
  compressionRatio: Schema.Number,
  summarizations: Schema.NonNegativeInt,
  summarizerInputTokens: Schema.NonNegativeInt,
  summarizerOutputTokens: Schema.NonNegativeInt,
  /** Summarizations whose summary passed its cap even when asked again, so it was cut at a sentence. */
  summariesTruncated: Schema.NonNegativeInt,
  summarizedUpTo: Schema.NonNegativeInt,
  turnsShown: Schema.NonNegativeInt,
  turnsOmitted: Schema.NonNegativeInt,
  messagesOmitted: Schema.NonNegativeInt,
  lagMessages: Schema.NonNegativeInt,
  lagTokens: Schema.NonNegativeInt,
  /** Contexts `getContext` built for this conversation since the service started in this process. */
  contextsBuilt: Schema.NonNegativeInt,
  /**
   * How many of those changed the prompt's prefix (`MemoryContext.prefixVersion`), the first
   * context included. Each is a miss of a provider's prefix cache. The `stable` view changes it on
   * folds only.
   */
  prefixChanges: Schema.NonNegativeInt
}) {}
