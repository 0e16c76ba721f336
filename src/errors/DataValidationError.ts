/**
 * Bad input: refused before anything is stored.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * An input was refused. `path` names the bad field (`messages[2].content`,
 * `options.limit`, `conversationId`); nothing of the call was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class DataValidationError extends Schema.TaggedError<DataValidationError>()("DataValidationError", {
  /** The public method that refused the input. */
  operation: Schema.String,
  /** The path of the bad field, as written in the caller's input. */
  path: Schema.String,
  /** What is wrong with it. */
  reason: Schema.String
}) {
  override get message(): string {
    return `${this.operation}: invalid ${this.path}: ${this.reason}`
  }
}
