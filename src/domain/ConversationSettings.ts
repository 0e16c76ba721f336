/**
 * Per-conversation settings: overrides of the memory's defaults that an application stores with
 * one conversation, and the strategy that writes its memory.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Overrides } from "./ContextSettings.js"
import { MaxContentLength } from "./internal/messageLimits.js"

/** A system prompt the conversation was given, from `since` on, and its tokens. */
const SystemPrompt = Schema.Struct({
  text: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(MaxContentLength)),
  since: Schema.DateTimeUtc,
  tokenCount: Schema.NonNegativeInt
})

/**
 * The built-in strategies, by the name each reports (`MemoryManagementStrategy.name`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const StrategyName = Schema.Literal("noop", "sliding-window", "summarization", "hierarchical")

/**
 * The name of a built-in strategy.
 *
 * @since 0.1.0
 * @category models
 */
export type StrategyName = typeof StrategyName.Type

/**
 * The overrides of one conversation. Every field is optional, and an absent field means the
 * layer's default.
 *
 * @since 0.1.0
 * @category schemas
 */
export class ConversationSettings extends Schema.Class<ConversationSettings>("ConversationSettings")({
  /** The budget, K and view of the conversation's contexts (`ContextSettings`). */
  ...Overrides.fields,
  /**
   * The strategy that writes the conversation's memory, as its writer recorded it. It is a
   * record, not an override: the service builds every context with its own layer's strategy. A
   * tool that opens a stored conversation, such as the command line's `context`, uses this one. It
   * then reads the summary state the way it was written.
   */
  strategy: Schema.optionalWith(StrategyName, { exact: true }),
  /**
   * The system prompts given after the leading system messages, oldest first
   * (`ChatMemoryService.setSystemPrompt`). `ChatTurn` sets one when its `system` changes. The last
   * is current: contexts show it in place of the leading system messages. Each turn was told the
   * one in effect when it was said (`since`).
   */
  systemPrompts: Schema.optionalWith(Schema.Array(SystemPrompt), { exact: true })
}) {}
