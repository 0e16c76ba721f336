/**
 * A record other than a conversation that does not exist.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * No `entity` with this `id` exists, e.g. a summarization record or a skill.
 *
 * @since 0.1.0
 * @category errors
 */
export class EntityNotFoundError extends Schema.TaggedError<EntityNotFoundError>()("EntityNotFoundError", {
  entity: Schema.String,
  id: Schema.String
}) {
  override get message(): string {
    return `${this.entity} not found: ${JSON.stringify(this.id)}`
  }
}
