/**
 * Per-conversation settings: overrides of the memory's defaults that an application stores with
 * one conversation (a larger budget for one customer, the stable view for one agent), and the
 * strategy that writes its memory.
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
 * The overrides of one conversation. Every field is optional: an absent field means "use the
 * layer's default", so the empty settings leave the conversation on the defaults.
 *
 * @since 0.1.0
 * @category schemas
 */
export class ConversationSettings extends Schema.Class<ConversationSettings>("ConversationSettings")({
  /** The budget, K and view of the conversation's contexts (`ContextSettings`). */
  ...Overrides.fields,
  /**
   * The strategy that writes the conversation's memory (its summary state, facts or none), as
   * its writer recorded it: a record, not an override. The service builds every context with the
   * strategy of its own layer; a tool that opens a stored conversation (the command line's
   * `context` and `inspect`) builds it with this one, so that it reads the summary state the way
   * it was written.
   */
  strategy: Schema.optionalWith(StrategyName, { exact: true }),
  /**
   * The system prompts the conversation was given after its leading system messages, oldest first
   * (`ChatMemoryService.setSystemPrompt`, which `ChatTurn` calls when its `system` changes). The
   * last is the current one: contexts show it in place of the leading system messages. Each turn
   * was told the one in effect when it was said (`since`).
   */
  systemPrompts: Schema.optionalWith(Schema.Array(SystemPrompt), { exact: true })
}) {}
