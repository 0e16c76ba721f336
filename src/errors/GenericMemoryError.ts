/**
 * A failure of the memory that no more specific error describes.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The memory failed during `operation` for a reason no other error tag describes.
 *
 * @since 0.1.0
 * @category errors
 */
export class GenericMemoryError extends Schema.TaggedError<GenericMemoryError>()("GenericMemoryError", {
  operation: Schema.String,
  detail: Schema.String,
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    return `${this.operation} failed: ${this.detail}`
  }
}
