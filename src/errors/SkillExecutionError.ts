/**
 * A failure of a model skill (summarize, extract facts).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The skill `skillId` failed. `reason` tells the kind of failure; `retryable` whether trying again
 * may help (rate limits, server errors, timeouts).
 *
 * @since 0.1.0
 * @category errors
 */
export class SkillExecutionError extends Schema.TaggedError<SkillExecutionError>()("SkillExecutionError", {
  skillId: Schema.String,
  reason: Schema.Literal("Unavailable", "RateLimited", "Timeout", "MalformedOutput", "EmptyOutput", "Unknown"),
  retryable: Schema.Boolean,
  detail: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    const detail = this.detail === undefined ? "" : `: ${this.detail}`
    return `Skill ${this.skillId} failed (${this.reason}${this.retryable ? ", retryable" : ""})${detail}`
  }
}
