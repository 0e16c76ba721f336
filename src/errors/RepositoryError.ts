/**
 * A failure of the store.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The store failed during `operation` (connection lost, constraint violated, rows that do not
 * decode, …). Nothing of a failed write was applied; callers may retry.
 *
 * @since 0.1.0
 * @category errors
 */
export class RepositoryError extends Schema.TaggedError<RepositoryError>()("RepositoryError", {
  /** The repository operation that failed, e.g. `appendMessages`. */
  operation: Schema.String,
  conversationId: Schema.optional(Schema.String),
  /** What went wrong, when the store could tell (e.g. `connection refused`, `authentication failed`). */
  detail: Schema.optional(Schema.String),
  cause: Schema.optional(Schema.Defect)
}) {
  override get message(): string {
    const where = this.conversationId === undefined ? "" : ` (conversation ${JSON.stringify(this.conversationId)})`
    const detail = this.detail === undefined ? "" : `: ${this.detail}`
    return `Store failure during ${this.operation}${where}${detail}`
  }
}
